#include "codegen/fuse_mulacc.h"

namespace lg {

const PatternMatcher& pm_fuse_mulacc() {
  static const PatternMatcher pm({
      {"accumulate a product",
       Pat::op(Op::ACCUMULATE,
               {Pat::any("acc"), Pat::any("acc") + Pat::op(Op::MUL, {Pat::any("a"), Pat::any("b")})}),
       [](const Match& m) -> NodeRef {
         const NodeRef& acc = m["acc"];
         if (!is_float(acc->dtype)) return {};
         return make(Op::ACCUMULATE, acc->dtype, {acc, make(Op::MULACC, acc->dtype, {m["a"], m["b"], acc})});
       }},
      // acc + (a*b + c*d): a reduction of two products summed per step (two matmuls into one
      // output: the weight gradient of a loss computed in chunks, dX of projections sharing x) ->
      // acc + a*b, then + c*d, each one FMA (the sum of the pair is reassociated into the
      // accumulator: rounded twice, as two accumulations are, instead of three times).
      {"accumulate a sum of two products",
       Pat::op(Op::ACCUMULATE,
               {Pat::any("acc"), Pat::any("acc") + (Pat::op(Op::MUL, {Pat::any("a"), Pat::any("b")}) +
                                                    Pat::op(Op::MUL, {Pat::any("c"), Pat::any("d")}))}),
       [](const Match& m) -> NodeRef {
         const NodeRef& acc = m["acc"];
         if (!is_float(acc->dtype)) return {};
         NodeRef first = make(Op::MULACC, acc->dtype, {m["a"], m["b"], acc});
         return make(Op::ACCUMULATE, acc->dtype,
                     {acc, make(Op::MULACC, acc->dtype, {m["c"], m["d"], first})});
       }},
  });
  return pm;
}

}  // namespace lg
