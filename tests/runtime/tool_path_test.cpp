// Finding tools on PATH without a shell, and a tool's version output run once per version of the
// executable (runtime/tool_path.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/config.h"
#include "common/cache_dir.h"
#include "runtime/file_text.h"
#include "runtime/tool_path.h"

namespace lg {
namespace {

namespace fs = std::filesystem;

// A temporary folder first on PATH for the test's lifetime.
class ToolDir {
 public:
  ToolDir() : dir_(fs::temp_directory_path() / ("lg-tools-" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    old_path_ = std::getenv("PATH") ? std::getenv("PATH") : "";
    setenv("PATH", (dir_.string() + ":" + old_path_).c_str(), 1);
  }
  ~ToolDir() {
    setenv("PATH", old_path_.c_str(), 1);
    fs::remove_all(dir_);
  }
  // Writes an executable shell script: it appends a line to runs.log and prints `text`.
  std::string script(const std::string& name, const std::string& text, bool executable = true) {
    fs::path p = dir_ / name;
    std::ofstream(p) << "#!/bin/sh\necho run >> " << (dir_ / "runs.log").string() << "\necho '" << text
                     << "'\n";
    chmod(p.c_str(), executable ? 0755 : 0644);
    return p.string();
  }
  int runs() const {
    std::string log = read_file_text((dir_ / "runs.log").string());
    int n = 0;
    for (char c : log) n += c == '\n';
    return n;
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
  std::string old_path_;
};

TEST(ToolPath, FindsTheFirstExecutableOnPath) {
  ToolDir tools;
  std::string mine = tools.script("lg-test-tool", "x");
  EXPECT_EQ(find_on_path("lg-test-tool"), mine);
  EXPECT_EQ(find_on_path(mine), mine);  // a path is checked as it is
  EXPECT_EQ(find_on_path("lg-no-such-tool-anywhere"), "");
  EXPECT_EQ(find_on_path(""), "");
  tools.script("lg-test-plain", "x", /*executable=*/false);
  EXPECT_EQ(find_on_path("lg-test-plain"), "");  // not executable: not a tool
  fs::create_directories(tools.dir() / "lg-test-dir");
  EXPECT_EQ(find_on_path("lg-test-dir"), "");  // a directory is not a tool
  EXPECT_EQ(find_on_path("sh").substr(find_on_path("sh").size() - 3), "/sh");
}

TEST(ToolPath, OutputIsRunOncePerVersionOfTheExecutable) {
  ToolDir tools;
  testing_util::CacheDir cache;
  std::string path = tools.script("lg-test-cc", "lg-test-cc version 1.0");
  EXPECT_EQ(tool_output("lg-test-cc", "--version"), "lg-test-cc version 1.0\n");
  EXPECT_EQ(tool_output("lg-test-cc", "--version"), "lg-test-cc version 1.0\n");
  EXPECT_EQ(tools.runs(), 1);  // the second answer came from the disk cache
  // a reinstalled tool (other bytes, a later time) is run again
  tools.script("lg-test-cc", "lg-test-cc version 2.0.1");
  fs::last_write_time(path, fs::last_write_time(path) + std::chrono::seconds(5));
  EXPECT_EQ(tool_output("lg-test-cc", "--version"), "lg-test-cc version 2.0.1\n");
  EXPECT_EQ(tools.runs(), 2);
  // other arguments are another entry
  EXPECT_EQ(tool_output("lg-test-cc", "-v"), "lg-test-cc version 2.0.1\n");
  EXPECT_EQ(tools.runs(), 3);
  // a command line (a wrapper and its compiler) and CACHE=0 run every time
  EXPECT_EQ(tool_output("sh " + path, "--version"), "lg-test-cc version 2.0.1\n");
  EXPECT_EQ(tools.runs(), 4);
  config().cache = false;
  EXPECT_EQ(tool_output("lg-test-cc", "--version"), "lg-test-cc version 2.0.1\n");
  config().cache = true;
  EXPECT_EQ(tools.runs(), 5);
}

}  // namespace
}  // namespace lg
