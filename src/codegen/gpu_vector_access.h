#pragma once
// 16- and 8-byte loads and stores for the GPU renderers (render_gpu.h): scalar LOADs (or STOREs) of
// a linear program that together read (write) 16 consecutive, aligned bytes of one buffer become one
// vector access (float4 for float32, uint4 for 8 bfloat16 or float16 elements), one memory
// instruction instead of 4 or 8; elements left over form groups of half as many, down to pairs
// (uint2 of 4 16-bit elements; float2, or one 32-bit word of two 16-bit elements). They come from
// UPCAST copies along a contiguous axis, from tensor-core lane runs (codegen/tensor_core.h), and
// pairs from the outputs of a matmul lane (its accumulator's neighbouring columns).
//
// A group is `lanes` = 16 (8, 4) / element-size accesses that
//   - are all LOADs or all STOREs of the same buffer (DEFINE_GLOBAL) and element type (float32:
//     4 lanes; bfloat16, float16: 8), with ungated indices (a masked lane stays scalar);
//   - have element indices x + s, x + s + 1, ..., x + s + lanes - 1: the same node x plus
//     constants (symbolic keeps sums flat, constant last);
//   - start aligned: s and every value of x are multiples of `lanes` (x's known divisor: the gcd
//     of its terms, a product multiplies them), so the byte offset is a multiple of 16 (8, 4). Kernel
//     arguments are 16-byte aligned: device allocations (256 bytes on CUDA) and JIT arena offsets
//     (multiples of 64, runtime/memory_plan.h) are;
//   - sit in the same block of the program (no loop opens or closes between two of them that is
//     not closed or opened again before the next), so one C++ variable reaches all of them;
//   - change the order of no two accesses of the buffer that may touch one element, at least one
//     of them a store: a load group reads at the first member's place, a store group writes at
//     the last member's, and with the groups planned before it (in program order of each
//     candidate run's first access) every such pair stays in program order. Two accesses touch
//     different elements when their indices are the same x plus different constants; anything
//     else (another x, a gated index) may be the same element. So an in-place update (load
//     element i, store it, load i + 1, store it, ...) becomes one load group at its first load and
//     one store group at its last store, while a store that a later load of its element must see
//     keeps both scalar.
// Anything else stays scalar: the values never change, only how many instructions move them.
#include <unordered_map>
#include <vector>

#include "codegen/program.h"

namespace lg {

struct VectorAccess {
  std::vector<const Node*> members;  // LOAD or STORE nodes; member i reads (writes) element start + i
  const Node* first = nullptr;       // the member met first in the program: a load group reads there
  const Node* last = nullptr;        // the member met last: a store group writes there
  size_t first_position = 0;         // of `first` in prog.ops
};

struct VectorAccessPlan {
  std::vector<VectorAccess> groups;
  std::unordered_map<const Node*, int> group_of;  // member -> index into groups
};

// The groups of prog, in program order of their first members.

VectorAccessPlan plan_vector_accesses(const LinearProgram& prog);

// Whether LOADs lo and hi read elements x + s and x + s + 1 of one bfloat16 or float16 kernel
// argument (DEFINE_GLOBAL, ungated indices) with x + s provably even: one aligned 32-bit word, lo in
// its low half. The CUDA renderer loads a tensor-core register (two fragment elements) so.
bool is_aligned_word_pair(const Node* lo, const Node* hi);

}  // namespace lg
