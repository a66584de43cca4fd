#include "runtime/hipcc.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "base/error.h"
#include "runtime/file_text.h"

namespace lg {
namespace {

std::string first_line_of(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, p))
      if (out.empty() && std::string(buf).find("version") != std::string::npos) out = buf;
    pclose(p);
  }
  return out;
}

}  // namespace

bool hipcc_available() { return std::system("command -v hipcc >/dev/null 2>&1") == 0; }

HipccCompiler::HipccCompiler(std::vector<std::string> archs) {
  LG_USER_CHECK(hipcc_available(), "HIP: hipcc is not on PATH (install ROCm, or Debian's hipcc package)");
  flags_ = "--genco -O3 -std=c++17 -ffp-contract=off";
  for (const std::string& a : archs) {
    LG_USER_CHECK(std::regex_match(a, std::regex("gfx[0-9a-f]+")), "HIP architecture \"", a, "\" is not of the form gfx90a");
    flags_ += " --offload-arch=" + a;
  }
  // The clang hipcc drives names the compiler's version.
  key_ = "hipcc " + flags_ + " " + first_line_of("hipcc --version 2>/dev/null");
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
