#pragma once
// The hand-written optimization choice for CPU kernels (what runs when BEAM is off and NOOPT is not
// set). It only returns Opts; apply_opts does the work.
#include <vector>

#include "codegen/opt.h"

namespace lg {

// Kernels with a reduction get a register tile chosen from their access strides (codegen/access.h):
// a vector-wide UPCAST of the axis that is contiguous in memory (an output axis when the store and
// loads allow it, else the reduce axis as partial accumulators), UPCASTs of output axes that some
// load broadcasts over (reuse), and THREAD on an output axis with enough trips when the outermost
// has too few. Elementwise kernels: one vector (16) along the last axis when it is contiguous, else
// an UPCAST by 8 or 4. Only amounts that divide the axis are used. heuristic.cpp says why.
std::vector<Opt> cpu_heuristic_opts(const NodeRef& ast);

}  // namespace lg
