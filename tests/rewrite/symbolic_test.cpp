// One test per rule of pm_symbolic: each builds an expression, simplifies it, and asserts the exact
// result node (nodes are interned, so pointer equality is structural equality) and that the rule
// named in the test fired on the way.
#include <gtest/gtest.h>

#include <limits>
#include <set>
#include <string>

#include "ir/build.h"
#include "ir/graph.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/symbolic.h"

namespace lg {
namespace {

struct Simplified {
  NodeRef node;
  std::set<std::string> fired;
};

Simplified simplify(const NodeRef& n, const PatternMatcher& pm = pm_symbolic()) {
  Simplified s;
  s.node =
      rewrite(n, pm, {.name = "symbolic test", .on_rule = [&](const Rule& r, const NodeRef&, const NodeRef&) {
                        s.fired.insert(r.name);
                      }});
  return s;
}

// Simplifying `in` gives exactly `want`, and rule `rule` fired.
void expect_rule(const NodeRef& in, const NodeRef& want, const std::string& rule) {
  Simplified s = simplify(in);
  EXPECT_EQ(s.node, want) << "input:\n"
                          << to_string(in) << "got:\n"
                          << to_string(s.node) << "want:\n"
                          << to_string(want);
  EXPECT_TRUE(s.fired.count(rule)) << rule << " did not fire on:\n" << to_string(in);
}

NodeRef var(const std::string& name, int64_t lo, int64_t hi) {
  return make(Op::DEFINE_VAR, dtypes::index, {}, VarArg{name, lo, hi});
}
NodeRef rng(int64_t end, int64_t id) { return range(end, id, AxisType::LOOP); }
NodeRef neg(const NodeRef& x) { return alu(Op::NEG, x); }
NodeRef max(const NodeRef& a, const NodeRef& b) { return alu(Op::MAX, a, b); }
NodeRef c(int64_t v) { return index_const(v); }

// ---- a gated INDEX's address ----

NodeRef gated_index(const NodeRef& i, const NodeRef& gate) {
  NodeRef buf = make(Op::DEFINE_GLOBAL, dtypes::float32.as_ptr(), {}, int64_t{0});
  return make(Op::INDEX, dtypes::float32.as_ptr(), {buf, i, gate});
}

// rotate_half's first half: cat(-x[16:], x[:16]) along a dim of 32, read through a reshape that
// splits the element at 32: where r < 16 the quotient (r + 16) / 32 is 0, so the address is r + 16.
TEST(GatedIndex, FoldsAConcatenationsIndexOverTheGatedHalf) {
  NodeRef r = rng(32, 0), h = rng(4, 1);
  NodeRef i = h * c(128) + ((r + c(16)) / c(32)) * c(64) + (r + c(16)) % c(32);
  expect_rule(gated_index(i, lt(r, c(16))), gated_index(simplify(h * c(128) + r + c(16)).node, lt(r, c(16))),
              "fold_gated_index");
}

// Lower bounds, in both spellings: NOT(r < 16) and 15 < r leave r in [16, 32).
TEST(GatedIndex, FoldsOverALowerBound) {
  NodeRef r = rng(32, 0);
  NodeRef i = (r / c(16)) * c(100) + r % c(16);
  for (const NodeRef& gate : {logical_not(lt(r, c(16))), lt(c(15), r)})
    expect_rule(gated_index(i, gate), gated_index(r + c(84), gate), "fold_gated_index");
  // NOT(20 < r) with 16 <= r (an AND of two clauses): r in [16, 20]
  NodeRef both = logical_and(logical_not(lt(r, c(16))), logical_not(lt(c(20), r)));
  expect_rule(gated_index(i, both), gated_index(r + c(84), both), "fold_gated_index");
}

// Nothing to fold for: a gate on another loop, a gate that never holds, an index that is no
// smaller over the gated values; the INDEX stays as it is.
TEST(GatedIndex, LeavesIndexesItCannotShrink) {
  NodeRef r = rng(32, 0), h = rng(4, 1);
  NodeRef i = ((r + c(16)) / c(32)) * c(64) + (r + c(16)) % c(32);
  for (const NodeRef& gate : {lt(h, c(2)), lt(r, c(0)), lt(r, c(32))}) {
    Simplified s = simplify(gated_index(i, gate));
    EXPECT_EQ(s.node->src[1], simplify(i).node) << to_string(gate);
    EXPECT_FALSE(s.fired.count("fold_gated_index")) << to_string(gate);
  }
}

// ---- constant folding ----

TEST(ConstFold, FoldsIntegerArithmetic) { expect_rule(c(3) * c(4) + c(5), c(17), "const_fold"); }

TEST(ConstFold, WrapsInTheDtype) {
  NodeRef big = cnst_int(dtypes::int32, std::numeric_limits<int32_t>::max());
  expect_rule(big + cnst_int(dtypes::int32, 1), cnst_int(dtypes::int32, std::numeric_limits<int32_t>::min()),
              "const_fold");
}

TEST(ConstFold, FoldsFloatsCastsWhereAndMulacc) {
  expect_rule(cnst(dtypes::float32, 1.5) * cnst(dtypes::float32, 2.0), cnst(dtypes::float32, 3.0),
              "const_fold");
  expect_rule(cast(cnst(dtypes::float32, -2.75), dtypes::int32), cnst_int(dtypes::int32, -2), "const_fold");
  expect_rule(where(bool_const(false), c(1), c(2)), c(2), "const_fold");
  expect_rule(make(Op::MULACC, dtypes::index, {c(3), c(4), c(5)}), c(17), "const_fold");
  expect_rule(make(Op::BITCAST, dtypes::int32, {cnst(dtypes::float32, 1.0)}),
              cnst_int(dtypes::int32, 0x3f800000), "const_fold");
  expect_rule(lt(c(3), c(4)), bool_const(true), "const_fold");
}

TEST(ConstFold, FoldsDivisionByZeroAsTheInterpreterDoes) { expect_rule(c(7) / c(0), c(0), "const_fold"); }

TEST(ConstFold, LeavesTensorStageConstantsAlone) {
  NodeRef dev = make(Op::DEVICE, dtypes::void_, {}, std::string("INTERP"));
  NodeRef sum = cnst_int(dtypes::int32, 1, dev) + cnst_int(dtypes::int32, 2, dev);
  EXPECT_EQ(simplify(sum).node, sum);
  EXPECT_EQ(simplify(sum, pm_const_fold()).node, sum);
}

TEST(Symbolic, LeavesShapedTensorStageNodesAlone) {
  NodeRef dev = make(Op::DEVICE, dtypes::void_, {}, std::string("INTERP"));
  NodeRef iota = make(Op::IOTA, dtypes::int32, {dev}, int64_t{4});  // shape (4)
  auto splat = [&](int64_t v) {
    NodeRef one = make(Op::RESHAPE, dtypes::int32, {cnst_int(dtypes::int32, v, dev)}, Shape{1});
    return make(Op::EXPAND, dtypes::int32, {one}, Shape{4});
  };
  for (NodeRef e : {iota + splat(0), iota * splat(1), iota * splat(0), alu(Op::NEG, alu(Op::NEG, iota))})
    EXPECT_EQ(simplify(e).node, e) << to_string(e);
}

TEST(ConstFold, PmConstFoldOnlyFolds) {
  NodeRef v = var("v", 0, 9);
  EXPECT_EQ(simplify(v + c(0), pm_const_fold()).node, v + c(0));
  EXPECT_EQ(simplify(v + (c(1) + c(2)), pm_const_fold()).node, v + c(3));
}

// ---- identities ----

TEST(Identity, ConstantMovesRightOfCommutativeOp) {
  NodeRef r0 = rng(10, 0);
  expect_rule(c(3) * r0, r0 * c(3), "commute_const_right");
  expect_rule(max(c(3), var("v", -9, 9)), max(var("v", -9, 9), c(3)), "commute_const_right");
}

TEST(Identity, AddZeroIsDroppedForIntegers) {
  NodeRef v = var("v", -5, 5);
  expect_rule(v + c(0), v, "add_zero");
  NodeRef f = cast(v, dtypes::float32);
  EXPECT_EQ(simplify(f + cnst(dtypes::float32, 0.0)).node,
            f + cnst(dtypes::float32, 0.0));  // -0.0 + 0 is +0.0
}

TEST(Identity, MulOneIsDroppedForEveryDtype) {
  NodeRef v = var("v", -5, 5);
  expect_rule(v * c(1), v, "mul_one");
  NodeRef f = cast(v, dtypes::float32);
  expect_rule(f * cnst(dtypes::float32, 1.0), f, "mul_one");
}

TEST(Identity, MulZeroIsZeroForIntegersOnly) {
  NodeRef v = var("v", -5, 5);
  expect_rule(v * c(0), c(0), "mul_zero");
  NodeRef f = cast(v, dtypes::float32);
  EXPECT_EQ(simplify(f * cnst(dtypes::float32, 0.0)).node, f * cnst(dtypes::float32, 0.0));  // inf * 0 is NaN
}

TEST(Identity, DivideByOne) { expect_rule(var("v", -5, 5) / c(1), var("v", -5, 5), "idiv_one"); }

TEST(Identity, DivideByMinusOneNegates) {
  NodeRef v = var("v", -5, 5);
  expect_rule(v / c(-1), v * c(-1), "idiv_neg_one");
}

TEST(Identity, ModuloByPlusMinusOneIsZero) {
  NodeRef v = var("v", -5, 5);
  expect_rule(v % c(1), c(0), "mod_unit");
  expect_rule(v % c(-1), c(0), "mod_unit");
}

TEST(Identity, DoubleNegationCancels) {
  NodeRef v = var("v", -5, 5);
  expect_rule(neg(neg(v)), v, "neg_neg");
  NodeRef f = cast(v, dtypes::float32);
  expect_rule(neg(neg(f)), f, "neg_neg");
}

TEST(Identity, CastToOwnDtypeIsDropped) {
  NodeRef v = var("v", -5, 5);
  expect_rule(make(Op::CAST, dtypes::index, {v}), v, "cast_noop");
  expect_rule(make(Op::BITCAST, dtypes::index, {v}), v, "cast_noop");
}

TEST(Identity, CastRoundTripThroughAWiderTypeIsDropped) {
  NodeRef x = cast(var("v", -5, 5), dtypes::int32);
  expect_rule(cast(cast(x, dtypes::int64), dtypes::int32), x, "cast_roundtrip");
  NodeRef wide = var("w", -100000, 100000);  // does not fit int16: the narrowing loses values
  NodeRef through_i16 = cast(cast(wide, dtypes::int16), dtypes::int64);
  EXPECT_EQ(simplify(through_i16).node, through_i16);
}

TEST(Identity, MaxOfSelf) { expect_rule(max(var("v", -5, 5), var("v", -5, 5)), var("v", -5, 5), "max_self"); }

TEST(Identity, MaxOfDominatingOperand) {
  NodeRef r0 = rng(10, 0), r1 = rng(6, 1);
  expect_rule(max(r1, r0 + c(5)), r0 + c(5), "max_dominant");
  NodeRef v = var("v", -5, 5);
  EXPECT_EQ(simplify(max(v, r1)).node, max(v, r1));
}

// ---- WHERE and bitwise ----

TEST(Logic, WhereWithConstantCondition) {
  NodeRef a = var("a", 0, 5), b = var("b", 0, 5);
  expect_rule(where(bool_const(true), a, b), a, "where_const_cond");
  expect_rule(where(bool_const(false), a, b), b, "where_const_cond");
}

TEST(Logic, WhereWithEqualBranches) {
  NodeRef a = var("a", 0, 5);
  expect_rule(where(lt(var("b", 0, 5), c(3)), a, a), a, "where_same_branches");
}

TEST(Logic, AndOrXorWithBoolConstants) {
  NodeRef p = lt(var("a", 0, 5), var("b", 0, 5));
  expect_rule(logical_and(p, bool_const(true)), p, "and_bool_const");
  expect_rule(logical_and(p, bool_const(false)), bool_const(false), "and_bool_const");
  expect_rule(alu(Op::OR, p, bool_const(true)), bool_const(true), "or_bool_const");
  expect_rule(alu(Op::OR, p, bool_const(false)), p, "or_bool_const");
  expect_rule(alu(Op::XOR, p, bool_const(false)), p, "xor_zero");
  EXPECT_EQ(simplify(logical_not(p)).node, logical_not(p));
}

TEST(Logic, AndOrXorOfSelf) {
  NodeRef p = lt(var("a", 0, 5), var("b", 0, 5));
  expect_rule(logical_and(p, p), p, "and_or_self");
  expect_rule(alu(Op::OR, p, p), p, "and_or_self");
  expect_rule(alu(Op::XOR, p, p), bool_const(false), "xor_self");
}

// ---- comparisons ----

TEST(Compare, SelfComparisons) {
  NodeRef v = var("v", -5, 5);
  expect_rule(lt(v, v), bool_const(false), "cmplt_self");
  expect_rule(ne(v, v), bool_const(false), "cmpne_self");
  expect_rule(eq(v, v), bool_const(true), "cmpeq_self");
  NodeRef f = cast(v, dtypes::float32);
  EXPECT_EQ(simplify(ne(f, f)).node, ne(f, f));  // NaN != NaN
}

TEST(Compare, LessThanFromBounds) {
  NodeRef r0 = rng(10, 0), v = var("v", 10, 20);
  expect_rule(lt(r0, v), bool_const(true), "cmplt_bounds");
  expect_rule(lt(v, r0), bool_const(false), "cmplt_bounds");
}

TEST(Compare, EqualityFromDisjointBounds) {
  NodeRef r0 = rng(10, 0), v = var("v", 10, 20);
  expect_rule(ne(r0, v), bool_const(true), "cmpne_bounds");
  expect_rule(eq(r0, v), bool_const(false), "cmpeq_bounds");
}

TEST(Compare, ConstantMovesAcrossLessThan) {
  NodeRef v = var("v", -100, 100), w = var("w", -100, 100);
  expect_rule(lt(v + c(3), c(10)), lt(v, c(7)), "lt_add_const");
  expect_rule(lt(v + w + c(-3), c(10)), lt(v + w, c(13)), "lt_add_const");
}

TEST(Compare, PositiveFactorDividesLessThan) {
  NodeRef v = var("v", -100, 100);
  expect_rule(lt(v * c(4), c(10)), lt(v, c(3)), "lt_mul_pos_const");    // 4v < 10 <=> v <= 2
  expect_rule(lt(v * c(4), c(-10)), lt(v, c(-2)), "lt_mul_pos_const");  // 4v < -10 <=> v <= -3
}

TEST(Compare, AnExactCastComparesTheValueItself) {
  NodeRef r0 = rng(1000, 0), v = var("v", -100, 100);
  expect_rule(lt(cast(r0, dtypes::int32), cnst_int(dtypes::int32, 192)), lt(r0, c(192)), "lt_exact_cast");
  // a cast that could change a value (wrap into int8) stays
  NodeRef wraps = lt(cast(r0, dtypes::int8), cnst_int(dtypes::int8, 100));
  EXPECT_EQ(simplify(wraps).node, wraps);
  expect_rule(lt(cast(v, dtypes::int32), cnst_int(dtypes::int32, -7)), lt(v, c(-7)), "lt_exact_cast");
}

// A split loop r*16 + u (u an UPCAST of 16 trips: vector lanes) against a multiple of 16: the lane
// drops out, and the rule before it divides by 16.
TEST(Compare, ALaneBelowTheFactorDropsOutOfLessThanAMultiple) {
  NodeRef r = rng(64, 0), u = range(16, 1, AxisType::UPCAST), v = var("v", -100, 100);
  expect_rule(lt(r * c(16) + u, c(192)), lt(r, c(12)), "lt_drop_lane_term");
  expect_rule(lt(v * c(16) + u, c(-32)), lt(v, c(-2)), "lt_drop_lane_term");
  // not a multiple of 16, or a term that can reach 16: unchanged (u + 1 reaches 16)
  NodeRef off = lt(r * c(16) + u, c(200));
  EXPECT_EQ(simplify(off).node, off);
  NodeRef big = lt(r * c(16) + rng(17, 2), c(192));
  EXPECT_EQ(simplify(big).node, big);
}

// ---- ADD chains ----

TEST(AddChain, CollectsLikeTermsSortsAndPutsTheConstantLast) {
  NodeRef r0 = rng(10, 0), r1 = rng(10, 1), v = var("v", -5, 5);
  expect_rule(r1 + r0 * c(3) + v + r1 * c(2) + c(5) + r0, r0 * c(4) + r1 * c(3) + v + c(5),
              "add_chain_normalize");
}

TEST(AddChain, CancellingTermsDisappear) {
  NodeRef r0 = rng(10, 0), v = var("v", -5, 5);
  expect_rule(r0 + v * c(2) + c(1) - r0 - v * c(2), c(1), "add_chain_normalize");
}

TEST(AddChain, MultiplyConstantsAssociate) {
  NodeRef v = var("v", -5, 5);
  expect_rule((v * c(3)) * c(4), v * c(12), "mul_const_assoc");
}

TEST(AddChain, ConstantMultiplicationDistributes) {
  NodeRef v = var("v", -5, 5), r0 = rng(10, 0);
  expect_rule((r0 * c(3) + v + c(1)) * c(4), r0 * c(12) + v * c(4) + c(4), "mul_distribute_const");
}

TEST(AddChain, NegationOfAMultipleFoldsIntoTheConstant) {
  NodeRef v = var("v", -5, 5);
  expect_rule(neg(v * c(3)), v * c(-3), "neg_mul_const");
}

TEST(AddChain, DivModPairRecombines) {
  NodeRef v = var("v", -50, 50), r0 = rng(10, 0);
  expect_rule((v / c(7)) * c(7) + v % c(7), v, "divmod_recombine");
  // inside a longer chain and under a common factor 3
  expect_rule(r0 + (v / c(7)) * c(21) + c(2) + (v % c(7)) * c(3), r0 + v * c(3) + c(2), "divmod_recombine");
}

TEST(AddChain, NestedDivModRecombinesIntoOneModulo) {
  NodeRef v = var("v", -500, 500);
  expect_rule(((v / c(4)) % c(3)) * c(4) + v % c(4), v % c(12), "divmod_recombine_nested");
}

// ---- division and modulo ----

TEST(DivMod, NegativeDivisorBecomesPositive) {
  NodeRef v = var("v", -50, 50);
  expect_rule(v / c(-4), (v / c(4)) * c(-1), "idiv_neg_divisor");
  expect_rule(v % c(-4), v % c(4), "mod_neg_divisor");
}

TEST(DivMod, QuotientFixedByBounds) {
  expect_rule(rng(12, 0) / c(12), c(0), "idiv_same_quotient");
  expect_rule(var("v", 24, 35) / c(12), c(2), "idiv_same_quotient");
  expect_rule(var("v", -11, 11) / c(12), c(0), "idiv_same_quotient");
}

TEST(DivMod, ModuloOfASmallValueIsTheValue) {
  NodeRef r0 = rng(12, 0), v = var("v", -5, 5);
  expect_rule(r0 % c(12), r0, "mod_small");
  expect_rule(v % c(6), v, "mod_small");
  EXPECT_EQ(simplify(v % c(5)).node, v % c(5));
}

TEST(DivMod, ExactDivisionOfAMultiple) {
  NodeRef v = var("v", -50, 50);
  expect_rule((v * c(12)) / c(4), v * c(3), "idiv_mul_exact");
  expect_rule((v * c(12)) % c(4), c(0), "mod_mul_exact");
}

TEST(DivMod, NestedDivisionsMerge) {
  NodeRef v = var("v", -500, 500);
  expect_rule((v / c(3)) / c(4), v / c(12), "idiv_idiv");
}

TEST(DivMod, NestedModuloKeepsTheDivisor) {
  NodeRef v = var("v", -500, 500);
  expect_rule((v % c(12)) % c(4), v % c(4), "mod_mod");
}

TEST(DivMod, DivisionOfAModuloBecomesModuloOfADivision) {
  NodeRef v = var("v", -500, 500);
  expect_rule((v % c(12)) / c(4), (v / c(4)) % c(3), "idiv_of_mod");
}

TEST(DivMod, DivisionSplitsAChainAtMultiples) {
  NodeRef r0 = rng(10, 0), r1 = rng(12, 1);
  expect_rule((r0 * c(12) + r1) / c(12), r0, "idiv_add_split");
  // the constant's multiple of 12 moves out; what is left stays under the division
  expect_rule((r0 * c(12) + r1 + c(13)) / c(12), r0 + (r1 + c(1)) / c(12) + c(1), "idiv_add_split");
}

TEST(DivMod, DivisionByAMultipleOfACoefficientDropsARestBelowIt) {
  // (r0*256 + r1) // 8192 == r0 // 32 for 0 <= r1 < 256: a flattened (r0, r1) index cut at 8192
  NodeRef r0 = rng(768, 0), r1 = rng(256, 1);
  expect_rule((r0 * c(256) + r1) / c(8192), r0 / c(32), "idiv_small_rest");
  expect_rule((r0 * c(256) + r1) % c(8192), r1 + (r0 % c(32)) * c(256), "mod_small_rest");
}

TEST(DivMod, DivisionSplitShiftsANegativeRestIntoRange) {
  NodeRef v = var("v", 1, 5), w = var("w", -3, 3);  // 12v + w >= 9: w//12 alone would be wrong
  expect_rule((v * c(12) + w) / c(12), v + (w + c(12)) / c(12) + c(-1), "idiv_add_split");
}

TEST(DivMod, DivisionSplitsANonPositiveChain) {
  NodeRef v = var("v", 0, 5), r1 = rng(12, 1);
  expect_rule((v * c(-12) - r1) / c(12), v * c(-1), "idiv_add_split");
}

TEST(DivMod, DivisionDoesNotSplitAcrossSigns) {
  NodeRef v = var("v", 0, 5), w = var("w", -3, 3);
  NodeRef x = (v * c(12) + w) / c(12);  // v = 1, w = -3: 9//12 == 0, but v + w//12 == 1
  EXPECT_EQ(simplify(x).node, x);
}

TEST(DivMod, ModuloSplitsAChainAtMultiples) {
  NodeRef r0 = rng(10, 0), r1 = rng(12, 1), r2 = rng(4, 2);
  expect_rule((r0 * c(12) + r1) % c(12), r1, "mod_add_split");
  expect_rule((r0 * c(24) + r2 * c(3) + c(12)) % c(12), r2 * c(3), "mod_add_split");
}

TEST(DivMod, CommonFactorCancelsInDivision) {
  NodeRef v = var("v", -10, 10);
  expect_rule((v * c(4) + c(2)) / c(6), (v * c(2) + c(1)) / c(3), "idiv_gcd");
}

TEST(DivMod, CommonFactorMovesOutOfModulo) {
  NodeRef v = var("v", -10, 10);
  expect_rule((v * c(4) + c(2)) % c(6), ((v * c(2) + c(1)) % c(3)) * c(2), "mod_gcd");
}

TEST(Bounds, NodeWithOneValueBecomesConstant) {
  expect_rule(rng(1, 0) * c(5), c(0), "fold_exact_bounds");
  expect_rule(neg(var("v", 3, 3)), c(-3), "fold_exact_bounds");
}

// ---- index arithmetic of movement ops ----

// reshape (A, B, C) -> (A, B*C): loop r0 over A and r1 over B*C read the source at
// (i0, i1, i2) = ((r0*BC + r1)//BC, ((r0*BC + r1)//C)%B, (r0*BC + r1)%C); flattening that index
// with the source's strides (BC, C, 1) gives back the flat offset r0*BC + r1.
TEST(IndexMath, ReshapeRoundTripGivesTheFlatIndexBack) {
  const int64_t A = 5, B = 3, C = 4;
  NodeRef r0 = rng(A, 0), r1 = rng(B * C, 1);
  NodeRef flat = r0 * c(B * C) + r1;
  NodeRef i0 = flat / c(B * C), i1 = (flat / c(C)) % c(B), i2 = flat % c(C);
  EXPECT_EQ(simplify(i0).node, r0);
  EXPECT_EQ(simplify(i1).node, r1 / c(C));
  EXPECT_EQ(simplify(i2).node, r1 % c(C));
  EXPECT_EQ(simplify(i0 * c(B * C) + i1 * c(C) + i2).node, r0 * c(B * C) + r1);
}

// The same round trip over one flat loop r of A*B*C, split to (A, B, C) and flattened again.
TEST(IndexMath, SplitThenFlattenOfOneLoopIsTheLoop) {
  const int64_t A = 5, B = 3, C = 4;
  NodeRef r = rng(A * B * C, 0);
  NodeRef i0 = r / c(B * C), i1 = (r / c(C)) % c(B), i2 = r % c(C);
  EXPECT_EQ(simplify(i0 * c(B * C) + i1 * c(C) + i2).node, r);
  // the other spelling of the middle index, (r % BC) // C
  NodeRef j1 = (r % c(B * C)) / c(C);
  EXPECT_EQ(simplify(i0 * c(B * C) + j1 * c(C) + i2).node, r);
}

// x of shape (A, B, C) permuted to (B, A, C) and reshaped to (B, A*C): loops r0 over B and r1 over
// A*C address the permuted view at (r0, r1//C, r1%C), i.e. x at (r1//C, r0, r1%C), offset
// (r1//C)*BC + r0*C + r1%C. The reshape first builds the permuted view's flat index r0*AC + r1
// and splits it with the view's shape.
TEST(IndexMath, PermuteThenReshape) {
  const int64_t A = 5, B = 3, C = 4;
  NodeRef r0 = rng(B, 0), r1 = rng(A * C, 1);
  NodeRef flat = r0 * c(A * C) + r1;
  NodeRef p0 = flat / c(A * C), p1 = (flat / c(C)) % c(A), p2 = flat % c(C);  // permuted view (B, A, C)
  NodeRef offset = p1 * c(B * C) + p0 * c(C) + p2;                            // x at (p1, p0, p2)
  EXPECT_EQ(simplify(offset).node, r0 * c(C) + (r1 / c(C)) * c(B * C) + r1 % c(C));
}

}  // namespace
}  // namespace lg
