#pragma once
// vectorize_lanes: UPCAST ranges of `lanes` trips become vector values (dtype count = lanes)
// instead of `lanes` scalar copies, so a renderer with vector types emits vector loads, FMAs and
// stores itself rather than hoping the C compiler's SLP vectorizer regroups scalar copies (which it
// does for some register tiles and not for others).
//
// Every UPCAST of `lanes` trips is tried, in id order (the heuristic's first UPCAST first); one
// becomes vector lanes when all its uses are vectorizable (values already made vectors by an
// earlier range must not depend on it, except through combined partial accumulators: a row
// kernel's max and sum loops each get their own lanes, and so does its store):
//   - float32 and bfloat16 loads and stores whose index moves by 1 along it (contiguous; ungated),
//     or not at all (the scalar is broadcast to every lane with VECTORIZE), and CASTs between them;
//   - float32 and bfloat16 ADD, MUL, NEG, MAX, MULACC, SQRT, RECIPROCAL and EXP2 of such values
//     (SQRT and RECIPROCAL correctly rounded per lane, as the scalar copies are; bfloat16 lanes are
//     float32 values, each result rounded to bfloat16 per lane where the scalar op rounds), and
//     WHERE with a condition that does not depend on the lane (a scalar condition selects whole
//     vectors) or with a mask of lanes;
//   - CMPLT, CMPNE and CMPEQ of float32 or bfloat16 lanes, or of int32 lanes whose lane-dependent
//     operand is an arange's index CAST(int32, i) (i moving by 1 per lane, every value within int32:
//     i at lane 0 broadcast plus the lane numbers): bool lanes, a mask (a label against the column
//     index in cross-entropy's one-hot pick);
//   - REDUCE (ADD, MUL or MAX) of such values: per-lane accumulators. When the range is one of the
//     REDUCE's own loops (an UPCAST of a reduce axis), the lanes are partial accumulators,
//     combined after the loops by a tree of lane extractions (GEP) and the reduce's op;
//   - any ALU op on values that are scalars again after such a combination (1 / sum).
// Any other use leaves the kernel unchanged (expand_upcasts then makes scalar copies). The result
// is what the scalar copies compute, lane for lane, partial sums included: both combine them with
// combine_pairwise (codegen/opt.h).
#include "ir/node.h"

namespace lg {

NodeRef vectorize_lanes(const NodeRef& ast, int lanes);

}  // namespace lg
