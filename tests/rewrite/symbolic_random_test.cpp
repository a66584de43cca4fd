// Randomized soundness test of pm_symbolic. Random integer expressions over DEFINE_VARs (random
// bounds, negative ones included) and RANGEs are simplified; every rule application is checked by
// evaluating both its sides on random assignments within the bounds, and the final expression is
// checked against the original (a gated INDEX's element where its gate holds). Every node evaluated is also
// checked to lie within its bounds (vmin, vmax), which the bound-driven rules rely on. At the end every rule
// of pm_symbolic must have fired at least once over the corpus.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <random>
#include <string>
#include <unordered_map>

#include "ir/build.h"
#include "ir/graph.h"
#include "ir/scalar.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/symbolic.h"

namespace lg {
namespace {

// Evaluates integer/bool expressions with eval_alu; DEFINE_VAR and RANGE take values drawn within
// their bounds (the bounds themselves half of the time), fixed until the next assignment.
class Evaluator {
 public:
  explicit Evaluator(std::mt19937_64& rng) : rng_(rng) {}

  void new_assignment() {
    leaves_.clear();
    memo_.clear();
  }

  // The value of n under the current assignment; reports a node outside its bounds.
  int64_t eval(const Node* n) {
    if (auto it = memo_.find(n); it != memo_.end()) return it->second;
    int64_t v = compute(n);
    bool bounded = n->dtype.scalar != Scalar::UInt64 && (is_int(n->dtype) || is_bool(n->dtype));
    if (bounded && (v < n->vmin || v > n->vmax)) {
      ADD_FAILURE() << "value " << v << " outside bounds [" << n->vmin << ", " << n->vmax << "] of\n"
                    << to_string(NodeRef::share(n));
    }
    memo_[n] = v;
    return v;
  }

 private:
  int64_t compute(const Node* n) {
    switch (n->op) {
      case Op::CONST: return n->get_arg<int64_t>();
      case Op::DEFINE_VAR:
      case Op::RANGE: return leaf(n);
      default: break;
    }
    Value args[3] = {Value::of_int(0), Value::of_int(0), Value::of_int(0)};
    for (size_t i = 0; i < n->src.size(); i++) args[i] = Value::of_int(eval(n->src[i].get()));
    DType in = n->src[n->op == Op::WHERE ? 1 : 0]->dtype;
    return eval_alu(n->op, n->dtype, in, args, static_cast<int>(n->src.size())).i;
  }

  int64_t leaf(const Node* n) {
    if (auto it = leaves_.find(n); it != leaves_.end()) return it->second;
    int64_t lo = n->vmin, hi = n->vmax;
    int pick = static_cast<int>(rng_() % 4);
    int64_t v = pick == 0 ? lo : pick == 1 ? hi : std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
    leaves_[n] = v;
    return v;
  }

  std::mt19937_64& rng_;
  std::unordered_map<const Node*, int64_t> leaves_;
  std::unordered_map<const Node*, int64_t> memo_;
};

// Random expressions over a fixed pool of leaves.
class ExprGen {
 public:
  explicit ExprGen(std::mt19937_64& rng) : rng_(rng) {}

  // A fresh pool: three DEFINE_VARs (bounds possibly negative, sometimes one value or large) and
  // three RANGEs (sizes 1..16).
  void new_leaves() {
    leaves_.clear();
    for (int i = 0; i < 3; i++) {
      int64_t lo = uniform(-30, 20), hi = lo + uniform(0, 40);
      if (chance(0.1)) hi = lo;
      if (chance(0.05)) lo = -(int64_t{1} << uniform(20, 40)), hi = int64_t{1} << uniform(20, 40);
      leaves_.push_back(make(Op::DEFINE_VAR, dtypes::index, {}, VarArg{"v" + std::to_string(i), lo, hi}));
    }
    for (int i = 0; i < 3; i++) leaves_.push_back(range(uniform(1, 16), i, AxisType::LOOP));
  }

  NodeRef leaf() { return leaves_[uniform(0, static_cast<int64_t>(leaves_.size()) - 1)]; }
  NodeRef range_leaf() { return leaves_[uniform(3, 5)]; }
  NodeRef var_leaf() { return leaves_[uniform(0, 2)]; }

  // A random integer expression of dtype t. Random draws are separate statements: the order in
  // which operands of one expression are evaluated is unspecified, the corpus must not depend on it.
  NodeRef int_expr(int depth, DType t) {
    if (depth <= 0 || chance(0.2)) return chance(0.25) ? cnst_int(t, small_const()) : cast(leaf(), t);
    NodeRef a = int_expr(depth - 1, t);
    NodeRef b = chance(0.1) ? a : int_expr(depth - 1, t);
    NodeRef k1 = cnst_int(t, mul_const());
    NodeRef k2 = cnst_int(t, small_const());
    switch (uniform(0, 13)) {
      case 0: return a + b;
      case 1: return k2 + a;
      case 2: return a - b;
      case 3: return chance(0.7) ? a * k1 : a * b;
      case 4: return a / cnst_int(t, divisor());
      case 5: return a % cnst_int(t, divisor());
      case 6: return alu(Op::MAX, a, b);
      case 7: return where(bool_expr(depth - 1), a, b);
      case 8: return alu(Op::NEG, a);
      case 9: return chance(0.2) ? make(Op::CAST, t, {a}) : cast(int_expr(depth - 1, other(t)), t);
      case 10: return a * k1 + b * cnst_int(t, mul_const());
      case 11: return alu(std::array{Op::AND, Op::OR, Op::XOR}[uniform(0, 2)], a, b);
      case 12: {
        NodeRef shift = cnst_int(t, uniform(0, bitsize(t.scalar) - 1));  // in range, as ops.def requires
        return alu(chance(0.5) ? Op::SHL : Op::SHR, a, shift);
      }
      default: return (a + k2) * cnst_int(t, small_const());
    }
  }

  NodeRef bool_expr(int depth) {
    if (depth <= 0 || chance(0.1)) return bool_const(chance(0.5));
    DType t = chance(0.75) ? dtypes::index : dtypes::int32;
    NodeRef a = int_expr(depth - 1, t);
    NodeRef b = chance(0.1) ? a : chance(0.4) ? cnst_int(t, small_const()) : int_expr(depth - 1, t);
    switch (uniform(0, 6)) {
      case 0:
      case 1: return lt(a, b);
      case 2: return ne(a, b);
      case 3: return eq(a, b);
      default: {
        NodeRef p = bool_expr(depth - 1);
        NodeRef q = chance(0.15) ? p : bool_expr(depth - 1);
        return alu(std::array{Op::AND, Op::OR, Op::XOR}[uniform(0, 2)], p, q);
      }
    }
  }

  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

 private:
  // Another integer dtype: mostly int64 <-> int32, sometimes a narrow or unsigned one.
  DType other(DType t) {
    if (chance(0.2))
      return std::array{dtypes::int8, dtypes::uint8, dtypes::int16, dtypes::uint32}[uniform(0, 3)];
    return t == dtypes::index ? dtypes::int32 : dtypes::index;
  }
  int64_t small_const() { return uniform(-16, 16); }
  // Mostly small factors, sometimes ones large enough to wrap int32 or int64.
  int64_t mul_const() {
    if (chance(0.08)) return (chance(0.5) ? 1 : -1) * (int64_t{1} << uniform(20, 62));
    return uniform(-12, 12);
  }
  int64_t divisor() {
    int64_t d = std::array<int64_t, 8>{1, 2, 3, 4, 6, 8, 12, 16}[uniform(0, 7)];
    return chance(0.25) ? -d : d;
  }

  std::mt19937_64& rng_;
  std::vector<NodeRef> leaves_;
};

// Index expressions of the shapes movement ops produce, plus shapes aimed at specific rules.
class IndexGen {
 public:
  explicit IndexGen(ExprGen& g) : g_(g) {}

  // INDEX(buf, i, gate): a gate of one or two bounds on RANGEs (r < k, NOT(r < k), k < r,
  // NOT(k < r)) over an index, now and then a padded one: (r + k) split by a divisor it crosses
  // over r's whole range, as a concatenation's index through a reshape is.
  NodeRef gated() {
    NodeRef r = g_.range_leaf();
    int64_t k = g_.uniform(-4, 8), d = g_.uniform(2, 8);
    NodeRef i = g_.chance(0.5) ? any() : ((r + c(k)) / c(d)) * c(g_.uniform(1, 40)) + (r + c(k)) % c(d);
    if (i->dtype != dtypes::index) i = cast(i, dtypes::index);
    NodeRef gate = clause(g_.chance(0.7) ? r : g_.range_leaf());
    if (g_.chance(0.4)) gate = logical_and(gate, clause(g_.range_leaf()));
    NodeRef buf = make(Op::DEFINE_GLOBAL, dtypes::float32.as_ptr(), {}, int64_t{0});
    return make(Op::INDEX, dtypes::float32.as_ptr(), {buf, i, gate});
  }

  NodeRef any() {
    switch (g_.uniform(0, 6)) {
      case 0: return reshape_round_trip();
      case 1: return split_and_flatten();
      case 2: return common_factor();
      case 3: return nested_divmod();
      case 4: return chain_split();
      case 5: return wrapping();
      default: return small_shapes();
    }
  }

 private:
  NodeRef c(int64_t v) { return index_const(v); }
  int64_t dim() { return g_.uniform(1, 6); }
  NodeRef clause(const NodeRef& r) {
    NodeRef k = c(g_.uniform(-1, 17));
    switch (g_.uniform(0, 3)) {
      case 0: return lt(r, k);
      case 1: return logical_not(lt(r, k));
      case 2: return lt(k, r);
      default: return logical_not(lt(k, r));
    }
  }
  // A loop-like value: a RANGE, or a DEFINE_VAR (possibly negative: the rules must stay sound).
  NodeRef base() { return g_.chance(0.7) ? g_.range_leaf() : g_.var_leaf(); }

  // (A,B,C) -> (A,B*C): index split of r0*BC + r1, flattened back with strides (BC, C, 1).
  NodeRef reshape_round_trip() {
    int64_t B = dim(), C = dim();
    NodeRef r0 = base(), r1 = base();
    NodeRef flat = r0 * c(B * C) + r1;
    NodeRef i0 = flat / c(B * C), i1 = (flat / c(C)) % c(B), i2 = flat % c(C);
    return i0 * c(B * C) + i1 * c(C) + i2;
  }

  // One value split into (A, B, C) digits, both spellings of the middle one, flattened again.
  NodeRef split_and_flatten() {
    int64_t B = dim(), C = dim(), stride = dim(), m = g_.uniform(-3, 3);
    NodeRef r0 = base(), r1 = base();
    NodeRef r = g_.chance(0.5) ? r0 : r0 + r1 * c(stride);
    NodeRef i1 = g_.chance(0.5) ? (r / c(C)) % c(B) : (r % c(B * C)) / c(C);
    // a stride off by one now and then: recombination must check the coefficients
    int64_t s0 = B * C + (g_.chance(0.15) ? 1 : 0), s1 = C + (g_.chance(0.15) ? 1 : 0);
    NodeRef rest = g_.int_expr(1, dtypes::index);
    return ((r / c(B * C)) * c(s0) + i1 * c(s1) + r % c(C)) * c(m) + rest;
  }

  // (g*X + g*k) // (g*d) and % (g*d) with X of mixed sign.
  NodeRef common_factor() {
    int64_t gcd = g_.uniform(2, 4), d = g_.uniform(1, 4);
    int64_t k0 = g_.uniform(-3, 3), k1 = g_.uniform(1, 3), k = g_.uniform(-5, 5);
    NodeRef v = g_.var_leaf(), r = base();
    NodeRef x = v * c(gcd * k0) + r * c(gcd * k1) + c(gcd * k);
    return g_.chance(0.5) ? x / c(gcd * d) : x % c(gcd * d);
  }

  // (x % c1) % c2, (x % c1) // c2, (x // c1) // c2, (x*c1) // c2 with c2 dividing c1.
  NodeRef nested_divmod() {
    int64_t c2 = g_.uniform(1, 6), c1 = c2 * g_.uniform(1, 4);
    NodeRef x = g_.int_expr(2, dtypes::index);
    switch (g_.uniform(0, 4)) {
      case 0: return (x % c(c1)) % c(c2);
      case 1: return (x % c(c1)) / c(c2);
      case 2: return (x / c(c1)) / c(c2);
      case 3: return (x * c(c1)) / c(c2);
      default: return (x * c(c1)) % c(c2);
    }
  }

  // (k*c*a + b + const) // c and % c, with b of either sign.
  NodeRef chain_split() {
    int64_t d = g_.uniform(2, 12), ka = d * g_.uniform(-3, 3), kb = g_.uniform(-2, 2),
            k = g_.uniform(-30, 30);
    NodeRef a = base(), b = base();
    NodeRef x = a * c(ka) + b * c(kb) + c(k);
    return g_.chance(0.5) ? x / c(d) : x % c(d);
  }

  // Products near the dtype's limits (int32 or int64) under division, modulo and comparison:
  // rules must notice that these wrap.
  NodeRef wrapping() {
    DType t = g_.chance(0.5) ? dtypes::int32 : dtypes::index;
    int bits = t == dtypes::int32 ? 32 : 64;
    NodeRef x = cast(base(), t), y = cast(base(), t);
    int64_t sign = g_.chance(0.5) ? 1 : -1, shift = g_.uniform(bits - 8, bits - 3);
    // divisors 2^j divide 2^bits, so a wrapped multiple stays a multiple; 3*2^j ones do not
    int64_t dpow = g_.uniform(0, 4), dmul = g_.chance(0.5) ? 3 : 1;
    NodeRef k = cnst_int(t, sign * (int64_t{1} << shift) * 3), d = cnst_int(t, (int64_t{1} << dpow) * dmul);
    int64_t bound = g_.uniform(-100, 100);
    int64_t near_max = int_dtype_max(t) - g_.uniform(0, 40);  // x + near_max wraps for x > 40
    switch (g_.uniform(0, 6)) {
      case 0: return (x * k) / d;
      case 1: return (x * k) % d;
      case 2: return (x * k + y) / d;
      case 3: return (x * k + y * d) % d;
      case 4: return cast(lt(x * k, cnst_int(t, bound)), t);
      case 5: return cast(lt(x + cnst_int(t, near_max), cnst_int(t, bound)), t);
      default: return cast(cast(x * k, dtypes::int16), t) + cast(cast(y, dtypes::int16), t);
    }
  }

  // Comparisons and casts of index terms, self operands, constant-bound nodes.
  NodeRef small_shapes() {
    NodeRef a = base();
    int64_t k1 = g_.uniform(1, 5), k2 = g_.uniform(-10, 10), bound = g_.uniform(-10, 30);
    switch (g_.uniform(0, 6)) {
      case 5: {  // a split loop r*k + u against a multiple of k (u: k vector lanes; now and then
                 // k + 1 trips or a bound off the multiple, which must not fold)
        int64_t k = g_.uniform(2, 16);
        NodeRef lane = range(k + (g_.chance(0.2) ? 1 : 0), 7, AxisType::UPCAST);
        int64_t m = g_.uniform(-4, 8) * k + (g_.chance(0.2) ? 1 : 0);
        return cast(lt(a * c(k) + lane, c(m)), dtypes::index);
      }
      case 0: return cast(lt(a * c(k1), c(bound)), dtypes::index);
      case 1: return cast(lt(a + c(k2), c(bound)), dtypes::index);
      case 2:
        return cast(cast(cast(a, dtypes::int32), dtypes::index), dtypes::int32) + cnst_int(dtypes::int32, 1);
      case 3: return alu(Op::MAX, a, a) + make(Op::CAST, dtypes::index, {a});
      case 4: return where(alu(Op::XOR, lt(a, c(3)), lt(a, c(3))), a, c(1));
      default: return alu(Op::NEG, alu(Op::NEG, a)) * c(k1);
    }
  }

  ExprGen& g_;
};

class RuleChecker {
 public:
  explicit RuleChecker(std::mt19937_64& rng) : ev_(rng) {}

  // Both sides of a rule application agree on random assignments (for a gated INDEX: its
  // element, on assignments where the gate holds; only there is the address used).
  void check_rule(const Rule& rule, const NodeRef& before, const NodeRef& after) {
    fired_[rule.name]++;
    for (int k = 0, tries = 0; k < 8 && tries < 64; tries++) {
      ev_.new_assignment();
      if (!gate_holds(before)) continue;
      k++;
      int64_t b = value(before), a = value(after);
      if (a != b) {
        ADD_FAILURE() << "rule " << rule.name << " changed the value (" << b << " -> " << a << ")\nbefore:\n"
                      << to_string(before) << "after:\n"
                      << to_string(after);
        return;
      }
    }
  }

  // The simplified expression agrees with the original on random assignments.
  void check_final(const NodeRef& original, const NodeRef& simplified) {
    for (int k = 0, tries = 0; k < 8 && tries < 64; tries++) {
      ev_.new_assignment();
      if (!gate_holds(original)) continue;
      k++;
      int64_t o = value(original), s = value(simplified);
      if (o != s) {
        ADD_FAILURE() << "simplification changed the value (" << o << " -> " << s << ")\noriginal:\n"
                      << to_string(original) << "simplified:\n"
                      << to_string(simplified);
        return;
      }
    }
  }

  NodeRef simplify(const NodeRef& expr) {
    NodeRef out = rewrite(
        expr, pm_symbolic(),
        {.name = "random symbolic",
         .on_rule = [this](const Rule& r, const NodeRef& b, const NodeRef& a) { check_rule(r, b, a); }});
    check_final(expr, out);
    return out;
  }

  const std::map<std::string, int>& fired() const { return fired_; }

 private:
  bool gate_holds(const NodeRef& n) {
    return n->op != Op::INDEX || n->src.size() < 3 || ev_.eval(n->src[2].get()) != 0;
  }
  int64_t value(const NodeRef& n) { return ev_.eval(n->op == Op::INDEX ? n->src[1].get() : n.get()); }

  Evaluator ev_;
  std::map<std::string, int> fired_;
};

TEST(SymbolicRandom, EveryRuleApplicationKeepsTheValueAndEveryRuleFires) {
  std::mt19937_64 rng(0x5eed'1234'abcdULL);
  ExprGen gen(rng);
  IndexGen index(gen);
  RuleChecker checker(rng);
  for (int i = 0; i < 20000 && !HasFailure(); i++) {
    if (i % 20 == 0) gen.new_leaves();
    NodeRef e = i % 9 == 4 ? index.gated()
                : i % 3 == 0
                    ? index.any()
                    : (gen.chance(0.2) ? cast(gen.bool_expr(4), dtypes::index)
                                       : gen.int_expr(4, gen.chance(0.8) ? dtypes::index : dtypes::int32));
    checker.simplify(e);
  }
  for (const Rule& r : pm_symbolic().rules()) {
    auto it = checker.fired().find(r.name);
    EXPECT_TRUE(it != checker.fired().end()) << "rule " << r.name << " never fired over the random corpus";
  }
}

}  // namespace
}  // namespace lg
