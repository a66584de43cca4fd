#include "codegen/fuse_mulacc.h"

namespace lg {

const PatternMatcher& pm_fuse_mulacc() {
  static const PatternMatcher pm({
      {"accumulate a product",
       Pat::op(Op::ACCUMULATE, {Pat::any("acc"), Pat::any("acc") + Pat::op(Op::MUL, {Pat::any("a"), Pat::any("b")})}),
       [](const Match& m) -> NodeRef {
         const NodeRef& acc = m["acc"];
         if (!is_float(acc->dtype)) return {};
         return make(Op::ACCUMULATE, acc->dtype, {acc, make(Op::MULACC, acc->dtype, {m["a"], m["b"], acc})});
       }},
  });
  return pm;
}

}  // namespace lg
