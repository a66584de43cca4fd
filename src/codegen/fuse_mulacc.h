#pragma once
// "fuse multiply-add": an accumulator update acc + a*b on floats becomes MULACC(a, b, acc), one
// rounding instead of two (an FMA on the CPU), and acc + (a*b + c*d) becomes
// MULACC(c, d, MULACC(a, b, acc)): two FMAs instead of two multiplies and two adds. Only
// accumulations are fused, so elementwise code (optimizer updates, activations) keeps its separate
// roundings. Every device lowers through this pass (the interpreter too), so they agree bit for bit.
#include "rewrite/matcher.h"

namespace lg {

const PatternMatcher& pm_fuse_mulacc();

}  // namespace lg
