#pragma once
// Large reductions become two kernels: a first stage that reduces P chunks of the reduced elements
// into P partial results (its own kernel, realized through a CONTIGUOUS), and a second that reduces
// the P partials. Three cases:
//
// Few outputs (a full sum): without the split, the whole reduction is one loop on one core.
//   REDUCE_AXIS(x, axes) with  numel(out) < kSplitBelowOutputs  and  reduced elements >= kSplitFrom
//   ->  RESHAPE(REDUCE_AXIS(CONTIGUOUS(REDUCE_AXIS(RESHAPE(x, ..., P, n/P, ...), axes')), {a}), out)
//   where a is the first reduced axis whose size n has a divisor P in {64, 32, 16} with n/P >= 2;
//   past 64 chunks of kSplitChunk elements, P is the smallest power of two in [128, kSplitMaxParts]
//   dividing n whose chunks hold at most kSplitChunk elements (else the largest that divides n).
//   Why: on a GPU each partial is one block; 64 blocks cannot keep its memory busy (the 8B step's
//   gradient norm over 1.49 B floats, 5.9 GB, took 11.8 ms on an H200 as 64 rows: 500 GB/s of
//   4800). On a CPU a chunk of up to a million elements is still a long vector loop.
//
// A long matmul (split-K): a sum of products whose operands are both broadcast along output axes
// (each is reused by many outputs) over K >= kSplitKFrom elements per output, e.g. the LM head's
// input gradient, which sums over the 128,256-token vocabulary. One kernel walks the whole K for
// every register tile, and a tile's operand rows (K elements each) do not stay in cache from one
// tile to the next, so every tile streams them from memory again. Split into P chunks of at most
// kSplitKChunk elements, the partials' buffer is laid out (P, outputs...): P is its outermost
// (parallel) axis, so one chunk's operands stay in cache while every tile of the chunk reads them.
//   ->  RESHAPE(REDUCE_AXIS(CONTIGUOUS(PERMUTE(REDUCE_AXIS(RESHAPE(x, ..., P, c, ...), axes'),
//                                              P first)), {0}), out)
//   with P * numel(out) <= kSplitKMaxPartials (the partials' buffer stays small: on a GPU the
//   8B model's head at sequence 8192 has 33.5M outputs and is never split).
//
// Columns (few outputs for a GPU): a reduction over an outer axis, its last axis an output (a sum
// over 8192 tokens of each of 4096 columns: the norm weights' gradients), with fewer than
// kSplitColumnsBelow outputs over at least kSplitColumnsFrom elements each, not a matmul. A GPU
// gives each output a thread (its neighbours read the neighbouring columns: coalesced), so 4096
// outputs were 16 blocks walking 8192 rows on a GPU of 132 SMs. Split into P chunks of the largest
// reduced axis, P the smallest power of two with P * outputs >= kSplitColumnsPartials (a thread
// each: 1024 per SM of a 128-SM GPU), or short of that the largest dividing the axis into chunks
// of at least kSplitColumnsChunk, the partials laid out (P, outputs...) as split-K's.
//
// All three reassociate the sum (partials of chunks); 16-bit float reductions are left alone, since
// the partials would be rounded to 16 bits.
#include "rewrite/rewrite.h"

namespace lg {

inline constexpr int64_t kSplitBelowOutputs = 16;
inline constexpr int64_t kSplitFrom = int64_t{1} << 15;
inline constexpr int64_t kSplitChunk = int64_t{1} << 20;
inline constexpr int64_t kSplitMaxParts = 4096;
inline constexpr int64_t kSplitKFrom = int64_t{1} << 14;
inline constexpr int64_t kSplitKChunk = 2048;
inline constexpr int64_t kSplitKMaxPartials = int64_t{1} << 25;
inline constexpr int64_t kSplitColumnsBelow = int64_t{1} << 16;
inline constexpr int64_t kSplitColumnsPartials = int64_t{1} << 17;
inline constexpr int64_t kSplitColumnsFrom = int64_t{1} << 12;
inline constexpr int64_t kSplitColumnsChunk = 256;

const PatternMatcher& pm_split_reduce();

}  // namespace lg
