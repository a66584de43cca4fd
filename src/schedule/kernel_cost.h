#pragma once
// What one kernel of a schedule does, counted from its AST (kernel stage, before any Opt): the
// floating-point operations and the bytes it must move. PROFILE=1 (runtime/profile.h) divides
// them by measured times. They are the kernel's useful work, the same whichever Opts it runs with:
//   flops  each float ALU op (a source or the result a float; not CAST or BITCAST; MULACC counts
//          2) once per distinct combination of the loops its value depends on; a REDUCE of floats
//          once per iteration of its loops and the loops of its source. A matmul (M, K) @ (K, N)
//          is 2 M N K. A hand-written attention kernel (ir/attention.h) counts its products:
//          forward 4 B H S T D (scores, then probabilities times V), dQ 6 (scores, dO V^T, dS K),
//          dK dV 8 (those two, P^T dO, dS^T Q); causal: of the S T pairs only S (S + 1) / 2.
//   bytes  the store's elements (the loops its index depends on) and, per slot, the elements its
//          loads address (per LOAD the same count, summed over the slot's LOADs, at most the
//          slot's size; slot 0 too: an in-place update reads its output), times the element size.
//          Attention: every slot's whole size.
// Both are estimates of the minimum: a kernel that reads an input twice (a tile per block) moves
// more, and a value recomputed in every iteration of a loop it does not depend on is counted once.
#include <cstdint>
#include <vector>

#include "schedule/schedule.h"

namespace lg {

struct KernelCost {
  double flops = 0;
  double bytes = 0;
};

// sizes[k]: the elements of slot k (from its pointer on: the launch's KernelArgs::sizes).
KernelCost kernel_cost(const NodeRef& ast, const std::vector<int64_t>& sizes);
// The same for a kernel item of a schedule (sizes from its buffers and offsets).
KernelCost kernel_cost(const ScheduleItem& item);

}  // namespace lg
