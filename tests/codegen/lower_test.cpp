// The codegen pipeline on hand-built kernel ASTs: lower reduce, linearize, and the linear checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "codegen/linearize.h"
#include "codegen/lower_reduce.h"
#include "codegen/program.h"
#include "ir/build.h"
#include "ir/graph.h"

namespace lg {
namespace {

NodeRef global(int64_t slot) { return make(Op::DEFINE_GLOBAL, dtypes::float32.as_ptr(), {}, slot); }
NodeRef load(int64_t slot, const NodeRef& idx) {
  return make(Op::LOAD, dtypes::float32, {make(Op::INDEX, dtypes::float32.as_ptr(), {global(slot), idx})});
}
NodeRef store(const NodeRef& idx, const NodeRef& v) {
  return make(Op::STORE, dtypes::void_, {make(Op::INDEX, dtypes::float32.as_ptr(), {global(0), idx}), v});
}
NodeRef sink(const NodeRef& st) { return make(Op::SINK, dtypes::void_, {st}); }
NodeRef reduce(const NodeRef& v, const std::vector<NodeRef>& ranges, Op op = Op::ADD) {
  std::vector<NodeRef> src{v};
  src.insert(src.end(), ranges.begin(), ranges.end());
  return make(Op::REDUCE, v->dtype, std::move(src), op);
}
// Position of the first op in prog matching pred, or -1.
int find(const LinearProgram& p, const std::function<bool(const Node&)>& pred) {
  for (size_t i = 0; i < p.ops.size(); i++)
    if (pred(*p.ops[i])) return static_cast<int>(i);
  return -1;
}
int pos(const LinearProgram& p, const NodeRef& n) {
  return find(p, [&](const Node& x) { return &x == n.get(); });
}
int end_of(const LinearProgram& p, const NodeRef& r) {
  return find(p, [&](const Node& x) { return x.op == Op::END && x.src[0] == r; });
}

TEST(LowerReduce, ReduceBecomesAccumulatorWithTheOpsIdentity) {
  NodeRef r0 = range(8, 0, AxisType::REDUCE);
  NodeRef v = load(1, r0);
  const std::pair<Op, double> cases[] = {
      {Op::ADD, 0.0}, {Op::MUL, 1.0}, {Op::MAX, -std::numeric_limits<double>::infinity()}};
  for (auto [op, identity] : cases) {
    NodeRef k = lower_reduce(sink(store(index_const(0), reduce(v, {r0}, op))));
    const Node& acc_update = *k->src[0]->src[1];
    ASSERT_EQ(acc_update.op, Op::ACCUMULATE);
    const NodeRef& acc = acc_update.src[0];
    EXPECT_EQ(acc->op, Op::DEFINE_ACC);
    EXPECT_EQ(acc->src[0]->const_as_double(), identity);
    EXPECT_EQ(acc->src[1], r0);
    EXPECT_EQ(acc_update.src[1], alu(op, acc, v));
  }
}

TEST(Linearize, ReductionLoopNestsInsideTheOutputLoop) {
  // out[r0] = sum_r1 in[r0*8 + r1]
  NodeRef r0 = range(4, 0, AxisType::LOOP), r1 = range(8, 1, AxisType::REDUCE);
  NodeRef k = sink(store(r0, reduce(load(1, r0 * 8 + r1), {r1})));
  LinearProgram p = lower_kernel(k, "r_4__8");
  EXPECT_EQ(check_linear(p), "");
  EXPECT_EQ(p.globals.size(), 2u);
  int acc = find(p, [](const Node& n) { return n.op == Op::DEFINE_ACC; });
  int accumulate = find(p, [](const Node& n) { return n.op == Op::ACCUMULATE; });
  int st = find(p, [](const Node& n) { return n.op == Op::STORE; });
  EXPECT_LT(pos(p, r0), acc);
  EXPECT_LT(acc, pos(p, r1));
  EXPECT_LT(pos(p, r1), accumulate);
  EXPECT_LT(accumulate, end_of(p, r1));
  EXPECT_LT(end_of(p, r1), st);
  EXPECT_LT(st, end_of(p, r0));
  EXPECT_EQ(end_of(p, r0), static_cast<int>(p.ops.size()) - 1);
}

TEST(Linearize, LoopInvariantWorkIsHoistedOutOfTheReduction) {
  // out[r0] = sum_r1 (in1[r1] * in2[r0]): the in2 load depends only on r0
  NodeRef r0 = range(4, 0, AxisType::LOOP), r1 = range(8, 1, AxisType::REDUCE);
  NodeRef outer = load(2, r0);
  NodeRef k = sink(store(r0, reduce(load(1, r1) * outer, {r1})));
  LinearProgram p = lower_kernel(k, "hoist");
  EXPECT_EQ(check_linear(p), "");
  EXPECT_LT(pos(p, outer), pos(p, r1));
}

TEST(Linearize, SiblingReductionsGetSequentialLoops) {
  NodeRef r0 = range(4, 0, AxisType::LOOP), a = range(8, 1, AxisType::REDUCE),
          b = range(6, 2, AxisType::REDUCE);
  NodeRef k = sink(store(r0, reduce(load(1, r0 * 8 + a), {a}) + reduce(load(2, r0 * 6 + b), {b}, Op::MAX)));
  LinearProgram p = lower_kernel(k, "siblings");
  EXPECT_EQ(check_linear(p), "");
  int ea = end_of(p, a), eb = end_of(p, b);
  ASSERT_GE(ea, 0);
  ASSERT_GE(eb, 0);
  EXPECT_TRUE(ea < pos(p, b) || eb < pos(p, a)) << to_string(p);  // not nested
}

TEST(Linearize, NestedReductionsNest) {
  // out = sum_a max_b in[a*6 + b]
  NodeRef a = range(8, 0, AxisType::REDUCE), b = range(6, 1, AxisType::REDUCE);
  NodeRef k = sink(store(index_const(0), reduce(reduce(load(1, a * 6 + b), {b}, Op::MAX), {a})));
  LinearProgram p = lower_kernel(k, "nested");
  EXPECT_EQ(check_linear(p), "");
  EXPECT_LT(pos(p, a), pos(p, b));
  EXPECT_LT(end_of(p, b), end_of(p, a));
}

TEST(Linearize, IndexArithmeticIsSimplifiedBeforeLinearizing) {
  // ((r0*8 + r1) / 8) * 8 + (r0*8 + r1) % 8 is r0*8 + r1
  NodeRef r0 = range(4, 0, AxisType::LOOP), r1 = range(8, 1, AxisType::LOOP);
  NodeRef flat = r0 * 8 + r1;
  NodeRef k = sink(store(flat, load(1, (flat / 8) * 8 + flat % 8)));
  LinearProgram p = lower_kernel(k, "E_4_8");
  EXPECT_EQ(find(p, [](const Node& n) { return n.op == Op::IDIV || n.op == Op::MOD; }), -1) << to_string(p);
}

TEST(FuseMulacc, FloatDotProductsAccumulateWithOneRounding) {
  NodeRef r0 = range(4, 0, AxisType::LOOP), r1 = range(8, 1, AxisType::REDUCE);
  NodeRef k = sink(store(r0, reduce(load(1, r0 * 8 + r1) * load(2, r1), {r1})));
  LinearProgram p = lower_kernel(k, "dot");
  int acc = find(p, [](const Node& n) { return n.op == Op::ACCUMULATE; });
  ASSERT_GE(acc, 0);
  EXPECT_EQ(p.ops[acc]->src[1]->op, Op::MULACC) << to_string(p);
  EXPECT_EQ(find(p, [](const Node& n) { return n.op == Op::MUL && n.dtype == dtypes::float32; }), -1);
}

// Two products summed per reduction step (two matmuls into one output): acc + (a*b + c*d) becomes
// MULACC(c, d, MULACC(a, b, acc)), two FMAs, no float multiply or add left.
TEST(FuseMulacc, TwoProductsSummedPerStepAreTwoChainedFmas) {
  NodeRef r0 = range(4, 0, AxisType::LOOP), r1 = range(8, 1, AxisType::REDUCE);
  NodeRef terms = load(1, r0 * 8 + r1) * load(2, r1) + load(3, r0 * 8 + r1) * load(4, r1);
  LinearProgram p = lower_kernel(sink(store(r0, reduce(terms, {r1}))), "dot2");
  int acc = find(p, [](const Node& n) { return n.op == Op::ACCUMULATE; });
  ASSERT_GE(acc, 0);
  const NodeRef& outer = p.ops[acc]->src[1];
  ASSERT_EQ(outer->op, Op::MULACC) << to_string(p);
  ASSERT_EQ(outer->src[2]->op, Op::MULACC) << to_string(p);
  EXPECT_EQ(outer->src[2]->src[2], p.ops[acc]->src[0]) << to_string(p);  // the accumulator
  auto float_op = [](Op op) {
    return [op](const Node& n) { return n.op == op && n.dtype == dtypes::float32; };
  };
  EXPECT_EQ(find(p, float_op(Op::MUL)), -1) << to_string(p);
  EXPECT_EQ(find(p, float_op(Op::ADD)), -1) << to_string(p);
}

TEST(CheckLinear, RejectsUseBeforeDefinitionAndUnbalancedLoops) {
  NodeRef r0 = range(4, 0, AxisType::LOOP);
  NodeRef c = index_const(4);
  LinearProgram ok{"ok", {c, r0, make(Op::END, dtypes::void_, {r0})}, {}};
  EXPECT_EQ(check_linear(ok), "");
  LinearProgram unclosed{"unclosed", {c, r0}, {}};
  EXPECT_NE(check_linear(unclosed), "");
  LinearProgram early{"early", {r0, c, make(Op::END, dtypes::void_, {r0})}, {}};
  EXPECT_NE(check_linear(early), "");
  NodeRef after = r0 + 1;
  LinearProgram escaped{"escaped", {c, r0, make(Op::END, dtypes::void_, {r0}), after->src[1], after}, {}};
  EXPECT_NE(check_linear(escaped), "");
}

TEST(LinearProgramText, IndentsLoopBodies) {
  NodeRef r0 = range(4, 0, AxisType::LOOP);
  LinearProgram p = lower_kernel(sink(store(r0, load(1, r0))), "E_4");
  std::string s = to_string(p);
  EXPECT_NE(s.find("RANGE i64"), std::string::npos) << s;
  EXPECT_NE(s.find("  LOAD f32"), std::string::npos) << s;
}

}  // namespace
}  // namespace lg
