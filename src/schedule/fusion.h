#pragma once
// Fusion: which nodes of a tensor-stage graph get their own buffer (realize points). Everything else
// is computed inside the kernel of the realize point that consumes it.
//
// Rules, applied from the roots toward the leaves (users are decided before their sources):
//  - sink sources are realized unless they already are views of a buffer, or a RESHAPE of a
//    CONTIGUOUS (a view of the buffer that CONTIGUOUS gets: no copy);
//  - CONTIGUOUS, COPY and ASSIGN are realized; the source of a COPY is realized unless it is a view;
//  - a REDUCE_AXIS fuses into its consumer only if exactly one path leads from it to a realize point
//    and that path crosses no EXPAND (which would recompute the reduction per broadcast element);
//    so a reduction feeding elementwise ops, or another reduction, shares their kernel;
//  - except a row reduction: a REDUCE_AXIS of trailing axes to (rows..., 1...) whose every path
//    goes through elementwise ops, EXPANDs of those trailing axes and other row reductions only,
//    to one realize point that is elementwise or a row reduction. The kernel there
//    loops over the same rows outermost, and the reduction runs once per row before the loops over
//    the row's elements (codegen/linearize.cpp), so nothing is recomputed and the row is read from
//    cache: softmax, log-softmax and normalizations over the last axis are one kernel, one pass
//    over memory. Such EXPANDs do not count as crossings for the other rules either;
//  - a kernel holds at most one sum of 16-bit products (a REDUCE_AXIS(ADD) of MULs of widening
//    casts: a bf16 matmul): another one fused into the same realize point is realized on its own,
//    so each maps onto tensor cores (codegen/tensor_core.h takes kernels with one reduction);
//  - a 16-bit cast of a sum of 16-bit products (a bf16 matmul's result) whose value reaches its
//    realize point only through movement ops, one of them a PERMUTE, is realized itself: its
//    kernel keeps the matmul's own output axes (tensor cores map it) and the realize point copies
//    it through the permute (grouped-query attention's dK and dV; written straight in the
//    permuted layout, the kv head and head dim axes would merge into one both operands move along);
//  - a REDUCE_AXIS with kSplitBelowOutputs (split_reduce.h) or more outputs whose paths all lead to
//    one realize point with fewer outputs is realized (a nested reduction to a scalar would be one
//    thread's, or one thread block's, loop);
//  - a 16-bit cast of a 16-bit matmul (its result) with several paths to realize points is
//    realized: the 16-bit value is stored, not its float32 sum of products;
//  - an elementwise node with several users that reads three or more distinct inputs is realized,
//    so long inline chains (residual streams) are not recomputed in every consumer (a source that
//    is always realized, a CONTIGUOUS, or a reduction counts as one input);
//  - a computed 16-bit value (an ALU op in bf16/fp16, or a RESHAPE/PERMUTE of one) that a 16-bit
//    matmul widens and broadcasts (through an EXPAND) into its products is realized, as the
//    matmul reads it (re-laid-out): fused, every output column would recompute it, and
//    block-tiled tensor-core matmuls copy tiles of operands linear along their axes;
//  - a realize point that is a widening cast (bf16/fp16 -> float32, exact) read only inside other
//    kernels moves to the cast's source: the 16-bit value is stored and each reader widens it on
//    load (half the memory traffic; a matmul reading it sees 16-bit operands, for tensor cores).
#include <vector>

#include "ir/graph.h"

namespace lg {

// realize[i] for the nodes of um.order.
std::vector<bool> find_realize_points(const UserMap& um, const NodeRef& sink);

// A REDUCE_AXIS of trailing axes to a row shape (rows..., 1...): one value per row.
bool is_row_reduce(const Node* n);

}  // namespace lg
