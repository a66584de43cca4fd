#pragma once
// Symbolic simplification of scalar kernel expressions, mainly the int64 index arithmetic that
// movement ops become over loop variables (RANGE) and DEFINE_VARs:
//   (r0*12 + r1) // 12  ->  r0          for r1 in [0, 12)
//   (r0//4)*4 + r0%4    ->  r0
// Every rule is sound for all values within the sources' bounds (vmin, vmax), with integers that
// wrap in their dtype and IDIV/MOD that truncate toward zero (ops.def). Rules touch only scalar
// kernel-stage nodes: a node with a shape or a device (tensor stage) is never rewritten.
#include "rewrite/matcher.h"

namespace lg {

// Folds every ALU op (unary, binary, ternary; CAST, BITCAST, WHERE and MULACC included) whose
// sources are all CONST into a CONST, evaluated by eval_alu (ir/scalar.h).
const PatternMatcher& pm_const_fold();

// pm_const_fold plus identities, canonical forms (constants right, flat sorted ADD chains),
// bound-driven division, modulo and comparison folding, and a gated INDEX's address folded over
// the loop values its gate allows (gated_index.cpp).
const PatternMatcher& pm_symbolic();

}  // namespace lg
