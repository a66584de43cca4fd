#include "llm/metrics.h"

#include <cerrno>
#include <cstring>
#include <thread>

#include "base/error.h"

namespace lg::llm {

double default_peak_flops(const std::string& device, DType compute) {
  bool bf16 = compute == dtypes::bfloat16 || compute == dtypes::float16;
  if (device.rfind("CUDA", 0) == 0) return bf16 ? 989e12 : 67e12;
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
