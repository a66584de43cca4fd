#pragma once
// Internal to the symbolic rules (symbolic.cpp, add_chain.cpp, divmod.cpp): the guard every rule
// shares, integer range helpers, linear forms of integer expressions, and the rule families that
// pm_symbolic() joins.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rewrite/matcher.h"

namespace lg::symbolic {

using Wide = __int128;

// A rule that sees only scalar kernel-stage nodes: no shape, no device, a scalar non-pointer dtype.
Rule kernel_rule(std::string name, Pat pat, RuleFn fn);

// Integer and bool dtypes whose node bounds (vmin, vmax) bound the value itself. uint64 is left
// out: its bounds saturate at INT64_MAX (a vmax of INT64_MAX allows any value up to 2^64-1, see
// ir/infer.cpp) and its constants are stored as bit patterns, so int64 arithmetic on them lies.
bool has_bounds(DType t);
// [lo, hi] lies in t's range. A value of t congruent to v modulo 2^bits, where v lies in that
// range, equals v: this is how rules prove that a wrapping expression did not wrap.
bool fits(Wide lo, Wide hi, DType t);
int64_t const_value(const Node& c);  // an integer or bool CONST's stored value
Wide floor_div(Wide a, Wide b);      // b > 0
int64_t wrap_mul(int64_t a, int64_t b, DType t);
int64_t wrap_add(int64_t a, int64_t b, DType t);

// sum(coef * node) + constant. linear_form(n) flattens n through ADD, MUL by a CONST and NEG of
// n's integer dtype; the form equals n modulo 2^bits (ring identities hold under wrapping).
// Terms are merged (one per node, no zero coefficient) and sorted: RANGEs by id, then DEFINE_VARs
// by name, then other nodes by op and structural hash.
struct Term {
  NodeRef node;
  int64_t coef;  // wrapped to dtype
};
struct LinearForm {
  DType dtype;
  std::vector<Term> terms;
  int64_t constant = 0;  // wrapped to dtype
  bool complete = true;  // false: the expression was too large to flatten (rules then decline)
};
LinearForm linear_form(const NodeRef& n);
// The sum in the form's order, constant last: t0*c0 + t1*c1 + ... + k. A coefficient 1 is left
// out; an empty form is CONST 0.
NodeRef build_sum(const LinearForm& f);
// Bounds of the form's mathematical (unwrapped) value from its terms' bounds. When they fit the
// dtype, the expression's value equals that mathematical value. nullopt when the dtype has no
// bounds, the form is incomplete, or a partial sum passes 2^100 (far outside every dtype).
std::optional<std::pair<Wide, Wide>> form_bounds(const LinearForm& f);

std::vector<Rule> add_chain_rules();
std::vector<Rule> divmod_rules();
std::vector<Rule> gated_index_rules();  // gated_index.cpp

}  // namespace lg::symbolic
