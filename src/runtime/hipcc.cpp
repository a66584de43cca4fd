#include "runtime/hipcc.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "base/error.h"
#include "runtime/file_text.h"
#include "runtime/tool_path.h"

namespace lg {
namespace {

// The first line of text that names a version (hipcc --version prints several tools' lines).
std::string version_line(const std::string& text) {
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    std::string line = text.substr(at, end - at);
    if (line.find("version") != std::string::npos) return line;
    at = end;
  }
  return "";
}

}  // namespace

bool hipcc_available() { return !find_on_path("hipcc").empty(); }

HipccCompiler::HipccCompiler(std::vector<std::string> archs) {
  LG_USER_CHECK(hipcc_available(), "HIP: hipcc is not on PATH (install ROCm, or Debian's hipcc package)");
  flags_ = "--genco -O3 -std=c++17 -ffp-contract=off";
  for (const std::string& a : archs) {
    LG_USER_CHECK(std::regex_match(a, std::regex("gfx[0-9a-f]+")), "HIP architecture \"", a, "\" is not of the form gfx90a");
    flags_ += " --offload-arch=" + a;
  }
  // The clang hipcc drives names the compiler's version.
  key_ = "hipcc " + flags_ + " " + version_line(tool_output("hipcc", "--version"));
}

std::vector<uint8_t> HipccCompiler::run(const std::string& source, std::string* message, std::string* command) const {
  char dir[] = "/tmp/lazygrad-hip-XXXXXX";
  LG_CHECK(mkdtemp(dir) != nullptr, "cannot create a temporary folder for hipcc");
  std::string d = dir, src = d + "/kernel.hip", out = d + "/kernel.co", err = d + "/err.txt";
  std::ofstream(src) << source;
  *command = "hipcc " + flags_ + " " + src + " -o " + out + " > " + err + " 2>&1";
  int rc = std::system(command->c_str());
  std::string bytes = rc == 0 ? read_file_text(out) : "";
  *message = read_file_text(err);
  std::system(("rm -rf " + d).c_str());
  return {bytes.begin(), bytes.end()};
}

std::vector<uint8_t> HipccCompiler::compile(const std::string& source) const {
  std::string msg, cmd;
  std::vector<uint8_t> bytes = run(source, &msg, &cmd);
  if (bytes.empty()) internal_error(__FILE__, __LINE__, str("hipcc failed (", cmd, "):\n", msg, "\n--- source ---\n", source));
  return bytes;
}

bool HipccCompiler::try_compile(const std::string& source) const {
  std::string msg, cmd;
  return !run(source, &msg, &cmd).empty();
}

}  // namespace lg
