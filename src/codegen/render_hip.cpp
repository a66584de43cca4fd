#include "codegen/render_hip.h"

#include "base/error.h"
#include "codegen/render_gpu.h"

namespace lg {

// The contract of codegen/render_gpu.h. lg_f_to_bf16 is c_prelude.h's: NaN stays a quiet NaN with
// its sign, everything else rounds to nearest even.
const char* const kHipPrelude = R"HIP(#include <hip/hip_runtime.h>
#include <stdint.h>
typedef unsigned short lg_bf16_t;
typedef _Float16 lg_f16_t;
__device__ __forceinline__ float lg_bf16_to_f(lg_bf16_t b) { return __uint_as_float((uint32_t)b << 16); }
__device__ __forceinline__ lg_bf16_t lg_f_to_bf16(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (lg_bf16_t)((u >> 16) | 0x0040u);
  return (lg_bf16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
__device__ __forceinline__ float lg_f16_to_f(lg_f16_t x) { return (float)x; }
__device__ __forceinline__ lg_f16_t lg_f_to_f16(float x) { return (lg_f16_t)x; }
__device__ __forceinline__ unsigned short lg_bf16_bits(lg_bf16_t x) { return x; }
__device__ __forceinline__ lg_bf16_t lg_bits_bf16(unsigned short b) { return b; }
__device__ __forceinline__ unsigned short lg_f16_bits(lg_f16_t x) { return __builtin_bit_cast(unsigned short, x); }
__device__ __forceinline__ lg_f16_t lg_bits_f16(unsigned short b) { return __builtin_bit_cast(lg_f16_t, b); }
/* Opt ATOMIC's adds (codegen/atomic_scatter.h). Floats by unsafeAtomicAdd: the hardware's add
   (global_atomic_add_f32) on gfx90a too, where atomicAdd is a compare-and-swap loop; "unsafe" only
   for fine-grained host memory, which kernels are never given. */
__device__ __forceinline__ void lg_atomic_add(float* p, float v) { unsafeAtomicAdd(p, v); }
__device__ __forceinline__ void lg_atomic_add(double* p, double v) { unsafeAtomicAdd(p, v); }
__device__ __forceinline__ void lg_atomic_add(int32_t* p, int32_t v) { atomicAdd(p, v); }
)HIP";

// No warp shuffles: AMD wavefronts have 64 lanes and ROCm 5 has no __shfl_xor_sync. No tensor cores:
// WMMA and BLOCK_MMA are NVIDIA's mma.sync (AMD's matrix instructions differ); the HIP heuristic
// never applies TC or BLOCK_MMA.
std::string HipRenderer::render(const LinearProgram& prog) const {
  for (const NodeRef& n : prog.ops)
    LG_CHECK(n->op != Op::WMMA && n->op != Op::BLOCK_MMA, prog.name,
             ": the HIP renderer has no tensor cores (Opts TC and BLOCK_MMA are CUDA only)");
  for (const NodeRef& n : prog.ops)
    LG_USER_CHECK(n->op != Op::ATTENTION, prog.name, ": the HIP renderer has no attention kernel (its CUDA one ",
                  "shuffles in 32-lane warps); build attention from matmul and softmax on HIP (FLASH_ATTENTION=0)");
  return render_gpu_kernel(prog, kHipPrelude, false);
}

}  // namespace lg
