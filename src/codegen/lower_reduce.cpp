#include "codegen/lower_reduce.h"

#include "ir/build.h"
#include "ir/scalar.h"
#include "rewrite/rewrite.h"

namespace lg {

namespace {
struct Ctx {
  int64_t next_acc = 0;
};

NodeRef identity_const(Op op, DType t) {
  Value v = reduce_identity(op, t);
  return make(Op::CONST, t, {}, is_float(t) ? Arg{v.f} : Arg{v.i});
}

const PatternMatcher& pm_lower_reduce() {
  static const PatternMatcher pm({{"reduce to accumulator", Pat::op(Op::REDUCE), [](const Match& m) {
                                     const NodeRef& r = m.root();
                                     Op op = r->get_arg<Op>();
                                     std::vector<NodeRef> acc_src{identity_const(op, r->dtype)};
                                     acc_src.insert(acc_src.end(), r->src.begin() + 1, r->src.end());
                                     NodeRef acc = make(Op::DEFINE_ACC, r->dtype, std::move(acc_src),
                                                        m.ctx<Ctx>().next_acc++);
                                     return make(Op::ACCUMULATE, r->dtype, {acc, alu(op, acc, r->src[0])});
                                   }}});
  return pm;
}
}  // namespace

NodeRef lower_reduce(const NodeRef& kernel) {
  Ctx ctx;
  return rewrite(kernel, pm_lower_reduce(), {.name = "lower reduce"}, std::any(&ctx));
}

}  // namespace lg
