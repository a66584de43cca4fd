#pragma once
// Datasheet peaks of known GPUs, looked up by the name the driver reports (cuDeviceGetName,
// nvidia-smi): the denominator of MFU (llm/metrics.h) and the roofline's peaks (tools/roofline.py,
// tools/gpu_check.sh reads them from `lazygrad devices`).
#include <optional>
#include <string>
#include <string_view>

namespace lg {

struct GpuPeaks {
  const char* model;   // the entry that matched, e.g. "H100 SXM"
  double bf16_flops;   // dense bfloat16/float16 tensor-core FLOP/s (no sparsity)
  double fp32_flops;   // float32 FLOP/s on the CUDA cores (lazygrad's float32 kernels use no TF32)
  double bytes_per_s;  // device memory bandwidth
};

// The peaks of the GPU named `name` (e.g. "NVIDIA H100 80GB HBM3"), nullopt for a GPU not in the
// table. Variants are told apart by what their names carry: "PCIe", "NVL", "40GB".
std::optional<GpuPeaks> gpu_peaks(std::string_view name);

// The line `lazygrad devices` prints for a GPU (tools/gpu_check.sh parses it):
//   "gpu: NVIDIA H100 80GB HBM3, H100 SXM peaks: 989 TFLOP/s bf16, 67.0 TFLOP/s fp32, 3350 GB/s"
//   "gpu: NAME, peaks not known (MFU assumes an H200's; give train --peak-tflops)"
std::string describe_gpu(std::string_view name);

}  // namespace lg
