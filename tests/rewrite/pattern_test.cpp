// The pattern DSL: what each pattern form matches, what it captures, and the matcher's rule order.
#include <gtest/gtest.h>

#include "ir/build.h"
#include "rewrite/matcher.h"
#include "rewrite/pattern.h"

namespace lg {
namespace {

NodeRef var(const std::string& name, int64_t lo = 0, int64_t hi = 9) {
  return make(Op::DEFINE_VAR, dtypes::index, {}, VarArg{name, lo, hi});
}

bool matches(const Pat& p, const NodeRef& n) {
  Captures caps;
  return p.match(n.get(), caps);
}

// The captures of a successful match (fails the test when it does not match). Captures borrow the
// pattern's names, so the pattern must outlive them.
Captures capture(const Pat& p, const NodeRef& n) {
  Captures caps;
  EXPECT_TRUE(p.match(n.get(), caps)) << "pattern does not match";
  return caps;
}

// ---- root op ----

TEST(Pattern, OpMatchesOnlyThatOp) {
  NodeRef x = var("x"), y = var("y");
  EXPECT_TRUE(matches(Pat::op(Op::ADD), x + y));
  EXPECT_FALSE(matches(Pat::op(Op::ADD), x * y));
  EXPECT_FALSE(matches(Pat::op(Op::ADD), x));
}

TEST(Pattern, OpsMatchesAnyOpOfTheSet) {
  NodeRef x = var("x"), y = var("y");
  Pat p = Pat::ops(op_set({Op::ADD, Op::MUL}));
  EXPECT_TRUE(matches(p, x + y));
  EXPECT_TRUE(matches(p, x * y));
  EXPECT_FALSE(matches(p, x / y));
}

TEST(Pattern, AnyMatchesEveryNode) {
  EXPECT_TRUE(matches(Pat::any(), var("x")));
  EXPECT_TRUE(matches(Pat::any(), index_const(1)));
  EXPECT_TRUE(matches(Pat::any(), var("x") * 2));
}

TEST(Pattern, RootOpsListsTheOpsAPatternCanMatch) {
  EXPECT_EQ(Pat::any().root_ops().count(), static_cast<size_t>(kNumOps));
  EXPECT_EQ(Pat::op(Op::ADD).root_ops(), op_set({Op::ADD}));
  EXPECT_EQ(Pat::ops(op_set({Op::MUL, Op::MAX})).root_ops(), op_set({Op::MUL, Op::MAX}));
  EXPECT_EQ(Pat::cvar("c").root_ops(), op_set({Op::CONST}));
}

// ---- constants ----

TEST(Pattern, CvarMatchesAnyConstantAndCapturesIt) {
  NodeRef c = index_const(7);
  EXPECT_EQ(capture(Pat::cvar("c"), c).find("c"), c.get());
  EXPECT_TRUE(matches(Pat::cvar(), cnst(dtypes::float16, 0.5)));
  EXPECT_FALSE(matches(Pat::cvar("c"), var("x")));
}

TEST(Pattern, CnstMatchesTheValueInAnyDtype) {
  EXPECT_TRUE(matches(Pat::cnst(0), index_const(0)));
  EXPECT_TRUE(matches(Pat::cnst(0), cnst(dtypes::float32, 0.0)));
  EXPECT_TRUE(matches(Pat::cnst(0), cnst(dtypes::float32, -0.0)));  // -0.0 == 0 as a number
  EXPECT_TRUE(matches(Pat::cnst(1), cnst(dtypes::float16, 1.0)));
  EXPECT_TRUE(matches(Pat::cnst(1), bool_const(true)));
  EXPECT_FALSE(matches(Pat::cnst(0), index_const(1)));
  EXPECT_FALSE(matches(Pat::cnst(0.5), cnst(dtypes::float32, 0.25)));
  EXPECT_FALSE(matches(Pat::cnst(0), var("x", 0, 0)));  // a variable that can only be 0 is no CONST
}

// ---- sources and captures ----

TEST(Pattern, CapturesEachNamedSource) {
  NodeRef x = var("x");
  NodeRef c = index_const(3);
  Pat p = Pat::any("x") + Pat::cvar("c");
  Captures caps = capture(p, x + c);
  EXPECT_EQ(caps.find("x"), x.get());
  EXPECT_EQ(caps.find("c"), c.get());
  EXPECT_EQ(caps.find("y"), nullptr);
}

TEST(Pattern, NamedCapturesTheRoot) {
  NodeRef e = var("x") * 2;
  EXPECT_EQ(capture(Pat::op(Op::MUL).named("m"), e).find("m"), e.get());
}

TEST(Pattern, SourcePatternsMustAllMatch) {
  NodeRef x = var("x"), y = var("y");
  EXPECT_FALSE(matches(Pat::any("x") + Pat::cvar("c"), x + y));
  EXPECT_FALSE(matches(Pat::op(Op::ADD, {Pat::op(Op::MUL), Pat::any()}), x + y));
  EXPECT_TRUE(matches(Pat::op(Op::ADD, {Pat::op(Op::MUL), Pat::any()}), x * y + y));
}

TEST(Pattern, ExplicitSourcesMustHaveTheSameCount) {
  NodeRef x = var("x");
  EXPECT_FALSE(matches(Pat::op(Op::SINK, {Pat::any()}), make(Op::SINK, dtypes::void_, {x, x})));
  EXPECT_TRUE(matches(Pat::op(Op::SINK, {Pat::any(), Pat::any()}), make(Op::SINK, dtypes::void_, {x, x})));
  EXPECT_TRUE(matches(Pat::op(Op::SINK, {}), make(Op::SINK, dtypes::void_, {})));
  EXPECT_FALSE(matches(Pat::op(Op::SINK, {}), make(Op::SINK, dtypes::void_, {x})));
}

TEST(Pattern, OpWithoutSourcesMatchesAnySourceCount) {
  NodeRef x = var("x");
  EXPECT_TRUE(matches(Pat::op(Op::SINK), make(Op::SINK, dtypes::void_, {})));
  EXPECT_TRUE(matches(Pat::op(Op::SINK), make(Op::SINK, dtypes::void_, {x, x, x})));
}

TEST(Pattern, ARepeatedNameMustBindTheSameNode) {
  NodeRef a = var("a"), b = var("b");
  Pat twice = Pat::any("x") + Pat::any("x");
  EXPECT_TRUE(matches(twice, a + a));
  EXPECT_FALSE(matches(twice, a + b));
  Pat nested = (Pat::any("x") * Pat::cvar("c")) + Pat::any("x");
  EXPECT_TRUE(matches(nested, a * 3 + a));
  EXPECT_FALSE(matches(nested, a * 3 + b));
  EXPECT_EQ(capture(nested, a * 3 + a).find("x"), a.get());
}

TEST(Pattern, ARepeatedNameAtTheRootAndBelowMustAgree) {
  NodeRef a = var("a");
  Pat p = Pat::op(Op::NEG, {Pat::any("x")}).named("x");  // a NEG that is its own source: never
  EXPECT_FALSE(matches(p, alu(Op::NEG, a)));
}

// ---- commutativity and order ----

TEST(Pattern, CommutativeOpTriesBothSourceOrders) {
  NodeRef x = var("x");
  NodeRef c = index_const(3);
  Pat p = Pat::any("x") + Pat::cvar("c");
  Captures swapped = capture(p, c + x);  // any("x") first matches the CONST, then backs off
  EXPECT_EQ(swapped.find("x"), x.get());
  EXPECT_EQ(swapped.find("c"), c.get());
  EXPECT_EQ(swapped.items.size(), 2u);  // no capture left over from the failed first order
  EXPECT_TRUE(matches(Pat::any("x") * Pat::cvar("c"), c * x));
  EXPECT_TRUE(matches(Pat::op(Op::MAX, {Pat::any(), Pat::cvar()}), alu(Op::MAX, c, x)));
}

TEST(Pattern, NonCommutativeOpMatchesSourcesInOrder) {
  NodeRef x = var("x");
  NodeRef c = index_const(3);
  EXPECT_TRUE(matches(Pat::any("x") / Pat::cvar("c"), x / c));
  EXPECT_FALSE(matches(Pat::any("x") / Pat::cvar("c"), c / x));
  EXPECT_FALSE(matches(Pat::op(Op::CMPLT, {Pat::any(), Pat::cvar()}), lt(c, x)));
}

TEST(Pattern, OrderedMatchesACommutativeOpInOrderOnly) {
  NodeRef x = var("x");
  NodeRef c = index_const(3);
  Pat p = (Pat::any("x") + Pat::cvar("c")).ordered();
  EXPECT_TRUE(matches(p, x + c));
  EXPECT_FALSE(matches(p, c + x));
}

TEST(Pattern, OpsIsCommutativeOnlyWhenEveryOpIs) {
  NodeRef x = var("x");
  NodeRef c = index_const(3);
  EXPECT_TRUE(matches(Pat::ops(op_set({Op::ADD, Op::MUL}), {Pat::any(), Pat::cvar()}), c * x));
  EXPECT_FALSE(matches(Pat::ops(op_set({Op::ADD, Op::IDIV}), {Pat::any(), Pat::cvar()}), c + x));
  EXPECT_TRUE(matches(Pat::ops(op_set({Op::ADD, Op::IDIV}), {Pat::any(), Pat::cvar()}), x + c));
}

TEST(Pattern, PrefixMatchesTheFirstSourcesAndIgnoresTheRest) {
  NodeRef a = var("a"), b = var("b"), c = var("c");
  NodeRef sink = make(Op::SINK, dtypes::void_, {a, b, c});
  Pat p = Pat::op(Op::SINK, {Pat::any("first")}).prefix();
  EXPECT_EQ(capture(p, sink).find("first"), a.get());
  EXPECT_FALSE(matches(Pat::op(Op::SINK, {Pat::any("first")}), sink));
  EXPECT_FALSE(matches(p, make(Op::SINK, dtypes::void_, {})));  // needs at least the given sources
  EXPECT_FALSE(matches(Pat::op(Op::SINK, {Pat::cvar()}).prefix(), sink));
}

// ---- constraints ----

TEST(Pattern, DtypeConstrainsTheExactDtype) {
  NodeRef f = cnst(dtypes::float32, 1.0), h = cnst(dtypes::float16, 1.0);
  EXPECT_TRUE(matches(Pat::any().dtype(dtypes::float32), f));
  EXPECT_FALSE(matches(Pat::any().dtype(dtypes::float32), h));
  EXPECT_FALSE(matches(Pat::any().dtype(dtypes::float32.vec(4)), f));
}

TEST(Pattern, DtypeIfConstrainsByPredicate) {
  EXPECT_TRUE(matches(Pat::cvar().dtype_if(is_int), index_const(1)));
  EXPECT_FALSE(matches(Pat::cvar().dtype_if(is_int), cnst(dtypes::float32, 1.0)));
  EXPECT_FALSE(matches(Pat::cvar().dtype_if(is_int), bool_const(true)));
  EXPECT_TRUE(matches(Pat::cvar().dtype_if(is_float), cnst(dtypes::bfloat16, 1.0)));
}

TEST(Pattern, ArgConstrainsTheArgument) {
  NodeRef r0 = range(4, 0, AxisType::LOOP), r1 = range(4, 1, AxisType::REDUCE);
  Pat loop0 = Pat::op(Op::RANGE).arg(RangeArg{0, AxisType::LOOP});
  EXPECT_TRUE(matches(loop0, r0));
  EXPECT_FALSE(matches(loop0, r1));
  EXPECT_TRUE(matches(Pat::cvar().arg(int64_t{4}), index_const(4)));
  EXPECT_FALSE(matches(Pat::cvar().arg(int64_t{4}), index_const(5)));
}

TEST(Pattern, ArgComparesFloatsBitwise) {
  Pat zero = Pat::cvar().arg(0.0);
  EXPECT_TRUE(matches(zero, cnst(dtypes::float32, 0.0)));
  EXPECT_FALSE(matches(zero, cnst(dtypes::float32, -0.0)));
}

TEST(Pattern, WhereAddsAPredicateOnTheNode) {
  Pat small = Pat::any("x").where([](const Node& n) { return n.vmax < 10; });
  EXPECT_TRUE(matches(small, var("a", 0, 9)));
  EXPECT_FALSE(matches(small, var("b", 0, 10)));
  EXPECT_TRUE(matches(small + Pat::cvar(), index_const(2) + var("a", 0, 9)));  // tried in both orders
}

TEST(Pattern, FailedMatchLeavesEarlierCapturesAlone) {
  NodeRef x = var("x"), y = var("y");
  Captures caps;
  caps.items.emplace_back("keep", x.get());
  EXPECT_FALSE((Pat::any("a") + Pat::cvar("c")).match((x + y).get(), caps));
  ASSERT_EQ(caps.items.size(), 1u);
  EXPECT_EQ(caps.find("keep"), x.get());
}

TEST(Pattern, AnEarlierCaptureConstrainsALaterMatch) {
  NodeRef x = var("x"), y = var("y");
  Captures caps;
  caps.items.emplace_back("x", y.get());
  EXPECT_FALSE(Pat::any("x").match(x.get(), caps));
  EXPECT_TRUE(Pat::any("x").match(y.get(), caps));
}

TEST(Pattern, OperatorsWithANumberMatchThatConstant) {
  NodeRef x = var("x");
  EXPECT_TRUE(matches(Pat::any("x") + 1, x + 1));
  EXPECT_FALSE(matches(Pat::any("x") + 1, x + 2));
  EXPECT_TRUE(matches(Pat::any("x") * 2, index_const(2) * x));
  EXPECT_TRUE(matches(Pat::any("x") / 4, x / 4));
  EXPECT_TRUE(matches(Pat::any("x") % 4, x % 4));
  EXPECT_FALSE(matches(Pat::any("x") % 4, x / 4));
}

// ---- the matcher ----

RuleFn returns(NodeRef r) {
  return [r](const Match&) { return r; };
}

TEST(PatternMatcher, TheFirstMatchingRuleWins) {
  NodeRef x = var("x"), first = var("first"), second = var("second");
  PatternMatcher pm(
      {{"first", Pat::any() + Pat::any(), returns(first)}, {"second", Pat::op(Op::ADD), returns(second)}});
  const Rule* fired = nullptr;
  EXPECT_EQ(pm.rewrite(x + x, nullptr, &fired), first);
  ASSERT_NE(fired, nullptr);
  EXPECT_EQ(fired->name, "first");
}

TEST(PatternMatcher, ADecliningRuleLetsTheNextOneTry) {
  NodeRef x = var("x"), second = var("second");
  PatternMatcher pm({{"declines", Pat::op(Op::ADD), [](const Match&) { return NodeRef(); }},
                     {"returns itself", Pat::op(Op::ADD), [](const Match& m) { return m.root(); }},
                     {"second", Pat::op(Op::ADD), returns(second)}});
  const Rule* fired = nullptr;
  EXPECT_EQ(pm.rewrite(x + x, nullptr, &fired), second);
  EXPECT_EQ(fired->name, "second");
}

TEST(PatternMatcher, NoMatchingRuleGivesNull) {
  PatternMatcher pm({{"adds", Pat::op(Op::ADD), returns(var("y"))}});
  EXPECT_FALSE(pm.rewrite(var("x") * 2, nullptr));
}

TEST(PatternMatcher, AnAnyRootRuleSeesEveryOpInListOrder) {
  NodeRef x = var("x"), any_result = var("any"), mul_result = var("mul");
  PatternMatcher pm(
      {{"mul", Pat::op(Op::MUL), returns(mul_result)}, {"any", Pat::any(), returns(any_result)}});
  EXPECT_EQ(pm.rewrite(x * 2, nullptr), mul_result);
  EXPECT_EQ(pm.rewrite(x + 2, nullptr), any_result);
  EXPECT_EQ(pm.rewrite(x, nullptr), any_result);
}

TEST(PatternMatcher, SumRunsTheRulesOfTheLeftOperandFirst) {
  NodeRef x = var("x"), a = var("a"), b = var("b");
  PatternMatcher pa({{"a", Pat::op(Op::ADD), returns(a)}});
  PatternMatcher pb({{"b", Pat::op(Op::ADD), returns(b)}});
  EXPECT_EQ((pa + pb).rewrite(x + x, nullptr), a);
  EXPECT_EQ((pb + pa).rewrite(x + x, nullptr), b);
  EXPECT_EQ((pa + pb).rules().size(), 2u);
}

TEST(PatternMatcher, CallbackReadsCapturesByName) {
  NodeRef x = var("x");
  PatternMatcher pm({{"x*1 -> x", Pat::any("x") * 1, [](const Match& m) { return m["x"]; }}});
  EXPECT_EQ(pm.rewrite(x * 1, nullptr), x);
  EXPECT_EQ(pm.rewrite(index_const(1) * x, nullptr), x);
}

using PatternMatcherDeathTest = ::testing::Test;
TEST_F(PatternMatcherDeathTest, ReadingAnUnboundCaptureAborts) {
  PatternMatcher pm({{"reads y", Pat::any("x") * 1, [](const Match& m) { return m["y"]; }}});
  NodeRef e = var("x") * 1;
  EXPECT_DEATH(pm.rewrite(e, nullptr), "rule reads capture \"y\" that its pattern does not bind");
}

}  // namespace
}  // namespace lg
