#include "runtime/hip_batch.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "base/config.h"
#include "base/error.h"
#include "codegen/render_hip.h"
#include "runtime/disk_cache.h"
#include "runtime/file_text.h"
#include "runtime/hipcc.h"

namespace lg {
namespace {

// A recorded source; an unreadable one is a user error naming it.
std::string read_recorded(const std::filesystem::path& p) {
  std::string text = read_file_text(p.string());
  LG_USER_CHECK(!text.empty(), "HIP batch: cannot read the recorded source ", p.string());
  return text;
}

}  // namespace

std::string hip_record_dir() { return config().cache_dir + "/hip-sources"; }

void record_hip_source(const std::string& source) {
  // cache_path names a file by a 128-bit hash of its key: here the source itself
  std::filesystem::path path = cache_path("hip-sources", source) + ".hip";
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (std::filesystem::exists(path)) return;  // recorded by this or another test
  static std::atomic<uint64_t> serial{0};  // unique among this process's threads, the pid among processes
  std::string tmp = str(path.string(), ".tmp", getpid(), "-", serial++);
  bool ok = static_cast<bool>(std::ofstream(tmp, std::ios::binary) << source);
  LG_USER_CHECK(ok && std::rename(tmp.c_str(), path.c_str()) == 0, "HIPRECORD: cannot write ", path.string(),
                " (the kernel cache folder, LAZYGRAD_CACHE_DIR, must be writable)");
}

std::string hip_batch_source(const std::vector<std::string>& sources) {
  const std::string prelude = kHipPrelude;
  std::string out = prelude;
  for (size_t i = 0; i < sources.size(); i++) {
    const std::string& s = sources[i];
    LG_CHECK(s.compare(0, prelude.size(), prelude) == 0, "HIP batch: source ", i, " does not start with the HIP prelude");
    std::string own = s.substr(prelude.size());
    size_t entry = own.find(" lg_kernel(");
    LG_CHECK(entry != std::string::npos, "HIP batch: source ", i, " has no lg_kernel");
    own.replace(entry, 11, str(" lg_kernel_", i, "("));
    out += str("namespace lg_batch_", i, " {\n", own, "}  // namespace lg_batch_", i, "\n");
  }
  return out;
}

HipBatchResult compile_recorded_hip_sources(const std::string& dir, size_t batch_size, int jobs) {
  LG_USER_CHECK(batch_size >= 1 && jobs >= 1, "HIP batch: batch size and jobs must be at least 1");
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".hip") files.push_back(e.path());
  LG_USER_CHECK(!ec, "HIP batch: cannot read ", dir, ": ", ec.message());
  std::sort(files.begin(), files.end());  // the same batches every run
  HipccCompiler hipcc;
  std::vector<std::vector<std::filesystem::path>> batches;
  for (size_t i = 0; i < files.size(); i += batch_size)
    batches.emplace_back(files.begin() + i, files.begin() + std::min(files.size(), i + batch_size));
  std::atomic<size_t> next{0};
  std::mutex failing;  // one batch at a time compiles kernel by kernel to name the failing one
  auto worker = [&] {
    for (size_t b; (b = next++) < batches.size();) {
      std::vector<std::string> sources;
      for (const auto& f : batches[b]) sources.push_back(read_recorded(f));
      if (hipcc.try_compile(hip_batch_source(sources))) continue;
      std::lock_guard<std::mutex> lock(failing);
      for (size_t i = 0; i < sources.size(); i++) {
        if (hipcc.try_compile(sources[i])) continue;
        std::fprintf(stderr, "HIP batch: %s does not compile:\n", batches[b][i].c_str());
        hipcc.compile(sources[i]);  // its error: hipcc's message and the source
      }
      internal_error(__FILE__, __LINE__, str("HIP batch ", b, " of ", dir, " failed, yet each of its kernels compiles alone"));
    }
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < std::min<int>(jobs, static_cast<int>(batches.size())); j++) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  return {files.size(), batches.size()};
}

}  // namespace lg
