#pragma once
// Linearize: orders a program-stage kernel (after "lower reduce") into a LinearProgram.
//
// Every node is placed by the loops it depends on (its live ranges: the RANGEs it reads, minus those
// an ACCUMULATE closes). All output loops open first; each accumulator's loops open just after its
// DEFINE_ACC, and everything its value needs that does not depend on those loops is emitted before
// they open, so a value computed inside a loop is never used after it closes. A reduction that
// needs only the outer output loops (a row's max or sum) runs before the inner ones open, once per
// row, unless a GPU launch range (GLOBAL, LOCAL) still has to open (they open before any
// statement); GROUP ranges are not launch ranges in that sense (codegen/gpu_launch.h). In a CPU or
// INTERP kernel, a store that needs only the outer loops (a row's value beside the row's elements:
// schedule/multi_output.h) runs there too, once per row; every other store runs in the whole nest.
#include "codegen/program.h"

namespace lg {

LinearProgram linearize(const NodeRef& kernel, const std::string& name);

}  // namespace lg
