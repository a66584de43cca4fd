#pragma once
// `lazygrad bench matmul`: square matmuls on any device and dtype (the GPU check times bf16 on
// CUDA with it, tools/gpu_check.sh). One line per size:
//   matmul <device> <dtype> N=<n> [a=X^T] [b=W^T] ms=<mean ms> tflops=<TFLOP/s> tensor_cores=<yes|no>
//          kernel=<block|tc|no> check=<ok|FAIL|none> max_rel_err=<e>
// (kernel: a block-tiled tensor-core matmul, Opt TC's, or neither: codegen/block_mma.h)
// The check compares 64 sampled entries with float64 sums over the inputs read back; a FAIL
// line is followed by a non-zero exit.
// Runs on a GPU are asynchronous: each timed run is `repeats` back-to-back products followed by a
// read of one element, which waits for all of them.
#include <string>
#include <vector>

namespace lg {
class Tensor;
}

namespace lg::bench {

struct DeviceMatmulOptions {
  std::string device = "CUDA";
  std::string dtype = "bf16";  // bf16, fp16 or fp32
  std::vector<int64_t> sizes = {4096, 8192};
  int repeats = 5;
  bool a_transposed = false;  // a = X^T of a row-major X (dY^T @ X: a weight gradient)
  bool b_transposed = false;  // b = W^T of a row-major W (x @ W^T, as nn::Linear multiplies)
  bool probe = false;         // the structured products of bench/matmul_probe.h instead of timings
};

void run_device_matmul(const DeviceMatmulOptions& o);

// How the device's heuristic puts the kernels of t on tensor cores: "block" (some kernel gets Opt
// BLOCK_MMA, codegen/block_mma.h), "tc" (Opt TC, codegen/tensor_core.h) or "no" (CUDA, bf16/fp16,
// TC=1 only).
const char* tensor_core_kind(const Tensor& t);

}  // namespace lg::bench
