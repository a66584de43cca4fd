#pragma once
// Large reductions become two kernels: a first stage that reduces P chunks of the reduced elements
// into P partial results (its own kernel, realized through a CONTIGUOUS), and a second that reduces
// the P partials. Two cases:
//
// Few outputs (a full sum): without the split, the whole reduction is one loop on one core.
//   REDUCE_AXIS(x, axes) with  numel(out) < kSplitBelowOutputs  and  reduced elements >= kSplitFrom
//   ->  RESHAPE(REDUCE_AXIS(CONTIGUOUS(REDUCE_AXIS(RESHAPE(x, ..., P, n/P, ...), axes')), {a}), out)
//   where a is the first reduced axis whose size n has a divisor P in {64, 32, 16} with n/P >= 2.
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
// Both reassociate the sum (partials of chunks); 16-bit float reductions are left alone, since the
// partials would be rounded to 16 bits.
#include "rewrite/rewrite.h"

namespace lg {

inline constexpr int64_t kSplitBelowOutputs = 16;
inline constexpr int64_t kSplitFrom = int64_t{1} << 15;
inline constexpr int64_t kSplitKFrom = int64_t{1} << 14;
inline constexpr int64_t kSplitKChunk = 2048;
inline constexpr int64_t kSplitKMaxPartials = int64_t{1} << 25;

const PatternMatcher& pm_split_reduce();

}  // namespace lg
