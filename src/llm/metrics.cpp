#include "llm/metrics.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>

#include "base/error.h"
#include "runtime/device.h"
#include "runtime/gpu_peaks.h"

namespace lg::llm {

double default_peak_flops(const std::string& device, DType compute) {
  bool bf16 = compute == dtypes::bfloat16 || compute == dtypes::float16;
  if (device.rfind("CUDA", 0) == 0) {
    // a GPU by its name; CUDACHECK and CUDANULL (no GPU) model the default target, an H200
    std::string gpu = get_device(device).hardware();
    std::optional<GpuPeaks> p = gpu_peaks(gpu.empty() ? "H200" : gpu);
    if (!p) {
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true))
        std::fprintf(stderr,
                     "lazygrad: warning: MFU: the peaks of %s (%s) are not known; an H200's are assumed (989 "
                     "TFLOP/s bf16, 67 float32): give train --peak-tflops\n",
                     device.c_str(), gpu.c_str());
      p = gpu_peaks("H200");
    }
    return bf16 ? p->bf16_flops : p->fp32_flops;
  }
  double cores = std::max(1u, std::thread::hardware_concurrency());
  return cores * 4.2e9 * 64 * (bf16 ? 2 : 1);
}

MetricsFile::MetricsFile(const std::string& path, bool append) : path_(path) {
  if (path.empty()) return;
  f_ = std::fopen(path.c_str(), append ? "a" : "w");
  LG_USER_CHECK(f_ != nullptr, "cannot open metrics file ", path, ": ", std::strerror(errno),
                "; check the directory exists and is writable");
}

MetricsFile::~MetricsFile() {
  if (f_) std::fclose(f_);
}

void MetricsFile::write(const nlohmann::json& record) {
  if (!f_) return;
  std::string line = record.dump() + "\n";
  LG_USER_CHECK(std::fwrite(line.data(), 1, line.size(), f_) == line.size() && std::fflush(f_) == 0,
                "cannot write metrics file ", path_, ": ", std::strerror(errno));
}

}  // namespace lg::llm
