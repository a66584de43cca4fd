#include <cstdio>

#include "base/config.h"
#include "base/error.h"
#include "codegen/fuse_mulacc.h"
#include "codegen/linearize.h"
#include "codegen/lower_reduce.h"
#include "codegen/opt.h"
#include "codegen/program.h"
#include "codegen/tensor_core.h"
#include "codegen/vectorize.h"
#include "ir/graph.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/symbolic.h"
#include "rewrite/spec.h"

namespace lg {

// The codegen pipeline, one named step per line.
LinearProgram lower_kernel(const NodeRef& ast, const std::string& name, const std::vector<Opt>& opts, int vector_lanes) {
  NodeRef k = ast;
  // Movement ops left index arithmetic like (r0*12 + r1) / 12: fold it before anything reads it.
  k = rewrite(k, pm_symbolic(), {.name = "initial symbolic"});
  // The schedule as data: split and retype RANGEs (heuristic, BEAM or none).
  if (config().debug >= 3 && !opts.empty()) std::fprintf(stderr, "opts %s: %s\n", name.c_str(), to_string(opts).c_str());
  k = apply_opts(k, opts);
  // Fold what the split ranges made (r*16 + u < 192 -> r < 12: a condition the lanes share).
  k = rewrite(k, pm_symbolic(), {.name = "opts symbolic"});
  // One UPCAST range becomes vector lanes where the renderer has vector types (before the other
  // UPCASTs are copied, so each copy is vector code).
  if (vector_lanes > 1) k = vectorize_lanes(k, vector_lanes);
  // UPCAST/UNROLL ranges become copies of the code that uses them; fold the constants they left.
  k = expand_upcasts(k);
  k = rewrite(k, pm_symbolic(), {.name = "expanded symbolic"});
  // REDUCE becomes an accumulator: DEFINE_ACC before the loops, ACCUMULATE inside.
  k = lower_reduce(k);
  verify_stage(k, program_spec(), "after lower reduce");
  // Fold what lowering exposed (identities of accumulators, index math in gates).
  k = rewrite(k, pm_symbolic(), {.name = "final symbolic", .spec = &program_spec()});
  // acc + a*b in a reduction becomes one fused multiply-add.
  k = rewrite(k, pm_fuse_mulacc(), {.name = "fuse multiply-add"});
  // A tensor-core tile's four accumulators become the mma's C operand (codegen/tensor_core.h).
  k = fuse_wmma_accumulate(k);
  // Order everything into loops.
  LinearProgram prog = linearize(k, name);
  for (const Node* n : toposort(ast))  // every slot of the scheduled kernel, used or not
    if (n->op == Op::DEFINE_GLOBAL) {
      size_t slot = static_cast<size_t>(n->get_arg<int64_t>());
      if (prog.globals.size() <= slot) prog.globals.resize(slot + 1, dtypes::void_);
      prog.globals[slot] = n->dtype.base();
    }
  if (config().spec >= 1) {
    std::string e = check_linear(prog);
    LG_CHECK(e.empty(), "linear program ", name, ": ", e, "\n", to_string(prog));
  }
  if (config().debug >= 5)
    std::fprintf(stderr, "=== linear %s ===\n%s", name.c_str(), to_string(prog).c_str());
  return prog;
}

}  // namespace lg
