#pragma once
// The hand-written optimization choice for CPU kernels (what runs when BEAM is off and NOOPT is not
// set). It only returns Opts; apply_opts does the work.
#include <vector>

#include "codegen/opt.h"

namespace lg {

// A register tile for kernels with a reduction (UPCAST the last output axis by up to 16 and the one
// before by up to 4, UNROLL the reduction by up to 4); vector-width UPCAST of the last axis for
// elementwise kernels. Only amounts that divide the axis are used.
std::vector<Opt> cpu_heuristic_opts(const NodeRef& ast);

}  // namespace lg
