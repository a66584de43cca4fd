#pragma once
// The CUDA renderer: kernels as CUDA C++ for NVRTC (runtime/nvrtc.h), one
//   extern "C" __global__ void lg_kernel(T0* data0, ...)
// per program, written by the shared GPU writer (codegen/render_gpu.h) after a prelude that holds
// bfloat16 as __nv_bfloat16 (cuda_bf16.h) and float16 as __half (cuda_fp16.h), converted with the
// round-to-nearest-even intrinsics. NVRTC has no C library headers: the prelude defines the
// fixed-width integer types itself.
#include "codegen/renderer.h"

namespace lg {

class CudaRenderer : public Renderer {
 public:
  std::string render(const LinearProgram& prog) const override;
};

// The CUDA dialect's part of the prelude (exposed for the tests).
extern const char* const kCudaPrelude;

}  // namespace lg
