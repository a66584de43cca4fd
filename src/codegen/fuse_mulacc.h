#pragma once
// "fuse multiply-add": an accumulator update acc + a*b on floats becomes MULACC(a, b, acc), one
// rounding instead of two (an FMA on the CPU). Only accumulations are fused, so elementwise code
// (optimizer updates, activations) keeps its separate roundings.
#include "rewrite/matcher.h"

namespace lg {

const PatternMatcher& pm_fuse_mulacc();

}  // namespace lg
