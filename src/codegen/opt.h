#pragma once
// Optimizations as data. An Opt names a kernel axis and an amount; apply_opts() applies a list of
// them to a kernel AST (kernel stage) by splitting and retyping its RANGEs. The algorithm (what is
// computed) never changes; only the loop structure does.
//
// Axes: the kernel's splittable RANGEs (types LOOP, THREAD, GLOBAL, REDUCE) ordered by id, output axes
// first; the list is recomputed after every Opt, so axis numbers refer to the kernel as it is then.
//
//   UPCAST a  n   output axis a -> a/n outer loop x n copies of the body (register tile; expanded
//                 before linearizing, so clang sees n independent values). On a reduce axis: n
//                 partial accumulators over the a/n loop, one per copy, combined after the loop
//                 (reassociates the reduction; lets a reduction along a contiguous axis vectorize)
//   UNROLL a  n   reduce axis a -> a/n loop x n copies of the update inside the loop
//   LOCAL  a  n   output axis a -> a/n x n with the n-loop moved innermost of the output loops
//                 (cache blocking)
//   GROUP  a  n   reduce axis a -> a/n x n nested loops (splits a reduction; same summation order)
//   PADTO  a  n   axis a grows to a multiple of n; the extra iterations are masked off
//   THREAD a  -   output axis a becomes the outermost loop, the one split across threads
//   GROUPTOP a n  reduce axis a -> a/n loop x n threads of the block's group (a GROUP range), each
//                 reducing its share (element g, g+n, g+2n, ...: coalesced); on a GPU the threads
//                 then combine their partial results (render_gpu.h) so that every thread of the
//                 group holds the whole reduction. Its range gets the lowest id, so it is the
//                 outermost of the reduction's loops (C renderers: a loop, the same sum in another
//                 order)
//   GROUPOUT a n  output axis a -> a/n loop x n threads of the block's group (a GROUP range, the
//                 innermost of the output loops): thread g writes elements g, g+n, ... (coalesced).
//                 With GROUPTOP on a row kernel's reductions the same threads first reduce the row
//                 together, then each writes its share of the row (heuristic_gpu.h)
//   GLOBAL a  -   output axis a becomes a GPU grid axis (one iteration per thread); with LOCAL
//                 ranges as the block's axes (codegen/gpu_launch.h). C renderers keep it a loop.
//   TC     c  s   tensor cores (codegen/tensor_core.h): the matmul's m, n, k axes (candidate c of
//                 tc_candidates) are split by the mma tile (16, 8, 16), the tile becomes a warp's 32
//                 lanes (a LOCAL range) and WMMA nodes; m/16, n/8 and k/16 stay axes for more Opts.
//                 s: lane runs of s mma steps (k/(16s) stays; 0: the PTX order of k). On an
//                 attention kernel (ir/attention.h): its CUDA kernels may use tensor cores
//   SMEM   -  -   after TC (the last Opt): each k step, the block's threads copy the A and B tiles of
//                 the block into shared memory together, and the mma fragments are read from there
//                 (codegen/smem.h)
//   KBLOCK a  n   reduce axis a -> a/n blocks x n (CPU loops): the block loop runs in order right
//                 inside the outermost output loop (the one split across threads), outside the
//                 other output loops, and each block adds its partial sum into the output, so the
//                 part of an operand one block reads stays in cache while every output tile of
//                 the outer loop's trip reads it (a matmul's K blocking). Only for a kernel of one
//                 store and one ADD reduction. When the store's value is not the sum or the
//                 output's element plus it (a bf16 product rounded, then added to a gradient), the
//                 partial sums go to the thread's own array and the last block stores the value
//                 computed from the whole sum; the sum's order changes only at block ends
//   PACK   s  -   CPU: the load of kernel argument s that every inner output loop reads alike (a
//                 matmul's vector operand, read down a column panel) is copied, once per trip of
//                 its outer loops, into a thread's own contiguous array and read from there
//                 (codegen/pack.h). After every other Opt: only PACKs may follow it
//   BLOCK_MMA c t the first and only Opt: matmul c (of tc_candidates) as a block-tiled tensor-core
//                 matmul on tiling t (codegen/block_mma.h): the block's tiles pass through shared
//                 memory (cp.async, ldmatrix) in a hand-written main loop; the epilogue stays generated
//   ATOMIC -  -   the first Opt, GPU devices: a scatter-add's SERIAL axis becomes the outermost output
//                 axis and its read-modify-write an atomic add (codegen/atomic_scatter.h), so the
//                 scattered positions run in parallel; a repeated index's adds land in any order
//
// GPU thread ranges: LOCAL ranges are independent axes of the block (each its own part of
// threadIdx); every GROUP range of a kernel is the same group axis (one part of threadIdx, shared):
// GROUP ranges are never open at the same time, so they take turns using the group's threads
// (codegen/gpu_launch.h).
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/node.h"
#include "rewrite/rewrite.h"

namespace lg {

enum class OptKind : uint8_t {
  UPCAST,
  UNROLL,
  LOCAL,
  GROUP,
  PADTO,
  THREAD,
  GLOBAL,
  GROUPTOP,
  GROUPOUT,
  TC,
  SMEM,
  BLOCK_MMA,
  KBLOCK,
  PACK,
  ATOMIC
};

struct Opt {
  OptKind kind;
  int axis;
  int amount = 0;
  bool operator==(const Opt&) const = default;
};

std::string to_string(const Opt& o);
std::string to_string(const std::vector<Opt>& opts);

// An Opt that does not apply to this kernel (axis out of range, amount does not divide...).
struct OptError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The splittable axes of a kernel, in axis order.
std::vector<NodeRef> kernel_axes(const NodeRef& ast);

// Applies opts in order; throws OptError if one does not apply.
NodeRef apply_opts(const NodeRef& ast, const std::vector<Opt>& opts);

// Replaces UPCAST and UNROLL ranges by copies of the code that uses them (n stores for an UPCAST of
// an output axis, n partial accumulators for an UPCAST of a reduce axis, n folded updates for an
// UNROLL).
NodeRef expand_upcasts(const NodeRef& ast);

// The values combined as a balanced tree of neighbours ((v0 op v1) op (v2 op v3)) ...: log2(n)
// dependent ops instead of n-1, and a depth-first walk still meets v0, v1, ... in order (the
// linearizer declares accumulators in that order). Partial accumulators are combined this way.
NodeRef combine_pairwise(Op op, std::vector<NodeRef> v);

}  // namespace lg
