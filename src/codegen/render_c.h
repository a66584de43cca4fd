#pragma once
// The C renderer (CPU). Every kernel becomes one C function
//   void lg_kernel(void** bufs, int64_t begin, int64_t end)
// where bufs[k] is DEFINE_GLOBAL slot k and [begin, end) is the part of the parallel loop (the
// outermost loop, see parallel_extent) this call runs; a kernel with no such loop runs whole and
// ignores the range. Values of 16-bit float dtypes live in float registers, rounded after every op
// as the interpreter rounds them; memory holds their 16-bit patterns. Vector values (dtype count
// > 1, float32 only: codegen/vectorize.h) are GCC/clang vector types `lg_f32xN`; a vector LOAD or
// STORE moves N consecutive elements starting at its INDEX.
#include "codegen/renderer.h"

namespace lg {

class CRenderer : public Renderer {
 public:
  std::string render(const LinearProgram& prog) const override;
  // float32 vectors of 16 lanes (GCC/clang vector extensions, one 512-bit register on AVX-512)
  int vector_lanes() const override { return 16; }
};

// Trip count of the loop the C kernel splits across threads: the outermost loop when it is an
// output (LOOP) range with a constant bound; 0 when the kernel has none.
int64_t parallel_extent(const LinearProgram& prog);

// The text every rendered C kernel starts with: codegen/c_prelude.h's kCPrelude, then
// codegen/scalar_expr.h's kScalarPrelude. What follows it is the kernel's own part (a hand-written
// kernel's helpers, then its name comment and lg_kernel); runtime/c_batch.h relies on that.
const std::string& c_kernel_prelude();

}  // namespace lg
