#pragma once
// The one rewrite driver. Every call is named:
//   root = rewrite(root, pm_symbolic(), {.name = "initial symbolic"});
// It rewrites to a fixed point: no rule of pm matches any node of the result. By default sources
// are rewritten before their users (bottom up); with top_down a node is rewritten before its sources
// (for passes that push something down the graph), and again after its sources changed.
// A rule whose result leads back to a node being rewritten, or a rewrite that runs past max_steps,
// is non-termination: the driver aborts naming the rewrite and the last rule that fired.
// DEBUG=5 prints the graph after each call; SPEC=2 verifies it against options.spec when given.
#include <any>
#include <functional>
#include <utility>
#include <vector>

#include "rewrite/matcher.h"
#include "rewrite/spec.h"

namespace lg {

struct RewriteOptions {
  const char* name = nullptr;  // required
  bool top_down = false;
  const Spec* spec = nullptr;
  long max_steps = 10'000'000;
  // Called for every rule application (tests use it to check each rule on random inputs).
  std::function<void(const Rule& rule, const NodeRef& before, const NodeRef& after)> on_rule;
};

NodeRef rewrite(const NodeRef& root, const PatternMatcher& pm, const RewriteOptions& opts, std::any ctx = {});

// Replaces every node that is a key of `with` by its value, everywhere in root (not inside the
// replacements themselves).
NodeRef substitute(const NodeRef& root, const std::vector<std::pair<NodeRef, NodeRef>>& with);

}  // namespace lg
