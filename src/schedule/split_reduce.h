#pragma once
// Large reductions to few outputs become two: a first stage that reduces P contiguous chunks of the
// reduced elements into P partial results (its own kernel, whose P outputs the device can run in
// parallel), and a second that reduces the P partials. Without it, a full sum is one loop on one core.
//
//   REDUCE_AXIS(x, axes) with  numel(out) < kSplitBelowOutputs  and  reduced elements >= kSplitFrom
//   ->  RESHAPE(REDUCE_AXIS(CONTIGUOUS(REDUCE_AXIS(RESHAPE(x, ..., P, n/P, ...), axes')), {a}), out)
//
// where a is the first reduced axis whose size n has a divisor P in {64, 32, 16} with n/P >= 2.
// The sum is reassociated (partials of chunks); 16-bit float reductions are left alone, since the
// partials would be rounded to 16 bits.
#include "rewrite/rewrite.h"

namespace lg {

inline constexpr int64_t kSplitBelowOutputs = 16;
inline constexpr int64_t kSplitFrom = int64_t{1} << 15;

const PatternMatcher& pm_split_reduce();

}  // namespace lg
