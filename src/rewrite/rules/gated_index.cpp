// The address of a gated INDEX folded over the loop values its gate lets through.
//
// INDEX(buf, i, gate) is only used where the gate holds (ops.def: a gated load or store does not
// happen where it is false), so i may be replaced by any expression equal to it there. A gate that
// bounds a loop variable (r < c, NOT(r < c), c < r, NOT(c < r)) narrows r inside i: i is folded as
// if r ran over the gated interval only. Through a pad or a concatenation an index picks up
// divisions and moduli of r + k whose quotient changes over r's whole range but not over the gated
// part: RoPE's rotate_half (cat(-x[16:], x[:16]) along a head dim of 32, read through the heads'
// reshape) gave ((r + 2) / 4) % 8 style terms per element, scalar code at 4 ns an element, and
// folds to i + 16.
#include <cstdlib>

#include "ir/build.h"
#include "ir/graph.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/symbolic.h"
#include "rewrite/rules/symbolic_internal.h"

namespace lg::symbolic {
namespace {

// The inclusive interval a gate allows a RANGE (with a constant trip count).
struct GatedRange {
  NodeRef range;
  int64_t lo, hi;
};

GatedRange& entry(std::vector<GatedRange>& out, const NodeRef& r) {
  for (GatedRange& g : out)
    if (g.range == r) return g;
  out.push_back({r, r->vmin, r->vmax});
  return out.back();
}

bool is_bounded_range(const NodeRef& n) { return n->op == Op::RANGE && n->src[0]->is_const(); }

// Collects what each clause of an AND chain says about a RANGE; other clauses are ignored (they
// only make the gate stricter).
void collect(const NodeRef& gate, std::vector<GatedRange>& out) {
  if (gate->op == Op::AND && is_bool(gate->dtype)) {
    for (const NodeRef& s : gate->src) collect(s, out);
    return;
  }
  bool negated = gate->op == Op::XOR && gate->src[1]->is_const_value(1);
  const NodeRef& cmp = negated ? gate->src[0] : gate;
  if (cmp->op != Op::CMPLT) return;
  const NodeRef &a = cmp->src[0], &b = cmp->src[1];
  // constants far from the int64 limits, so c - 1 and c + 1 below cannot overflow
  auto small = [](const NodeRef& c) {
    return c->is_const() && std::abs(const_value(*c)) < (int64_t{1} << 62);
  };
  if (is_bounded_range(a) && small(b)) {  // r < c, or r >= c
    GatedRange& g = entry(out, a);
    int64_t c = const_value(*b);
    if (negated)
      g.lo = std::max(g.lo, c);
    else
      g.hi = std::min(g.hi, c - 1);
  } else if (small(a) && is_bounded_range(b)) {  // c < r, or r <= c
    GatedRange& g = entry(out, b);
    int64_t c = const_value(*a);
    if (negated)
      g.hi = std::min(g.hi, c);
    else
      g.lo = std::max(g.lo, c + 1);
  }
}

// INDEX(buf, i, gate) -> INDEX(buf, i', gate) with i' = i wherever the gate holds, when i' is a
// smaller graph than i (so the rule cannot fire forever). Each narrowed RANGE r in [lo, hi] is
// replaced by lo + r' for a RANGE r' of hi - lo + 1 trips (r's id: bounds come from the trip
// count), i is folded, and r' is put back as r - lo.
NodeRef fold_gated_index(const Match& m) {
  const NodeRef& n = m.root();
  if (n->src.size() != 3 || n->src[2]->is_const()) return {};
  const NodeRef& idx = n->src[1];
  if (!has_bounds(idx->dtype)) return {};
  std::vector<GatedRange> gated;
  collect(n->src[2], gated);
  std::vector<std::pair<NodeRef, NodeRef>> into, back;
  for (const GatedRange& g : gated) {
    const NodeRef& r = g.range;
    if (g.lo > g.hi) return {};  // the gate never holds: nothing to fold for
    if ((g.lo == r->vmin && g.hi == r->vmax) || !depends_on(idx, r.get())) continue;
    NodeRef narrow = make(Op::RANGE, r->dtype, {cnst_int(r->src[0]->dtype, g.hi - g.lo + 1)}, r->arg);
    into.push_back({r, g.lo != 0 ? narrow + g.lo : narrow});
    back.push_back({narrow, g.lo != 0 ? r - g.lo : r});
  }
  if (into.empty()) return {};
  NodeRef folded = rewrite(substitute(idx, into), pm_symbolic(), {.name = "fold gated index"});
  NodeRef restored = rewrite(substitute(folded, back), pm_symbolic(), {.name = "fold gated index"});
  if (toposort(restored).size() >= toposort(idx).size()) return {};
  return make(Op::INDEX, n->dtype, {n->src[0], restored, n->src[2]}, n->arg);
}

}  // namespace

std::vector<Rule> gated_index_rules() {
  return {Rule{"fold_gated_index", Pat::op(Op::INDEX), fold_gated_index}};
}

}  // namespace lg::symbolic
