#pragma once
// `lazygrad bench kernels`: lazygrad's generated CPU kernels against baselines measured in the same
// run (bench/baselines.h). Prints one table line per measurement: lazygrad time and rate, the
// baseline's rate and the ratio. Performance targets are not asserted here (docs/performance.md).
#include <cstdint>
#include <string>
#include <vector>

namespace lg::bench {

// (m x k) @ (k x n), float32.
struct MatmulShape {
  int64_t m = 0, k = 0, n = 0;
};
// "N" (square N x N @ N x N) or "MxKxN" ((M x K) @ (K x N)); anything else is a user error.
MatmulShape parse_matmul_shape(const std::string& s);

struct KernelBenchOptions {
  std::vector<MatmulShape> matmuls;  // matmul shapes, in order
  double mib = 64;                   // size of each bandwidth array (add, softmax, triad, memcpy)
  int64_t softmax_cols = 1024;       // row length of the softmax; rows fill `mib`
  int warmup = 2;                    // untimed runs first (the first one compiles)
  int repeats = 5;                   // timed runs; the median is reported
  double budget_s = 20;              // stop timing a line after this many seconds (at least 1 run)
  std::string only;                  // "", "matmul", "add" or "softmax"
  std::string blas_core = "auto";    // OpenBLAS kernels: "auto", "detect" or a core name (baselines.h)
};

// The default (issue 3): square 1024, 2048, 4096; Llama-like (8192x512)x(512x1536) and
// (2048x512)x(512x32000); 64 MiB for bandwidth. quick: tiny sizes for a smoke test (seconds).
KernelBenchOptions default_kernel_bench(bool quick);

// Runs the selected benchmarks on the CPU device and prints the table to stdout.
void run_kernel_bench(const KernelBenchOptions& o);

}  // namespace lg::bench
