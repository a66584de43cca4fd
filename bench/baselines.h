#pragma once
// What lazygrad's CPU kernels are compared against, measured in the same process:
//  - OpenBLAS cblas_sgemm for matmul (Debian libopenblas0, AVX-512 kernels);
//  - a triad a[i] = b[i] + s*c[i] and a memcpy for memory bandwidth, on lg::threads() threads.
#include <cstdint>
#include <string>

namespace lg::bench {

// OpenBLAS, loaded with dlopen. OpenBLAS picks its kernels in its load-time constructor from
// OPENBLAS_CORETYPE, or by CPUID when unset. The environment this project runs in sets
// OPENBLAS_CORETYPE=Haswell (and OPENBLAS_L2_SIZE), which pins it to AVX2 kernels at half speed, and
// Debian's 0.3.21 does not know recent CPU models (Intel family 6 model 207 falls back to Prescott,
// SSE3, 5x slower than AVX-512). So the variables are set right before the dlopen:
//   core "auto":   SkylakeX (its AVX-512 sgemm kernels, as Cooperlake's) when the CPU has AVX-512F,
//                  otherwise unset (CPUID detection);
//   core "detect": unset (CPUID detection);
//   any other:     that name (OpenBLAS warns and detects when it does not know it).
// Loading at run time also keeps OpenBLAS (and its thread pool) out of every other command.
// A missing library is a user error that says which package to install. Load once per process.
struct OpenBlas {
  std::string corename;   // openblas_get_corename() after loading: "SkylakeX", "Haswell"...
  std::string requested;  // what OPENBLAS_CORETYPE was set to ("" = unset)
  std::string config;     // openblas_get_config(): version and build options
  int threads = 0;
  // c (m x n) = a (m x k) @ b (k x n), all row-major float32.
  void sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) const;
};
OpenBlas load_openblas(const std::string& core);

// a[i] = b[i] + s * c[i] for i < n, split over the thread pool. Moves 3 * n * 4 bytes.
void triad(float* a, const float* b, const float* c, float s, int64_t n);
// dst = src (nbytes), split over the thread pool. Moves 2 * nbytes.
void parallel_memcpy(void* dst, const void* src, int64_t nbytes);

}  // namespace lg::bench
