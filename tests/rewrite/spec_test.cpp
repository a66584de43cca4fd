// Specs: a graph is accepted when every node matches some rule (and passes its check) and the
// whole-graph check passes; otherwise the error names the rejected node.
#include <gtest/gtest.h>

#include "base/config.h"
#include "ir/build.h"
#include "rewrite/rewrite.h"
#include "rewrite/spec.h"

namespace lg {
namespace {

NodeRef var(const std::string& name, int64_t lo = 0, int64_t hi = 9) {
  return make(Op::DEFINE_VAR, dtypes::index, {}, VarArg{name, lo, hi});
}

// Index arithmetic with additions only, over variables and non-negative constants.
Spec adds_only() {
  return Spec{"adds only",
              {{Pat::op(Op::DEFINE_VAR), nullptr},
               {Pat::cvar("c"), [](const Match& m) { return m["c"]->const_as_int() >= 0; }},
               {Pat::op(Op::ADD), nullptr}},
              nullptr};
}

TEST(Spec, AcceptsAGraphWhoseEveryNodeMatches) {
  NodeRef x = var("x");
  EXPECT_EQ(spec_error(x + 1 + x, adds_only()), std::nullopt);
}

TEST(Spec, RejectsANodeNoRuleMatchesAndNamesIt) {
  NodeRef x = var("x");
  std::optional<std::string> e = spec_error(x * 2 + 1, adds_only());
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(*e,
            "spec \"adds only\" rejects node: MUL i64 (DEFINE_VAR, CONST)\n"
            "in graph:\n"
            "%0 = DEFINE_VAR i64 {x,0..9}\n"
            "%1 = CONST i64 2\n"
            "%2 = MUL i64 (%0, %1)\n"
            "%3 = CONST i64 1\n"
            "%4 = ADD i64 (%2, %3)\n");
}

TEST(Spec, RejectsANodeWhoseRuleCheckFails) {
  NodeRef x = var("x");
  std::optional<std::string> e = spec_error(x + -3, adds_only());
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rfind("spec \"adds only\" rejects node: CONST i64 -3\n", 0), 0u) << *e;
}

TEST(Spec, ReportsTheFirstRejectedNodeInTopologicalOrder) {
  NodeRef x = var("x");
  std::optional<std::string> e = spec_error((x / 2) * 3, adds_only());
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rfind("spec \"adds only\" rejects node: IDIV", 0), 0u) << *e;
}

TEST(Spec, AcceptsANodeWhenAnyOfSeveralMatchingRulesPasses) {
  Spec s{"either", {{Pat::cvar(), [](const Match&) { return false; }}, {Pat::cvar(), nullptr}}, nullptr};
  EXPECT_EQ(spec_error(index_const(5), s), std::nullopt);
}

TEST(Spec, WholeGraphCheckRunsAfterEveryNodePassed) {
  Spec s = adds_only();
  s.name = "one add";
  s.whole = [](const NodeRef& root) -> std::string {
    return root->op == Op::ADD ? "" : "root is not an ADD";
  };
  NodeRef x = var("x");
  EXPECT_EQ(spec_error(x + 1, s), std::nullopt);
  std::optional<std::string> e = spec_error(x, s);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(*e, "spec \"one add\" rejects graph: root is not an ADD\n%0 = DEFINE_VAR i64 {x,0..9}\n");
}

TEST(Spec, WholeGraphCheckIsNotReachedWhenANodeIsRejected) {
  Spec s = adds_only();
  bool ran = false;
  s.whole = [&](const NodeRef&) -> std::string {
    ran = true;
    return "";
  };
  NodeRef x = var("x");
  EXPECT_TRUE(spec_error(x * 2, s).has_value());
  EXPECT_FALSE(ran);
}

TEST(Spec, VerifyStageDoesNothingAtSpecZero) {
  int saved = config().spec;
  config().spec = 0;
  NodeRef x = var("x");
  verify_stage(x * 2, adds_only(), "stage that would fail");  // must return
  config().spec = saved;
  SUCCEED();
}

using SpecDeathTest = ::testing::Test;

TEST_F(SpecDeathTest, VerifyAbortsNamingTheStageAndNode) {
  NodeRef x = var("x");
  NodeRef bad = x * 2;
  EXPECT_DEATH(verify(bad, adds_only(), "after lowering"),
               "at after lowering: spec \"adds only\" rejects node: MUL i64 \\(DEFINE_VAR, CONST\\)");
}

TEST_F(SpecDeathTest, VerifyStageAbortsAtSpecOne) {
  NodeRef x = var("x");
  NodeRef bad = x * 2;
  EXPECT_DEATH(
      {
        config().spec = 1;
        verify_stage(bad, adds_only(), "stage one");
      },
      "at stage one: spec \"adds only\" rejects node: MUL");
}

// With SPEC=2 a rewrite that names its spec verifies its result.
TEST_F(SpecDeathTest, RewriteVerifiesItsResultAtSpecTwo) {
  NodeRef x = var("x");
  NodeRef e = x + 0;
  Spec s = adds_only();
  PatternMatcher to_mul({{"x+0 -> x*1", Pat::any("x") + 0, [](const Match& m) { return m["x"] * 1; }}});
  EXPECT_DEATH(
      {
        config().spec = 2;
        rewrite(e, to_mul, {.name = "make a mul", .spec = &s});
      },
      "at make a mul: spec \"adds only\" rejects node: MUL");
}

TEST(Spec, RewriteDoesNotVerifyBelowSpecTwo) {
  int saved = config().spec;
  config().spec = 1;
  NodeRef x = var("x");
  Spec s = adds_only();
  PatternMatcher to_mul({{"x+0 -> x*1", Pat::any("x") + 0, [](const Match& m) { return m["x"] * 1; }}});
  NodeRef out = rewrite(x + 0, to_mul, {.name = "unverified", .spec = &s});
  config().spec = saved;
  EXPECT_EQ(out, x * 1);
}

}  // namespace
}  // namespace lg
