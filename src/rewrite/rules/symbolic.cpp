// Constant folding, identities, canonical operand order and comparison folding, and the assembly
// of pm_const_fold and pm_symbolic. ADD chains live in add_chain.cpp, division and modulo in
// divmod.cpp.
//
// Each rule's comment says why it is sound and when it applies. "For integers" rules are not
// applied to floats, where NaN, infinities and -0.0 break them (x*0 is NaN for x = inf).
#include "rewrite/rules/symbolic.h"

#include "ir/build.h"
#include "ir/scalar.h"
#include "rewrite/rules/symbolic_internal.h"

namespace lg {
namespace symbolic {

Rule kernel_rule(std::string name, Pat pat, RuleFn fn) {
  RuleFn guarded = [fn = std::move(fn)](const Match& m) -> NodeRef {
    const Node& n = *m.root();
    if (!n.shape.empty() || n.device != nullptr || n.dtype.ptr || n.dtype.count != 1) return {};
    return fn(m);
  };
  return Rule{std::move(name), std::move(pat), std::move(guarded)};
}

bool has_bounds(DType t) {
  return !t.ptr && t.count == 1 && (is_bool(t) || (is_int(t) && t.scalar != Scalar::UInt64));
}

bool fits(Wide lo, Wide hi, DType t) { return lo >= int_dtype_min(t) && hi <= int_dtype_max(t); }

int64_t const_value(const Node& c) { return c.get_arg<int64_t>(); }

Wide floor_div(Wide a, Wide b) {
  Wide q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

int64_t wrap_mul(int64_t a, int64_t b, DType t) {
  return wrap_to_int_dtype(static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)), t);
}

int64_t wrap_add(int64_t a, int64_t b, DType t) {
  return wrap_to_int_dtype(static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)), t);
}

namespace {

OpSet alu_ops() {
  OpSet s;
  for (int o = 0; o < kNumOps; o++)
    if (is_alu(static_cast<Op>(o))) s.set(o);
  return s;
}

OpSet commutative_ops() {
  OpSet s;
  for (int o = 0; o < kNumOps; o++)
    if (is_commutative(static_cast<Op>(o))) s.set(o);
  return s;
}

bool is_int_or_bool(DType t) { return is_int(t) || is_bool(t); }
bool is_signed_int(DType t) { return is_int(t) && !is_unsigned(t); }
NodeRef zero_like(const Node& n) { return cnst_int(n.dtype, 0); }

// ---- constant folding ----

Value value_of(const Node& c) {
  if (const double* d = std::get_if<double>(&c.arg)) return Value::of_float(*d);
  return Value::of_int(c.get_arg<int64_t>());
}

// op(CONST, ...) -> CONST. eval_alu is the definition of every ALU op, shared with the interpreter,
// so the folded value is the value the op computes (wrapping, NaN and rounding included).
NodeRef fold_constants(const Match& m) {
  const Node& n = *m.root();
  Value args[3] = {Value::of_int(0), Value::of_int(0), Value::of_int(0)};
  for (size_t i = 0; i < n.src.size(); i++) {
    if (!n.src[i]->is_const()) return {};
    args[i] = value_of(*n.src[i]);
  }
  DType in = n.src[n.op == Op::WHERE ? 1 : 0]->dtype;
  Value v = eval_alu(n.op, n.dtype, in, args, static_cast<int>(n.src.size()));
  return is_float(n.dtype) ? make(Op::CONST, n.dtype, {}, v.f) : make(Op::CONST, n.dtype, {}, v.i);
}

// ---- identities ----

// CAST(CAST(x, U), T) -> x when x has dtype T (integer or bool) and every value of x in its bounds
// is representable in the integer dtype U: the inner cast keeps the value, the outer gives it back.
NodeRef drop_cast_roundtrip(const Match& m) {
  const NodeRef& x = m["x"];
  DType u = m["inner"]->dtype;
  if (!(x->dtype == m.root()->dtype) || !has_bounds(x->dtype) || !is_int_or_bool(u)) return {};
  return fits(x->vmin, x->vmax, u) ? x : NodeRef{};
}

// MAX(x, y) -> x when x.vmin >= y.vmax (and symmetrically): the bounds hold every value.
NodeRef drop_dominated_max(const Match& m) {
  const NodeRef& x = m["x"];
  const NodeRef& y = m["y"];
  if (!has_bounds(x->dtype)) return {};
  if (x->vmin >= y->vmax) return x;
  if (y->vmin >= x->vmax) return y;
  return {};
}

std::vector<Rule> identity_rules() {
  Pat x = Pat::any("x"), c = Pat::cvar("c");
  return {
      // c op x -> x op c for commutative op: operand order does not change the value.
      kernel_rule("commute_const_right", Pat::ops(commutative_ops(), {c, x}).ordered(),
                  [](const Match& m) -> NodeRef {
                    if (m["x"]->is_const()) return {};
                    return make(m.root()->op, m.root()->dtype, {m["x"], m["c"]});
                  }),
      // x + 0 -> x for integers (for floats -0.0 + 0 is +0.0).
      kernel_rule("add_zero", (x + 0).dtype_if(is_int), [](const Match& m) { return m["x"]; }),
      // x * 1 -> x for every dtype: exact even for floats (NaN, inf and -0.0 are kept).
      kernel_rule("mul_one", x * 1, [](const Match& m) { return m["x"]; }),
      // x * 0 -> 0 for integers only (inf * 0 and NaN * 0 are NaN).
      kernel_rule("mul_zero", (x * 0).dtype_if(is_int), [](const Match& m) { return zero_like(*m.root()); }),
      // x // 1 -> x.
      kernel_rule("idiv_one", x / 1, [](const Match& m) { return m["x"]; }),
      // x // -1 -> x * -1 for signed integers; both wrap the same way at the minimum (ops.def: the
      // interpreter gives min // -1 == min).
      kernel_rule("idiv_neg_one", (x / -1).dtype_if(is_signed_int),
                  [](const Match& m) { return m["x"] * -1; }),
      // x % 1 -> 0 and x % -1 -> 0 for signed integers: every integer is a multiple of +-1.
      kernel_rule("mod_unit", x % c,
                  [](const Match& m) -> NodeRef {
                    int64_t v = const_value(*m["c"]);
                    return v == 1 || (v == -1 && is_signed_int(m.root()->dtype)) ? zero_like(*m.root())
                                                                                 : NodeRef{};
                  }),
      // -(-x) -> x for every dtype (negation is exact, also for floats and under wrapping).
      kernel_rule("neg_neg", Pat::op(Op::NEG, {Pat::op(Op::NEG, {x})}),
                  [](const Match& m) { return m["x"]; }),
      // CAST or BITCAST of x to x's own dtype is x.
      kernel_rule("cast_noop", Pat::ops(op_set({Op::CAST, Op::BITCAST}), {x}),
                  [](const Match& m) { return m["x"]->dtype == m.root()->dtype ? m["x"] : NodeRef{}; }),
      kernel_rule("cast_roundtrip", Pat::op(Op::CAST, {Pat::op(Op::CAST, {x}).named("inner")}),
                  drop_cast_roundtrip),
      // MAX(x, x) -> x for every dtype.
      kernel_rule("max_self", Pat::op(Op::MAX, {x, x}), [](const Match& m) { return m["x"]; }),
      kernel_rule("max_dominant", Pat::op(Op::MAX, {x, Pat::any("y")}), drop_dominated_max),
  };
}

// ---- WHERE and bitwise ops ----

std::vector<Rule> logic_rules() {
  Pat x = Pat::any("x"), c = Pat::cvar("c"), a = Pat::any("a");
  auto bool_root = [](Pat p) { return p.dtype(dtypes::boolean); };
  return {
      // WHERE(CONST c, a, b) -> c ? a : b.
      kernel_rule("where_const_cond", Pat::op(Op::WHERE, {c, a, Pat::any("b")}),
                  [](const Match& m) { return const_value(*m["c"]) ? m["a"] : m["b"]; }),
      // WHERE(c, a, a) -> a: both branches are the same value.
      kernel_rule("where_same_branches", Pat::op(Op::WHERE, {Pat::any(), a, a}),
                  [](const Match& m) { return m["a"]; }),
      // x AND true -> x, x AND false -> false (bool).
      kernel_rule("and_bool_const", bool_root(Pat::op(Op::AND, {x, c})),
                  [](const Match& m) { return const_value(*m["c"]) ? m["x"] : m["c"]; }),
      // x OR true -> true, x OR false -> x (bool).
      kernel_rule("or_bool_const", bool_root(Pat::op(Op::OR, {x, c})),
                  [](const Match& m) { return const_value(*m["c"]) ? m["c"] : m["x"]; }),
      // x XOR 0 -> x (bool false, or integer 0). x XOR true is NOT x and stays.
      kernel_rule("xor_zero", Pat::op(Op::XOR, {x, Pat::cnst(0)}), [](const Match& m) { return m["x"]; }),
      // x AND x -> x, x OR x -> x (bitwise, integers and bool).
      kernel_rule("and_or_self", Pat::ops(op_set({Op::AND, Op::OR}), {x, x}),
                  [](const Match& m) { return m["x"]; }),
      // x XOR x -> 0 (bitwise, integers and bool).
      kernel_rule("xor_self", Pat::op(Op::XOR, {x, x}), [](const Match& m) { return zero_like(*m.root()); }),
  };
}

// ---- comparisons ----

// CMPLT(x, y) from bounds: true when x.vmax < y.vmin, false when x.vmin >= y.vmax; the bounds hold
// every value x and y take, so every pair of values compares the same way.
NodeRef fold_lt_by_bounds(const Match& m) {
  const NodeRef& x = m["x"];
  const NodeRef& y = m["y"];
  if (!has_bounds(x->dtype)) return {};
  if (x->vmax < y->vmin) return bool_const(true);
  if (x->vmin >= y->vmax) return bool_const(false);
  return {};
}

// CMPNE / CMPEQ from bounds: x and y never take equal values when their bounds are disjoint.
NodeRef fold_ne_eq_by_bounds(const Match& m) {
  const NodeRef& x = m["x"];
  const NodeRef& y = m["y"];
  if (!has_bounds(x->dtype) || !(x->vmax < y->vmin || y->vmax < x->vmin)) return {};
  return bool_const(m.root()->op == Op::CMPNE);
}

// x + c1 < c2 -> x < c2 - c1 for integers, when x + c1 cannot wrap (x.vmin + c1 and x.vmax + c1 in
// range) and c2 - c1 is in range: then both sides compare the same mathematical values.
NodeRef move_const_across_lt(const Match& m) {
  const NodeRef& x = m["x"];
  DType t = x->dtype;
  if (!is_int(t) || !has_bounds(t)) return {};
  Wide c1 = const_value(*m["c1"]), c2 = const_value(*m["c2"]);
  if (!fits(x->vmin + c1, x->vmax + c1, t) || !fits(c2 - c1, c2 - c1, t)) return {};
  return lt(x, static_cast<int64_t>(c2 - c1));
}

// x*c1 < c2 -> x < ceil(c2/c1) for integers and c1 > 0, when x*c1 cannot wrap: for integer x,
// x*c1 < c2 <=> x < c2/c1 <=> x < ceil(c2/c1).
NodeRef divide_lt_by_const(const Match& m) {
  const NodeRef& x = m["x"];
  DType t = x->dtype;
  if (!is_int(t) || !has_bounds(t)) return {};  // before reading the constants: floats hold doubles
  Wide c1 = const_value(*m["c1"]), c2 = const_value(*m["c2"]);
  if (c1 <= 0 || !fits(x->vmin * c1, x->vmax * c1, t)) return {};
  return lt(x, static_cast<int64_t>(-floor_div(-c2, c1)));
}

// CAST(x) < c -> x < c for integer x whose every value the cast keeps (its bounds fit the cast's
// dtype) and c in x's dtype: both compare the same mathematical values. An index compared after a
// cast to int32 (an arange's element index, schedule-made) can then be folded by the rules below.
NodeRef drop_exact_cast_in_lt(const Match& m) {
  const NodeRef& x = m["x"];
  DType from = x->dtype, to = m["cast"]->dtype;
  if (!is_int(from) || !has_bounds(from) || !is_int(to) || !has_bounds(to)) return {};
  Wide c = const_value(*m["c"]);
  if (!fits(x->vmin, x->vmax, to) || !fits(c, c, from)) return {};
  return lt(x, static_cast<int64_t>(c));
}

// x*c1 + y < c2 -> x*c1 < c2 for integers, when c1 > 0 divides c2, 0 <= y < c1 (its bounds) and
// nothing wraps: x*c1 and c2 are multiples of c1, so x*c1 < c2 means x*c1 <= c2 - c1, and then
// x*c1 + y < c2 too; x*c1 >= c2 makes both false. With y a vector lane (an UPCAST of c1 trips), the
// comparison no longer depends on the lane (codegen/vectorize.h: a condition shared by the lanes).
NodeRef drop_lane_term_in_lt(const Match& m) {
  const NodeRef& x = m["x"];
  const NodeRef& y = m["y"];
  DType t = x->dtype;
  if (!is_int(t) || !has_bounds(t) || y->dtype != t) return {};
  Wide c1 = const_value(*m["c1"]), c2 = const_value(*m["c2"]);
  if (c1 <= 0 || c2 % c1 != 0 || y->vmin < 0 || y->vmax >= c1) return {};
  if (!fits(x->vmin * c1, x->vmax * c1 + y->vmax, t)) return {};
  return lt(m["mul"], static_cast<int64_t>(c2));
}

std::vector<Rule> compare_rules() {
  Pat x = Pat::any("x"), y = Pat::any("y"), c1 = Pat::cvar("c1"), c2 = Pat::cvar("c2");
  auto ints = [](Pat p) { return p.where([](const Node& n) { return is_int_or_bool(n.src[0]->dtype); }); };
  return {
      // x < x is false for every dtype (NaN < NaN is false too).
      kernel_rule("cmplt_self", Pat::op(Op::CMPLT, {x, x}), [](const Match&) { return bool_const(false); }),
      // x != x is false and x == x true for integers and bool (not floats: NaN != NaN).
      kernel_rule("cmpne_self", ints(Pat::op(Op::CMPNE, {x, x})),
                  [](const Match&) { return bool_const(false); }),
      kernel_rule("cmpeq_self", ints(Pat::op(Op::CMPEQ, {x, x})),
                  [](const Match&) { return bool_const(true); }),
      kernel_rule("cmplt_bounds", Pat::op(Op::CMPLT, {x, y}), fold_lt_by_bounds),
      kernel_rule("cmpne_bounds", Pat::op(Op::CMPNE, {x, y}), fold_ne_eq_by_bounds),
      kernel_rule("cmpeq_bounds", Pat::op(Op::CMPEQ, {x, y}), fold_ne_eq_by_bounds),
      kernel_rule("lt_add_const", Pat::op(Op::CMPLT, {x + c1, c2}), move_const_across_lt),
      kernel_rule("lt_mul_pos_const", Pat::op(Op::CMPLT, {x * c1, c2}), divide_lt_by_const),
      kernel_rule("lt_exact_cast", Pat::op(Op::CMPLT, {Pat::op(Op::CAST, {x}).named("cast"), Pat::cvar("c")}),
                  drop_exact_cast_in_lt),
      kernel_rule("lt_drop_lane_term", Pat::op(Op::CMPLT, {(x * c1).named("mul") + y, c2}),
                  drop_lane_term_in_lt),
  };
}

// Any integer or bool ALU node whose bounds are one value is that value: the bounds hold every
// value the node takes (a size-1 RANGE times c, a comparison infer.cpp already decided). Last, so
// the specific rules above get the first say. Only ALU nodes: a RANGE or DEFINE_VAR stays itself.
Rule fold_exact_bounds_rule() {
  return kernel_rule("fold_exact_bounds", Pat::ops(alu_ops()), [](const Match& m) -> NodeRef {
    const Node& n = *m.root();
    if (!has_bounds(n.dtype) || n.vmin != n.vmax) return {};
    return cnst_int(n.dtype, n.vmin);
  });
}

std::vector<Rule> symbolic_rules() {
  std::vector<Rule> rules;
  for (auto family :
       {identity_rules, logic_rules, compare_rules, add_chain_rules, divmod_rules, gated_index_rules})
    for (Rule& r : family()) rules.push_back(std::move(r));
  rules.push_back(fold_exact_bounds_rule());
  return rules;
}

}  // namespace
}  // namespace symbolic

const PatternMatcher& pm_const_fold() {
  static const PatternMatcher pm(
      {symbolic::kernel_rule("const_fold", Pat::ops(symbolic::alu_ops()), symbolic::fold_constants)});
  return pm;
}

const PatternMatcher& pm_symbolic() {
  static const PatternMatcher pm = pm_const_fold() + PatternMatcher(symbolic::symbolic_rules());
  return pm;
}

}  // namespace lg
