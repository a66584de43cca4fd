#include "runtime/c_batch.h"

#include "base/error.h"
#include "codegen/render_c.h"

namespace lg {
namespace {

constexpr const char* kEntry = "void lg_kernel(";

// The source's own part (from its name comment on), or npos when it is not batchable.
size_t own_part(const std::string& source) {
  const std::string& p = c_kernel_prelude();
  if (source.compare(0, p.size(), p) != 0 || source.compare(p.size(), 3, "/* ") != 0)
    return std::string::npos;
  size_t entry = source.find(kEntry, p.size());
  if (entry == std::string::npos || source.find(kEntry, entry + 1) != std::string::npos)
    return std::string::npos;
  // only the name comment between the prelude and the function
  size_t comment_end = source.find(" */\n", p.size());
  return comment_end != std::string::npos && comment_end + 4 == entry ? p.size() : std::string::npos;
}

}  // namespace

bool c_batchable(const std::string& source) { return own_part(source) != std::string::npos; }

std::string c_batch_entry(size_t i) { return str("lg_kernel_", i); }

std::string c_batch_source(const std::vector<std::string>& sources) {
  std::string out = c_kernel_prelude();
  for (size_t i = 0; i < sources.size(); i++) {
    size_t own = own_part(sources[i]);
    LG_CHECK(own != std::string::npos, "C batch: source ", i,
             " is not a C renderer kernel without helpers of its own");
    std::string part = sources[i].substr(own);
    size_t entry = part.find(kEntry);
    part.replace(entry, std::string(kEntry).size(), str("void ", c_batch_entry(i), "("));
    out += part;
  }
  return out;
}

}  // namespace lg
