#pragma once
// The GPU C++ kernel writer shared by the CUDA and HIP renderers (render_cuda.h, render_hip.h):
// both dialects are C++ with __global__ kernels, blockIdx/threadIdx and the same math library, so
// one writer emits the body and each renderer supplies its prelude (includes, 16-bit float types).
//
// Every kernel is
//   extern "C" __global__ void __launch_bounds__(threads) lg_kernel(T0* data0, T1* data1, ...)
// with one pointer per DEFINE_GLOBAL slot (void*: an unused slot), launched with the grid and block
// of gpu_launch_dims (codegen/gpu_launch.h); GLOBAL, LOCAL and GROUP ranges are computed from the
// block and thread index, every other RANGE is a loop. Semantics are ir/scalar.cpp's, as in the C
// renderer: 16-bit floats are stored as their 16-bit types and computed in float, rounded to
// nearest even after every op; float to int casts saturate (NaN -> 0); MAX propagates NaN; integer
// division by zero gives 0; no FMA contraction (the compiler runs with --fmad=false or
// -ffp-contract=off) except MULACC, which is fmaf.
//
// The prelude must define, as __device__ functions, besides the integer types int8_t..uint64_t:
//   lg_bf16_t, lg_f16_t                  the memory types of bfloat16 and float16
//   lg_bf16_to_f, lg_f16_to_f            memory -> float (exact)
//   lg_f_to_bf16, lg_f_to_f16            float -> memory, round to nearest even
//   lg_bf16_bits, lg_f16_bits            memory -> its unsigned short bit pattern
//   lg_bits_bf16, lg_bits_f16            unsigned short bit pattern -> memory
// kGpuCommonPrelude (below) adds what does not depend on the dialect.
#include <string>

#include "codegen/program.h"

namespace lg {

// Device helpers in portable CUDA/HIP C++ (mirroring codegen/c_prelude.h); after the dialect's.
extern const char* const kGpuCommonPrelude;

// The kernel's source: dialect_prelude, kGpuCommonPrelude, then the kernel. warp_shuffle: the
// dialect has __shfl_xor_sync over 32-lane warps (CUDA), used to combine GROUPTOP reductions;
// else they combine through shared memory only.
std::string render_gpu_kernel(const LinearProgram& prog, const std::string& dialect_prelude, bool warp_shuffle);

}  // namespace lg
