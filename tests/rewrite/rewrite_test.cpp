// The rewrite driver: fixed point, bottom-up and top-down order, memoization, rule order, context,
// hooks, non-termination detection, DEBUG=5 printing, and deep graphs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/config.h"
#include "ir/build.h"
#include "ir/graph.h"
#include "rewrite/rewrite.h"

namespace lg {
namespace {

NodeRef var(const std::string& name, int64_t lo = 0, int64_t hi = 9) {
  return make(Op::DEFINE_VAR, dtypes::index, {}, VarArg{name, lo, hi});
}
NodeRef neg(const NodeRef& x) { return alu(Op::NEG, x); }

// x + 0 -> x
Rule drop_add_zero() {
  return {"x+0 -> x", Pat::any("x") + 0, [](const Match& m) { return m["x"]; }};
}

// NEG(a + b) -> NEG(a) + NEG(b), and NEG(NEG(x)) -> x: a rule family that pushes NEG down.
PatternMatcher pm_push_neg() {
  return PatternMatcher({
      {"push neg", Pat::op(Op::NEG, {Pat::any("a") + Pat::any("b")}),
       [](const Match& m) { return neg(m["a"]) + neg(m["b"]); }},
      {"neg neg", Pat::op(Op::NEG, {Pat::op(Op::NEG, {Pat::any("x")})}),
       [](const Match& m) { return m["x"]; }},
  });
}

// ---- fixed point ----

TEST(Rewrite, RewritesBottomUpToAFixedPoint) {
  NodeRef a = var("a"), b = var("b");
  NodeRef e = ((a + 0) + 0) * (b + 0) + 0;
  EXPECT_EQ(rewrite(e, PatternMatcher({drop_add_zero()}), {.name = "drop zeros"}), a * b);
}

TEST(Rewrite, WithNoMatchingRuleReturnsTheRootItself) {
  NodeRef e = var("a") * 3;
  EXPECT_EQ(rewrite(e, PatternMatcher({drop_add_zero()}), {.name = "nothing to do"}), e);
}

// A rule's result is rewritten too, including sources the rule just created.
TEST(Rewrite, RewritesTheNodesARuleCreates) {
  NodeRef a = var("a");
  PatternMatcher pm({drop_add_zero(), {"x*2 -> x + (x+0)", Pat::any("x") * 2, [](const Match& m) {
                                         return m["x"] + (m["x"] + 0);
                                       }}});
  EXPECT_EQ(rewrite((a + 0) * 2, pm, {.name = "double"}), a + a);
}

TEST(Rewrite, RewritesTheUsersOfARewrittenNode) {
  NodeRef a = var("a");
  // (a*2) -> (a+a); the user ((a+a) + 0) then matches x+0.
  PatternMatcher pm(
      {drop_add_zero(), {"x*2 -> x+x", Pat::any("x") * 2, [](const Match& m) { return m["x"] + m["x"]; }}});
  EXPECT_EQ(rewrite((a * 2 + 0) * 5, pm, {.name = "users"}), (a + a) * 5);
}

// ---- order of traversal ----

// NEG(NEG(x + y) + z): bottom up, the inner NEG is pushed first and then pushed again from above
// (five rule applications); top down, the outer NEG is pushed first and meets the inner one (two).
TEST(Rewrite, BottomUpRewritesSourcesBeforeTheirUsers) {
  NodeRef x = var("x"), y = var("y"), z = var("z");
  NodeRef inner = neg(x + y), root = neg(inner + z);
  std::vector<const Node*> before;
  RewriteOptions opts{.name = "push neg up", .on_rule = [&](const Rule&, const NodeRef& b, const NodeRef&) {
                        before.push_back(b.get());
                      }};
  EXPECT_EQ(rewrite(root, pm_push_neg(), opts), (x + y) + neg(z));
  ASSERT_EQ(before.size(), 5u);
  EXPECT_EQ(before[0], inner.get());
}

TEST(Rewrite, TopDownRewritesANodeBeforeItsSources) {
  NodeRef x = var("x"), y = var("y"), z = var("z");
  NodeRef inner = neg(x + y), root = neg(inner + z);
  std::vector<NodeRef> before;  // held: the intermediate nodes die with the rewrite
  RewriteOptions opts{.name = "push neg down",
                      .top_down = true,
                      .on_rule = [&](const Rule&, const NodeRef& b, const NodeRef&) { before.push_back(b); }};
  EXPECT_EQ(rewrite(root, pm_push_neg(), opts), (x + y) + neg(z));
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0], root);
  EXPECT_EQ(before[1], neg(neg(x + y)));
}

TEST(Rewrite, TopDownRewritesANodeAgainAfterItsSourcesChanged) {
  NodeRef a = var("a");
  // (a+0)*2 does not match var*2 on the way down; once its source became a, a*2 does.
  PatternMatcher pm({drop_add_zero(),
                     {"var*2 -> var+var", Pat::op(Op::DEFINE_VAR).named("x") * 2,
                      [](const Match& m) { return m["x"] + m["x"]; }}});
  EXPECT_EQ(rewrite((a + 0) * 2 * 7, pm, {.name = "again", .top_down = true}), (a + a) * 7);
}

// ---- memoization ----

TEST(Rewrite, VisitsEachNodeOfASharedGraphOnce) {
  NodeRef x = var("x");
  for (int i = 0; i < 30; i++) x = x + x;  // 31 distinct nodes, 2^31 - 1 as a tree
  int calls = 0;
  PatternMatcher pm({{"count", Pat::any(), [&](const Match&) {
                        calls++;
                        return NodeRef();
                      }}});
  EXPECT_EQ(rewrite(x, pm, {.name = "count visits"}), x);
  EXPECT_EQ(calls, 31);
}

TEST(Rewrite, RewritesASharedSubgraphOnce) {
  NodeRef a = var("a");
  NodeRef s = a + 0;
  int calls = 0;
  PatternMatcher pm({{"x+0 -> x", Pat::any("x") + 0, [&](const Match& m) {
                        calls++;
                        return m["x"];
                      }}});
  EXPECT_EQ(rewrite(s * s + s * 3 + s, pm, {.name = "shared"}), a * a + a * 3 + a);
  EXPECT_EQ(calls, 1);
}

// ---- rules ----

TEST(Rewrite, TheFirstMatchingRuleWins) {
  NodeRef a = var("a"), first = var("first"), second = var("second");
  PatternMatcher pm({{"first", Pat::any("x") + 0, [&](const Match&) { return first; }},
                     {"second", Pat::any("x") + 0, [&](const Match&) { return second; }}});
  EXPECT_EQ(rewrite(a + 0, pm, {.name = "order"}), first);
}

TEST(Rewrite, AnEmptyResultDeclinesAndLaterRulesStillApply) {
  NodeRef a = var("a");
  int declined = 0;
  PatternMatcher pm({{"declines", Pat::any("x") + 0,
                      [&](const Match&) {
                        declined++;
                        return NodeRef();
                      }},
                     drop_add_zero()});
  EXPECT_EQ(rewrite(a + 0, pm, {.name = "decline"}), a);
  EXPECT_EQ(declined, 1);
}

TEST(Rewrite, OnlyDecliningRulesLeaveTheGraphUnchanged) {
  NodeRef e = var("a") + 0;
  PatternMatcher pm({{"declines", Pat::any("x") + 0, [](const Match&) { return NodeRef(); }}});
  EXPECT_EQ(rewrite(e, pm, {.name = "decline all"}), e);
}

struct Stats {
  int folded = 0;
  std::vector<std::string> names;
};

TEST(Rewrite, PassesTheContextToEveryRule) {
  NodeRef a = var("a"), b = var("b");
  Stats stats;
  PatternMatcher pm({{"x+0 -> x", Pat::any("x") + 0, [](const Match& m) {
                        Stats& s = m.ctx<Stats>();
                        s.folded++;
                        s.names.push_back(m["x"]->get_arg<VarArg>().name);
                        return m["x"];
                      }}});
  EXPECT_EQ(rewrite((a + 0) * (b + 0), pm, {.name = "with ctx"}, std::any(&stats)), a * b);
  EXPECT_EQ(stats.folded, 2);
  EXPECT_EQ(stats.names, (std::vector<std::string>{"a", "b"}));
}

TEST(Rewrite, OnRuleSeesEachApplicationWithItsRuleAndBothNodes) {
  NodeRef a = var("a");
  std::vector<std::string> seen;
  RewriteOptions opts{.name = "hooked",
                      .on_rule = [&](const Rule& r, const NodeRef& before, const NodeRef& after) {
                        seen.push_back(r.name + ": " + std::string(op_name(before->op)) + " -> " +
                                       std::string(op_name(after->op)));
                      }};
  EXPECT_EQ(rewrite((a + 0) * 2 + 0, PatternMatcher({drop_add_zero()}), opts), a * 2);
  EXPECT_EQ(seen, (std::vector<std::string>{"x+0 -> x: ADD -> DEFINE_VAR", "x+0 -> x: ADD -> MUL"}));
}

// ---- non-termination ----

using RewriteDeathTest = ::testing::Test;

TEST_F(RewriteDeathTest, APairOfRulesUndoingEachOtherAborts) {
  PatternMatcher pm({{"one to two", Pat::cnst(1), [](const Match&) { return index_const(2); }},
                     {"two to one", Pat::cnst(2), [](const Match&) { return index_const(1); }}});
  NodeRef one = index_const(1);
  EXPECT_DEATH(rewrite(one, pm, {.name = "ping pong"}),
               "rewrite \"ping pong\" does not terminate .*last rule: \"two to one\"");
}

TEST_F(RewriteDeathTest, ARuleWhoseResultContainsItsInputAborts) {
  PatternMatcher pm({{"wrap in neg", Pat::op(Op::DEFINE_VAR), [](const Match& m) { return neg(m.root()); }}});
  NodeRef x = var("x");
  EXPECT_DEATH(rewrite(x, pm, {.name = "grow"}),
               "rewrite \"grow\" does not terminate \\(a rule's result contains the node being rewritten\\); "
               "last rule: \"wrap in neg\"");
}

TEST_F(RewriteDeathTest, RulesCyclingOnOneNodeTopDownAbort) {
  PatternMatcher pm({{"one to two", Pat::cnst(1), [](const Match&) { return index_const(2); }},
                     {"two to one", Pat::cnst(2), [](const Match&) { return index_const(1); }}});
  NodeRef one = index_const(1);
  EXPECT_DEATH(
      rewrite(one, pm, {.name = "spin", .top_down = true}),
      "rewrite \"spin\" does not terminate \\(rules cycle on one node\\); last rule: \"two to one\"");
}

TEST_F(RewriteDeathTest, RunningPastMaxStepsAborts) {
  PatternMatcher pm(
      {{"count up", Pat::cvar("c"), [](const Match& m) { return index_const(m["c"]->const_as_int() + 1); }}});
  NodeRef zero = index_const(0);
  EXPECT_DEATH(rewrite(zero, pm, {.name = "forever", .max_steps = 100}),
               "rewrite \"forever\" does not terminate \\(more than max_steps rule applications\\); last "
               "rule: \"count up\"");
}

TEST_F(RewriteDeathTest, AnUnnamedRewriteAborts) {
  NodeRef x = var("x");
  EXPECT_DEATH(rewrite(x, PatternMatcher({drop_add_zero()}), {}), "every rewrite must be named");
}

// ---- DEBUG=5 ----

TEST(Rewrite, DebugFivePrintsTheGraphAfterANamedRewrite) {
  NodeRef a = var("a");
  int saved = config().debug;
  config().debug = 5;
  testing::internal::CaptureStderr();
  rewrite(a * 2 + 0, PatternMatcher({drop_add_zero()}), {.name = "drop zeros"});
  std::string printed = testing::internal::GetCapturedStderr();
  config().debug = saved;
  EXPECT_EQ(printed,
            "=== rewrite \"drop zeros\" ===\n"
            "%0 = DEFINE_VAR i64 {a,0..9}\n"
            "%1 = CONST i64 2\n"
            "%2 = MUL i64 (%0, %1)\n");
}

TEST(Rewrite, DebugBelowFivePrintsNothing) {
  NodeRef a = var("a");
  int saved = config().debug;
  config().debug = 4;
  testing::internal::CaptureStderr();
  rewrite(a + 0, PatternMatcher({drop_add_zero()}), {.name = "quiet"});
  std::string printed = testing::internal::GetCapturedStderr();
  config().debug = saved;
  EXPECT_EQ(printed, "");
}

// ---- deep graphs ----

TEST(Rewrite, RewritesA100000DeepChainWithoutRecursion) {
  NodeRef a = var("a");
  NodeRef e = a;
  for (int i = 0; i < 100'000; i++) e = e + 0;
  EXPECT_EQ(rewrite(e, PatternMatcher({drop_add_zero()}), {.name = "deep"}), a);
}

TEST(Rewrite, RewritesA100000DeepChainTopDown) {
  NodeRef a = var("a");
  NodeRef e = a;
  for (int i = 0; i < 100'000; i++) e = neg(e);
  EXPECT_EQ(rewrite(e, pm_push_neg(), {.name = "deep negs", .top_down = true}), a);  // an even count cancels
  EXPECT_EQ(rewrite(neg(e), pm_push_neg(), {.name = "odd negs"}), neg(a));
}

}  // namespace
}  // namespace lg
