#pragma once
// A linearized kernel: the ordered op list a device runs or renders.
//   ops: DEFINE_GLOBALs first (by slot), then every node after its sources; RANGE opens a loop and
//   END(range) closes it (properly nested); DEFINE_ACC sits right before its ranges' loops and
//   ACCUMULATE inside them. Values computed inside a loop are used only inside it, except an
//   ACCUMULATE, whose value after the loop is the accumulator's.
#include <string>
#include <vector>

#include "codegen/opt.h"
#include "ir/node.h"

namespace lg {

struct LinearProgram {
  std::string name;
  std::vector<NodeRef> ops;
  // Element dtype of each kernel argument slot. Simplification may remove every use of an input
  // (x*0 on integers); its slot stays, with its dtype, so slots always match the schedule's buffers.
  std::vector<DType> globals;
};

// Lowers one kernel AST (kernel stage, from the scheduler) to a linear program through the named
// passes of the codegen pipeline (see lower.cpp). DEBUG=5 prints the graph after each pass.
// opts: the optimization list to apply (codegen/opt.h); illegal ones throw OptError.
// vector_lanes: the renderer's vector width (Renderer::vector_lanes); 0 keeps every value scalar
// (INTERP runs scalar programs only).
LinearProgram lower_kernel(const NodeRef& ast, const std::string& name, const std::vector<Opt>& opts = {},
                           int vector_lanes = 0);

// The program stage (after "lower reduce") and the checks on a linear program.
const struct Spec& program_spec();
// "" when prog is well formed (order, loop nesting, scoping), else what is wrong.
std::string check_linear(const LinearProgram& prog);

// One line per op, as DEBUG=5 prints a linear program.
std::string to_string(const LinearProgram& prog);

}  // namespace lg
