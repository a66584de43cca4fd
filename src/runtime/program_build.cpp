#include "runtime/program_build.h"

#include <cstdio>
#include <mutex>

#include "base/config.h"
#include "ir/attention.h"
#include "runtime/beam.h"
#include "runtime/disk_cache.h"

namespace lg {

BuiltProgram build_program(Device& dev, const LinearProgram& prog) {
  BuiltProgram out;
  std::string source;
  std::vector<uint8_t> binary;
  if (const Renderer* r = dev.renderer()) {
    source = r->render(prog);
    if (config().debug >= 4) std::fprintf(stderr, "=== %s source ===\n%s\n", prog.name.c_str(), source.c_str());
    std::string key = dev.compiler()->key() + "\n" + source;
    if (auto hit = cache_get("kernels", key)) {
      binary = std::move(*hit);
    } else {
      binary = dev.compiler()->compile(source);
      out.compiled = true;
      cache_put("kernels", key, binary);
    }
  }
  out.program = dev.load(prog, source, binary);
  return out;
}

std::vector<Opt> choose_opts(Device& dev, const ScheduleItem& item) {
  if (config().noopt || !dev.renderer()) return {};
  if (is_attention_kernel(item.ast)) return dev.heuristic_opts(item.ast);  // hand-written: nothing to search
  if (config().beam > 0)
    if (std::unique_ptr<BeamSpace> space = dev.beam_space(item.ast)) return beam_search(dev, item, *space, config().beam);
  if (config().beam > 0) {
    static std::once_flag once;
    std::call_once(once, [&] { std::fprintf(stderr, "BEAM is not supported on %s yet: using its heuristic\n", dev.name().c_str()); });
  }
  return dev.heuristic_opts(item.ast);
}

}  // namespace lg
