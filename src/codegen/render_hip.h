#pragma once
// The HIP renderer (AMD GPUs): the CUDA renderer's sibling, the same kernels written by the shared
// GPU writer (codegen/render_gpu.h) after a HIP prelude, compiled by hipcc (runtime/hipcc.h).
// float16 is clang's _Float16 (conversions round to nearest even, with subnormals); bfloat16 is
// held as its 16-bit pattern and converted with the same bit arithmetic as the C prelude
// (codegen/c_prelude.h), because the HIP bfloat16 headers differ between ROCm releases.
#include "codegen/renderer.h"

namespace lg {

class HipRenderer : public Renderer {
 public:
  std::string render(const LinearProgram& prog) const override;
};

extern const char* const kHipPrelude;

}  // namespace lg
