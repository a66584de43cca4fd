// Integer division and modulo by constants, driven by bounds. IDIV and MOD truncate toward zero (as
// C) and a == (a//b)*b + a%b (ops.def). A rule that reasons about the mathematical value of an
// expression first proves that the expression cannot wrap: its value bounds, computed without
// wrapping, fit the dtype (fits() in symbolic_internal.h). Negative divisors are first turned
// positive, so the other rules only handle c > 0. uint64 is left out (has_bounds).
#include <algorithm>
#include <numeric>
#include <optional>

#include "ir/build.h"
#include "rewrite/rules/symbolic_internal.h"

namespace lg::symbolic {
namespace {

LinearForm empty_form(DType t) {
  LinearForm f;
  f.dtype = t;
  return f;
}

uint64_t magnitude(int64_t v) { return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v); }

// The positive constant divisor of a match, or 0 when it is not positive or the dtype has no bounds.
int64_t pos_divisor(const Match& m, const char* name = "c") {
  int64_t c = const_value(*m[name]);
  return has_bounds(m.root()->dtype) && c > 0 ? c : 0;
}

// x*c cannot wrap: every value of x in its bounds times c is in range.
bool mul_fits(const Node& x, int64_t c) {
  Wide a = Wide{x.vmin} * c, b = Wide{x.vmax} * c;
  return fits(std::min(a, b), std::max(a, b), x.dtype);
}

// x // c -> (x // -c) * -1 and x % c -> x % -c for c < 0 (c not the dtype's minimum): truncation
// gives x/c == -(x/-c), and a%b == a - (a/b)*b is then the same for b and -b. |x // -c| <= |x|/2
// for c <= -2 (c == -1 is idiv_neg_one), so the negation does not wrap.
NodeRef make_divisor_positive(const Match& m) {
  DType t = m.root()->dtype;
  int64_t c = const_value(*m["c"]);
  if (!has_bounds(t) || c >= 0 || c == int_dtype_min(t)) return {};
  NodeRef pos = make(m.root()->op, t, {m["x"], cnst_int(t, -c)});
  return m.root()->op == Op::IDIV ? pos * -1 : pos;
}

// x // c -> q when x.vmin // c == x.vmax // c == q (c > 0): truncated division by a positive
// constant is nondecreasing in x, so every x within the bounds gives q. (0 <= x < c gives 0.)
NodeRef fold_same_quotient(const Match& m) {
  const NodeRef& x = m["x"];
  int64_t c = pos_divisor(m);
  if (c == 0 || x->vmin / c != x->vmax / c) return {};
  return cnst_int(x->dtype, x->vmin / c);
}

// x % c -> x when -c < x.vmin and x.vmax < c (c > 0): |x| < c makes x // c == 0.
NodeRef drop_small_mod(const Match& m) {
  const NodeRef& x = m["x"];
  int64_t c = pos_divisor(m);
  return c != 0 && x->vmin > -c && x->vmax < c ? x : NodeRef{};
}

// (x*c1) // c2 -> x*(c1/c2) when c2 > 0 divides c1 and x*c1 cannot wrap: the division is exact.
NodeRef divide_exact_mul(const Match& m) {
  int64_t c1 = const_value(*m["c1"]), c2 = pos_divisor(m, "c2");
  if (c2 == 0 || c1 % c2 != 0 || !mul_fits(*m["x"], c1)) return {};
  return m["x"] * (c1 / c2);
}

// (x*c1) % c2 -> 0 when c2 > 0 divides c1 and x*c1 cannot wrap: x*c1 is a multiple of c2.
NodeRef drop_exact_mul_mod(const Match& m) {
  int64_t c1 = const_value(*m["c1"]), c2 = pos_divisor(m, "c2");
  if (c2 == 0 || c1 % c2 != 0 || !mul_fits(*m["x"], c1)) return {};
  return cnst_int(m.root()->dtype, 0);
}

// (x // c1) // c2 -> x // (c1*c2) for c1, c2 > 0 with c1*c2 in range: for x >= 0,
// floor(floor(x/c1)/c2) == floor(x/(c1*c2)); truncation is odd (-x)//c == -(x//c), so it holds for
// x < 0 as well.
NodeRef merge_nested_idiv(const Match& m) {
  int64_t c1 = pos_divisor(m, "c1"), c2 = pos_divisor(m, "c2");
  if (c1 == 0 || c2 == 0 || !fits(Wide{c1} * c2, Wide{c1} * c2, m.root()->dtype)) return {};
  return m["x"] / (c1 * c2);
}

// (x % c1) % c2 -> x % c2 when c2 divides c1 (c1, c2 > 0): x % c1 == x - c1*q is congruent to x
// modulo c2 and has x's sign (or is 0); two values of one sign, congruent modulo c2, leave the same
// truncated remainder.
NodeRef merge_nested_mod(const Match& m) {
  int64_t c1 = pos_divisor(m, "c1"), c2 = pos_divisor(m, "c2");
  if (c1 == 0 || c2 == 0 || c1 % c2 != 0) return {};
  return m["x"] % c2;
}

// (x % c1) // c2 -> (x // c2) % (c1/c2) when c2 divides c1 (c1, c2 > 0). For x >= 0 write
// x = q*c1 + s with 0 <= s < c1: x // c2 == q*(c1/c2) + s//c2 and s//c2 < c1/c2, so
// (x//c2) % (c1/c2) == s//c2 == (x % c1)//c2; for x < 0 both sides are odd in x. It puts the
// index of a middle axis in the form divmod_recombine_nested recognizes.
NodeRef swap_mod_idiv(const Match& m) {
  int64_t c1 = pos_divisor(m, "c1"), c2 = pos_divisor(m, "c2");
  if (c1 == 0 || c2 == 0 || c1 % c2 != 0) return {};
  return (m["x"] / c2) % (c1 / c2);
}

// x == c*Q + R: Q takes the terms of x's linear form whose coefficient c divides (divided by c) and
// a shift q; R the other terms and the constant minus c*q.
struct Split {
  LinearForm quotient, rest;
};

// Splits x at c > 0. Truncated division follows the split, x//c == Q + R//c and x%c == R%c, when
// x and R have one sign (both >= 0, or both <= 0): then both divisions are floor divisions of one
// sign's values, and floor((c*Q + R)/c) == Q + floor(R/c). So x must have one sign; q then gives R
// that sign and brings it as close to 0 as it allows. x's value must fit the dtype (no wrapping);
// R's then does too: R's bounds are x's less c times the terms' part of Q's, so for x >= 0
// R.hi = x.hi - c*(Q.hi - Q.lo) - c*floor(x.lo/c) <= x.hi, and symmetrically for x <= 0. Q may
// wrap, only its value modulo 2^bits matters. nullopt when the split does not apply or changes
// nothing.
std::optional<Split> split_at(const NodeRef& x, int64_t c) {
  LinearForm f = linear_form(x);
  auto b = form_bounds(f);
  if (!b || !fits(b->first, b->second, f.dtype)) return std::nullopt;
  auto [lo, hi] = *b;
  Split s{empty_form(f.dtype), empty_form(f.dtype)};
  for (const Term& t : f.terms) {
    if (t.coef % c == 0)
      s.quotient.terms.push_back({t.node, t.coef / c});
    else
      s.rest.terms.push_back(t);
  }
  s.rest.constant = f.constant;
  auto rb = form_bounds(s.rest);
  if (!rb) return std::nullopt;
  auto [rlo, rhi] = *rb;
  Wide q;
  if (lo >= 0)
    q = floor_div(rlo, c);  // R - c*q >= rlo - c*floor(rlo/c) >= 0
  else if (hi <= 0)
    q = -floor_div(-rhi, c);  // R - c*q <= rhi - c*ceil(rhi/c) <= 0
  else
    return std::nullopt;
  if (s.quotient.terms.empty() && q == 0) return std::nullopt;
  s.quotient.constant = wrap_to_int_dtype(static_cast<int64_t>(q), f.dtype);
  s.rest.constant = wrap_to_int_dtype(static_cast<int64_t>(f.constant - c * q), f.dtype);
  return s;
}

// (c*Q + R) // c -> Q + R // c, under split_at's conditions.
NodeRef split_idiv(const Match& m) {
  int64_t c = pos_divisor(m);
  std::optional<Split> s = c ? split_at(m["x"], c) : std::nullopt;
  if (!s) return {};
  s->quotient.terms.push_back({make(Op::IDIV, m.root()->dtype, {build_sum(s->rest), m["c"]}), 1});
  return build_sum(s->quotient);
}

// (c*Q + R) % c -> R % c, under split_at's conditions.
NodeRef split_mod(const Match& m) {
  int64_t c = pos_divisor(m);
  std::optional<Split> s = c ? split_at(m["x"], c) : std::nullopt;
  if (!s) return {};
  return make(Op::MOD, m.root()->dtype, {build_sum(s->rest), m["c"]});
}

// x == g*X with g > 1 the gcd of c, every coefficient and the constant of x's linear form; returns
// X and c/g. x's value must fit the dtype (no wrapping); X's then does as well.
std::optional<std::pair<LinearForm, int64_t>> divide_common_factor(const NodeRef& x, int64_t c) {
  LinearForm f = linear_form(x);
  auto b = form_bounds(f);
  if (!b || !fits(b->first, b->second, f.dtype)) return std::nullopt;
  uint64_t g = static_cast<uint64_t>(c);
  for (const Term& t : f.terms) g = std::gcd(g, magnitude(t.coef));
  g = std::gcd(g, magnitude(f.constant));
  if (g <= 1) return std::nullopt;
  for (Term& t : f.terms) t.coef /= static_cast<int64_t>(g);
  f.constant /= static_cast<int64_t>(g);
  return std::pair{f, c / static_cast<int64_t>(g)};
}

// (g*X) // (g*d) -> X // d: the rationals g*X/(g*d) and X/d are equal, so are their truncations.
NodeRef cancel_gcd_idiv(const Match& m) {
  int64_t c = pos_divisor(m);
  auto r = c ? divide_common_factor(m["x"], c) : std::nullopt;
  return r ? build_sum(r->first) / r->second : NodeRef{};
}

// (g*X) % (g*d) -> (X % d)*g: g*X - g*d*((g*X)//(g*d)) == g*(X - d*(X//d)).
NodeRef cancel_gcd_mod(const Match& m) {
  int64_t c = pos_divisor(m);
  auto r = c ? divide_common_factor(m["x"], c) : std::nullopt;
  return r ? (build_sum(r->first) % r->second) * (c / r->second) : NodeRef{};
}

// x == g*X + R with g > 1 dividing c, X the terms whose coefficient g divides (divided by g), R
// the other terms and the constant, 0 <= R < g, and x >= 0 (then X >= 0: g*X > -g). Over the
// divisors g of c that a term's coefficient shares with c, the largest that works. It is what a
// flattened multi-axis index leaves: (r0*256 + r1) // 8192 with r1 < 256 is r0 // 32.
struct SmallRest {
  LinearForm multiple, rest;
  int64_t g;
};
std::optional<SmallRest> split_small_rest(const NodeRef& x, int64_t c) {
  LinearForm f = linear_form(x);
  auto b = form_bounds(f);
  if (!b || !fits(b->first, b->second, f.dtype) || b->first < 0) return std::nullopt;
  std::vector<int64_t> gs;
  for (const Term& t : f.terms) gs.push_back(static_cast<int64_t>(std::gcd(static_cast<uint64_t>(c), magnitude(t.coef))));
  std::sort(gs.rbegin(), gs.rend());
  for (int64_t g : gs) {
    if (g <= 1) break;
    SmallRest s{empty_form(f.dtype), empty_form(f.dtype), g};
    for (const Term& t : f.terms) (t.coef % g == 0 ? s.multiple.terms.push_back({t.node, t.coef / g}) : s.rest.terms.push_back(t));
    s.rest.constant = f.constant;
    auto rb = form_bounds(s.rest);
    if (rb && rb->first >= 0 && rb->second < g) return s;
  }
  return std::nullopt;
}

// (g*X + R) // (g*d) -> X // d under split_small_rest's conditions: R/g < 1 never reaches the next
// multiple of d.
NodeRef small_rest_idiv(const Match& m) {
  int64_t c = pos_divisor(m);
  std::optional<SmallRest> s = c ? split_small_rest(m["x"], c) : std::nullopt;
  if (!s) return {};
  NodeRef q = build_sum(s->multiple);
  return c == s->g ? q : q / (c / s->g);
}

// (g*X + R) % (g*d) -> (X % d)*g + R under the same conditions.
NodeRef small_rest_mod(const Match& m) {
  int64_t c = pos_divisor(m);
  std::optional<SmallRest> s = c ? split_small_rest(m["x"], c) : std::nullopt;
  if (!s) return {};
  NodeRef r = build_sum(s->rest);
  return c == s->g ? r : (build_sum(s->multiple) % (c / s->g)) * s->g + r;
}

}  // namespace

std::vector<Rule> divmod_rules() {
  Pat x = Pat::any("x"), c = Pat::cvar("c"), c1 = Pat::cvar("c1"), c2 = Pat::cvar("c2");
  Pat sum = Pat::op(Op::ADD).named("x");
  return {
      kernel_rule("idiv_neg_divisor", x / c, make_divisor_positive),
      kernel_rule("mod_neg_divisor", x % c, make_divisor_positive),
      kernel_rule("idiv_same_quotient", x / c, fold_same_quotient),
      kernel_rule("mod_small", x % c, drop_small_mod),
      kernel_rule("idiv_mul_exact", (x * c1) / c2, divide_exact_mul),
      kernel_rule("mod_mul_exact", (x * c1) % c2, drop_exact_mul_mod),
      kernel_rule("idiv_idiv", (x / c1) / c2, merge_nested_idiv),
      kernel_rule("mod_mod", (x % c1) % c2, merge_nested_mod),
      kernel_rule("idiv_of_mod", (x % c1) / c2, swap_mod_idiv),
      kernel_rule("idiv_add_split", sum / c, split_idiv),
      kernel_rule("mod_add_split", sum % c, split_mod),
      kernel_rule("idiv_small_rest", sum / c, small_rest_idiv),
      kernel_rule("mod_small_rest", sum % c, small_rest_mod),
      kernel_rule("idiv_gcd", x / c, cancel_gcd_idiv),
      kernel_rule("mod_gcd", x % c, cancel_gcd_mod),
  };
}

}  // namespace lg::symbolic
