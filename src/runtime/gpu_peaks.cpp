#include "runtime/gpu_peaks.h"

#include <cstdio>

namespace lg {
namespace {

struct Entry {
  // The name must contain `has` and, where given, `also`, and must not contain `not_`.
  std::string_view has, also, not_;
  GpuPeaks peaks;
};

// Vendor datasheets (dense, without sparsity). The first entry that matches wins, so a variant
// comes before its family's plain entry.
constexpr Entry kTable[] = {
    {"GH200", "", "", {"GH200", 989e12, 67e12, 4.0e12}},
    {"H200", "NVL", "", {"H200 NVL", 835e12, 60e12, 4.8e12}},
    {"H200", "", "", {"H200", 989e12, 67e12, 4.8e12}},
    {"H100", "NVL", "", {"H100 NVL", 835e12, 60e12, 3.9e12}},
    {"H100", "PCIe", "", {"H100 PCIe", 756e12, 51e12, 2.0e12}},
    {"H100", "", "", {"H100 SXM", 989e12, 67e12, 3.35e12}},
    {"A100", "40GB", "", {"A100 40GB", 312e12, 19.5e12, 1.555e12}},
    {"A100", "PCIe", "", {"A100 80GB PCIe", 312e12, 19.5e12, 1.935e12}},
    {"A100", "", "", {"A100 80GB", 312e12, 19.5e12, 2.039e12}},
    {"L40S", "", "", {"L40S", 362e12, 91.6e12, 0.864e12}},
    {"L4", "", "L40", {"L4", 121e12, 30.3e12, 0.3e12}},
};

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

}  // namespace

std::optional<GpuPeaks> gpu_peaks(std::string_view name) {
  for (const Entry& e : kTable) {
    if (!contains(name, e.has)) continue;
    if (!e.also.empty() && !contains(name, e.also)) continue;
    if (!e.not_.empty() && contains(name, e.not_)) continue;
    return e.peaks;
  }
  return std::nullopt;
}

std::string describe_gpu(std::string_view name) {
  std::string line = "gpu: " + std::string(name) + ", ";
  std::optional<GpuPeaks> p = gpu_peaks(name);
  if (!p) return line + "peaks not known (MFU assumes an H200's; give train --peak-tflops)";
  char peaks[160];
  std::snprintf(peaks, sizeof peaks, "%s peaks: %.0f TFLOP/s bf16, %.1f TFLOP/s fp32, %.0f GB/s", p->model,
                p->bf16_flops / 1e12, p->fp32_flops / 1e12, p->bytes_per_s / 1e9);
  return line + peaks;
}

}  // namespace lg
