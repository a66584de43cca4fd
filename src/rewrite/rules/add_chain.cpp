// Linear forms of integer expressions and the rules that keep ADD chains in one canonical shape:
// flat, like terms collected, sorted, constant last. Everything here is a ring identity (sums and
// products commute, associate and distribute), and those hold modulo 2^bits, so these rules are
// sound for every integer dtype even where the arithmetic wraps.
#include <algorithm>
#include <unordered_map>

#include "ir/build.h"
#include "rewrite/rules/symbolic_internal.h"

namespace lg::symbolic {
namespace {

constexpr int kMaxFlattenNodes = 4096;  // larger expressions are left as they are

class Flattener {
 public:
  explicit Flattener(LinearForm& f) : f_(f) {}

  // Adds mult * n to the form.
  void add(const NodeRef& n, int64_t mult) {
    if (--budget_ < 0) {
      f_.complete = false;
      return;
    }
    DType t = f_.dtype;
    if (n->dtype == t) {
      switch (n->op) {
        case Op::CONST: f_.constant = wrap_add(f_.constant, wrap_mul(mult, const_value(*n), t), t); return;
        case Op::ADD:
          add(n->src[0], mult);
          add(n->src[1], mult);
          return;
        case Op::NEG: add(n->src[0], wrap_mul(mult, -1, t)); return;
        case Op::MUL:
          if (n->src[1]->is_const()) return add(n->src[0], wrap_mul(mult, const_value(*n->src[1]), t));
          if (n->src[0]->is_const()) return add(n->src[1], wrap_mul(mult, const_value(*n->src[0]), t));
          break;
        default: break;
      }
    }
    raw_.push_back({n, mult});
  }

  // Merges terms of one node (first appearance keeps its place) and drops zero coefficients.
  void finish() {
    std::unordered_map<const Node*, size_t> slot;
    for (Term& t : raw_) {
      auto [it, fresh] = slot.try_emplace(t.node.get(), f_.terms.size());
      if (fresh)
        f_.terms.push_back(std::move(t));
      else
        f_.terms[it->second].coef = wrap_add(f_.terms[it->second].coef, t.coef, f_.dtype);
    }
    std::erase_if(f_.terms, [](const Term& t) { return t.coef == 0; });
  }

 private:
  LinearForm& f_;
  std::vector<Term> raw_;
  int budget_ = kMaxFlattenNodes;
};

int term_rank(const Node& n) { return n.op == Op::RANGE ? 0 : n.op == Op::DEFINE_VAR ? 1 : 2; }

// Loop variables first (in loop order), then variables by name, then everything else by op and
// structural hash: an order that depends only on structure, never on addresses.
bool term_before(const Term& a, const Term& b) {
  const Node& x = *a.node;
  const Node& y = *b.node;
  if (term_rank(x) != term_rank(y)) return term_rank(x) < term_rank(y);
  if (x.op == Op::RANGE && x.get_arg<RangeArg>().id != y.get_arg<RangeArg>().id)
    return x.get_arg<RangeArg>().id < y.get_arg<RangeArg>().id;
  if (x.op == Op::DEFINE_VAR && x.get_arg<VarArg>().name != y.get_arg<VarArg>().name)
    return x.get_arg<VarArg>().name < y.get_arg<VarArg>().name;
  if (x.op != y.op) return x.op < y.op;
  return x.hash < y.hash;
}

}  // namespace

LinearForm linear_form(const NodeRef& n) {
  LinearForm f{n->dtype, {}, 0, true};
  Flattener fl(f);
  fl.add(n, 1);
  fl.finish();
  std::stable_sort(f.terms.begin(), f.terms.end(), term_before);
  return f;
}

NodeRef build_sum(const LinearForm& f) {
  NodeRef out;
  auto append = [&](const NodeRef& t) { out = out ? make(Op::ADD, f.dtype, {out, t}) : t; };
  for (const Term& t : f.terms)
    append(t.coef == 1 ? t.node : make(Op::MUL, f.dtype, {t.node, cnst_int(f.dtype, t.coef)}));
  if (f.constant != 0 || !out) append(cnst_int(f.dtype, f.constant));
  return out;
}

std::optional<std::pair<Wide, Wide>> form_bounds(const LinearForm& f) {
  // Giving up past 2^100 keeps every sum from overflowing: each term is below 2^126 in magnitude.
  constexpr Wide kHuge = Wide{1} << 100;
  if (!has_bounds(f.dtype) || !f.complete) return std::nullopt;
  Wide lo = f.constant, hi = f.constant;
  for (const Term& t : f.terms) {
    Wide a = Wide{t.coef} * t.node->vmin, b = Wide{t.coef} * t.node->vmax;
    lo += std::min(a, b);
    hi += std::max(a, b);
    if (lo < -kHuge || hi > kHuge) return std::nullopt;
  }
  return std::pair{lo, hi};
}

// ---- rules ----

// Rebuilds an integer ADD chain from its linear form: nested sums flattened, like terms collected
// (x*c1 + x*c2 -> x*(c1+c2)), zero terms and constants folded, terms in term_before order, constant
// last. Sound: ring identities, which hold modulo 2^bits. Terminates: the form of a rebuilt chain
// is the same form, so a canonical chain rebuilds to itself and the rule declines.
static NodeRef normalize_add_chain(const Match& m) {
  LinearForm f = linear_form(m.root());
  return f.complete ? build_sum(f) : NodeRef{};
}

// (x*c1)*c2 -> x*(c1*c2) for integers: associativity, exact modulo 2^bits.
static NodeRef fold_mul_constants(const Match& m) {
  DType t = m.root()->dtype;
  return make(Op::MUL, t, {m["x"], cnst_int(t, wrap_mul(const_value(*m["c1"]), const_value(*m["c2"]), t))});
}

// (a + b)*c -> a*c + b*c for integers (recursively, as a canonical chain): distributivity, exact
// modulo 2^bits. It exposes the terms to collection and to the division rules.
static NodeRef distribute_mul_constant(const Match& m) {
  LinearForm f = linear_form(m.root());
  return f.complete ? build_sum(f) : NodeRef{};
}

// -(x*c) -> x*(-c) for integers: exact modulo 2^bits.
static NodeRef negate_mul_constant(const Match& m) {
  DType t = m.root()->dtype;
  return make(Op::MUL, t, {m["x"], cnst_int(t, wrap_mul(const_value(*m["c"]), -1, t))});
}

// Index of the term whose node is `op`(x, c) for the given x and c nodes with coefficient coef.
static int find_term(const LinearForm& f, Op op, const Node* x, const Node* c, int64_t coef) {
  for (size_t j = 0; j < f.terms.size(); j++) {
    const Node& n = *f.terms[j].node;
    if (n.op == op && n.src[0].get() == x && n.src[1].get() == c && f.terms[j].coef == coef)
      return static_cast<int>(j);
  }
  return -1;
}

// In a chain, (x//c)*(c*m) + (x%c)*m -> x*m for a CONST c != 0: MOD is defined by
// x == (x//c)*c + x%c (ops.def) for every x, unsigned and wrapping cases included; the multiple m
// and the rest of the chain are ring arithmetic. This undoes the index split of a reshape.
static NodeRef recombine_divmod(const Match& m) {
  LinearForm f = linear_form(m.root());
  if (!f.complete) return {};
  for (size_t i = 0; i < f.terms.size(); i++) {
    const Node& mod = *f.terms[i].node;
    if (mod.op != Op::MOD || !mod.src[1]->is_const() || const_value(*mod.src[1]) == 0) continue;
    int64_t div_coef = wrap_mul(const_value(*mod.src[1]), f.terms[i].coef, f.dtype);
    int j = find_term(f, Op::IDIV, mod.src[0].get(), mod.src[1].get(), div_coef);
    if (j < 0) continue;
    f.terms[i].node = mod.src[0];
    f.terms.erase(f.terms.begin() + j);
    return build_sum(f);
  }
  return {};
}

// In a chain, ((x//c1)%c2)*(c1*m) + (x%c1)*m -> (x%(c1*c2))*m for CONSTs c1, c2 > 0 with c1*c2 in
// range: x//(c1*c2) == (x//c1)//c2 for truncated division, so
//   x%(c1*c2) = x - c1*c2*((x//c1)//c2) = c1*((x//c1) % c2) + x%c1   for every x.
// The two-level form of an index split (i1*C + i2 of a reshape to (B, C)).
static NodeRef recombine_nested_mod(const Match& m) {
  LinearForm f = linear_form(m.root());
  if (!f.complete || !has_bounds(f.dtype)) return {};
  for (size_t i = 0; i < f.terms.size(); i++) {
    const Node& inner = *f.terms[i].node;  // x % c1
    if (inner.op != Op::MOD || !inner.src[1]->is_const()) continue;
    int64_t c1 = const_value(*inner.src[1]);
    if (c1 <= 0) continue;
    for (size_t j = 0; j < f.terms.size(); j++) {
      const Node& outer = *f.terms[j].node;  // (x // c1) % c2
      if (outer.op != Op::MOD || !outer.src[1]->is_const() || outer.src[0]->op != Op::IDIV) continue;
      const Node& div = *outer.src[0];
      int64_t c2 = const_value(*outer.src[1]);
      if (div.src[0] != inner.src[0] || div.src[1] != inner.src[1] || c2 <= 0) continue;
      if (!fits(Wide{c1} * c2, Wide{c1} * c2, f.dtype)) continue;
      if (f.terms[j].coef != wrap_mul(c1, f.terms[i].coef, f.dtype)) continue;
      f.terms[i].node = make(Op::MOD, f.dtype, {inner.src[0], cnst_int(f.dtype, c1 * c2)});
      f.terms.erase(f.terms.begin() + static_cast<long>(j));
      return build_sum(f);
    }
  }
  return {};
}

std::vector<Rule> add_chain_rules() {
  Pat x = Pat::any("x"), c = Pat::cvar("c"), c1 = Pat::cvar("c1"), c2 = Pat::cvar("c2");
  return {
      kernel_rule("add_chain_normalize", Pat::op(Op::ADD).dtype_if(is_int), normalize_add_chain),
      kernel_rule("divmod_recombine", Pat::op(Op::ADD).dtype_if(is_int), recombine_divmod),
      kernel_rule("divmod_recombine_nested", Pat::op(Op::ADD).dtype_if(is_int), recombine_nested_mod),
      kernel_rule("mul_const_assoc", ((x * c1) * c2).dtype_if(is_int), fold_mul_constants),
      kernel_rule("mul_distribute_const", (Pat::op(Op::ADD) * c).dtype_if(is_int), distribute_mul_constant),
      kernel_rule("neg_mul_const", Pat::op(Op::NEG, {x * c}).dtype_if(is_int), negate_mul_constant),
  };
}

}  // namespace lg::symbolic
