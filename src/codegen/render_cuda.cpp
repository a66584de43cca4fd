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
)CUDA";

std::string CudaRenderer::render(const LinearProgram& prog) const { return render_gpu_kernel(prog, kCudaPrelude, true); }

}  // namespace lg
