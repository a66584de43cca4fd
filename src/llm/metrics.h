#pragma once
// Training metrics: MFU and a JSON-lines metrics file.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/dtype.h"

namespace lg::llm {

// Peak dense FLOP/s of a device for a compute dtype, the denominator of MFU:
//   CPU / INTERP: cores x 4.2 GHz x 64 float32 FLOP per cycle (two 16-lane AVX-512 FMA pipes), twice
//                 that for bfloat16 (vdpbf16ps) -- this machine's measured ceilings (bench/BASELINE.md)
//   CUDA:         the GPU's datasheet peaks by its name (runtime/gpu_peaks.h; an H100 SXM or H200: 989
//                 TFLOP/s dense bfloat16, 67 TFLOP/s float32); a GPU not in that table, and the
//                 compile checks CUDACHECK and CUDANULL, get an H200's (the former with a warning)
// A flag (train --peak-tflops) overrides it.
double default_peak_flops(const std::string& device, DType compute);

// Appends one JSON object per line to a file, flushed per line so a crash keeps what was written.
// A path of "" writes nothing.
class MetricsFile {
 public:
  explicit MetricsFile(const std::string& path, bool append = false);
  ~MetricsFile();
  MetricsFile(const MetricsFile&) = delete;
  MetricsFile& operator=(const MetricsFile&) = delete;
  void write(const nlohmann::json& record);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
};

}  // namespace lg::llm
