#pragma once
// The --dtype of the device benchmarks (bench matmul, bench attention): bf16, fp16 or fp32.
#include <string>

#include "base/error.h"
#include "ir/dtype.h"

namespace lg::bench {

inline DType device_bench_dtype(const std::string& name, const std::string& bench) {
  if (name == "bf16") return dtypes::bfloat16;
  if (name == "fp16") return dtypes::float16;
  if (name == "fp32") return dtypes::float32;
  user_error("bench ", bench, ": --dtype must be bf16, fp16 or fp32, got ", name);
}

}  // namespace lg::bench
