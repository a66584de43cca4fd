#include "rewrite/matcher.h"

#include "base/error.h"

namespace lg {

NodeRef Match::operator[](std::string_view name) const {
  const Node* n = caps_.find(name);
  LG_CHECK(n != nullptr, "rule reads capture \"", name, "\" that its pattern does not bind");
  return NodeRef::share(n);
}

PatternMatcher::PatternMatcher(std::vector<Rule> rules) : rules_(std::move(rules)) {
  for (size_t i = 0; i < rules_.size(); i++) {
    OpSet ops = rules_[i].pat.root_ops();
    for (int o = 0; o < kNumOps; o++)
      if (ops.test(o)) by_op_[o].push_back(static_cast<int>(i));
  }
}

PatternMatcher operator+(const PatternMatcher& a, const PatternMatcher& b) {
  std::vector<Rule> r = a.rules_;
  r.insert(r.end(), b.rules_.begin(), b.rules_.end());
  return PatternMatcher(std::move(r));
}

NodeRef PatternMatcher::rewrite(const NodeRef& n, std::any* ctx, const Rule** fired) const {
  Captures caps;
  for (int i : by_op_[static_cast<size_t>(n->op)]) {
    const Rule& rule = rules_[i];
    caps.items.clear();
    if (!rule.pat.match(n.get(), caps)) continue;
    NodeRef r = rule.fn(Match(n, caps, ctx));
    if (r && r != n) {
      if (fired) *fired = &rule;
      return r;
    }
  }
  return {};
}

}  // namespace lg
