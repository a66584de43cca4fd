#include "codegen/render_cuda.h"

#include "codegen/render_gpu.h"

namespace lg {

// The contract of codegen/render_gpu.h. __float2bfloat16_rn and __float2half_rn round to nearest
// even with correct subnormals and overflow to infinity, as ir/scalar.cpp does; a NaN comes back as
// the canonical NaN (the CPU keeps its sign and payload: both are NaN).
const char* const kCudaPrelude = R"CUDA(#include <cuda_fp16.h>
#include <cuda_bf16.h>
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
typedef __nv_bfloat16 lg_bf16_t;
typedef __half lg_f16_t;
__device__ __forceinline__ float lg_bf16_to_f(lg_bf16_t x) { return __bfloat162float(x); }
__device__ __forceinline__ lg_bf16_t lg_f_to_bf16(float x) { return __float2bfloat16_rn(x); }
__device__ __forceinline__ float lg_f16_to_f(lg_f16_t x) { return __half2float(x); }
__device__ __forceinline__ lg_f16_t lg_f_to_f16(float x) { return __float2half_rn(x); }
__device__ __forceinline__ unsigned short lg_bf16_bits(lg_bf16_t x) { return __bfloat16_as_ushort(x); }
__device__ __forceinline__ lg_bf16_t lg_bits_bf16(unsigned short b) { return __ushort_as_bfloat16(b); }
__device__ __forceinline__ unsigned short lg_f16_bits(lg_f16_t x) { return __half_as_ushort(x); }
__device__ __forceinline__ lg_f16_t lg_bits_f16(unsigned short b) { return __ushort_as_half(b); }
/* Tensor cores (codegen/tensor_core.h; sm_80 and later). Two 16-bit values in one register, the
   first in the low half; one warp-wide mma.sync, called by all 32 lanes of the warp together. */
struct lg_mma_f32x4 { float x[4]; };
__device__ __forceinline__ uint32_t lg_pack_bf16x2(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi); /* one cvt.rn.bf16x2.f32; exact: lo, hi are bf16 */
  return *reinterpret_cast<uint32_t*>(&v);
}
__device__ __forceinline__ uint32_t lg_pack_f16x2(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}
#define LG_MMA_M16N8K16(name, type)                                                                    \
  __device__ __forceinline__ lg_mma_f32x4 name(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,     \
                                               uint32_t b0, uint32_t b1, float c0, float c1, float c2, \
                                               float c3) {                                             \
    lg_mma_f32x4 d;                                                                                    \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." type "." type ".f32 "                        \
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"                 \
                 : "=f"(d.x[0]), "=f"(d.x[1]), "=f"(d.x[2]), "=f"(d.x[3])                              \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2),    \
                   "f"(c3));                                                                           \
    return d;                                                                                          \
  }
LG_MMA_M16N8K16(lg_mma_m16n8k16_bf16, "bf16")
LG_MMA_M16N8K16(lg_mma_m16n8k16_f16, "f16")
/* Block-tiled matmuls (codegen/render_block_mma.h; sm_80 and later): 16-byte asynchronous copies
   from global to shared memory, and ldmatrix: four 8x8 16-bit matrices from shared memory, lanes
   8i..8i+7 giving the row addresses of matrix i (.trans: each matrix transposed). */
__device__ __forceinline__ uint32_t lg_smem_address(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void lg_cp_async16(void* s, const void* g) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(lg_smem_address(s)), "l"(g) : "memory");
}
__device__ __forceinline__ void lg_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void lg_cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }
__device__ __forceinline__ void lg_ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(lg_smem_address(p)) : "memory");
}
__device__ __forceinline__ void lg_ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(lg_smem_address(p)) : "memory");
}
)CUDA";

std::string CudaRenderer::render(const LinearProgram& prog) const { return render_gpu_kernel(prog, kCudaPrelude, true); }

}  // namespace lg
