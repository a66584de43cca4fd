#include "runtime/tool_path.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "base/error.h"
#include "runtime/disk_cache.h"

namespace lg {
namespace {

bool is_executable_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::string run_command(const std::string& cmd) {
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[512];
    size_t n = 0;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

}  // namespace

std::string find_on_path(const std::string& exe) {
  if (exe.empty()) return "";
  if (exe.find('/') != std::string::npos) return is_executable_file(exe) ? exe : "";
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + exe;
    if (is_executable_file(candidate)) return candidate;
    if (colon == std::string_view::npos) return "";
    rest.remove_prefix(colon + 1);
  }
}

std::string tool_output(const std::string& exe, const std::string& args) {
  const std::string cmd = exe + " " + args + " 2>&1";
  std::string found = exe.find(' ') == std::string::npos ? find_on_path(exe) : "";
  if (found.empty()) return run_command(cmd);
  std::error_code ec;
  std::filesystem::path real = std::filesystem::canonical(found, ec);
  if (ec) return run_command(cmd);
  auto size = std::filesystem::file_size(real, ec);
  auto mtime = std::filesystem::last_write_time(real, ec);
  if (ec) return run_command(cmd);
  const std::string key = str(real.string(), " ", size, " ", mtime.time_since_epoch().count(), " ", args);
  if (std::optional<std::vector<uint8_t>> hit = cache_get("tools", key)) return {hit->begin(), hit->end()};
  std::string out = run_command(cmd);
  if (!out.empty()) cache_put("tools", key, {out.begin(), out.end()});
  return out;
}

}  // namespace lg
