#pragma once
// Specs accept or reject a graph at a stage boundary. A spec is a list of patterns, each with an
// optional check; a node is accepted when some pattern matches it and its check passes.
// SPEC=1 verifies at stage boundaries (the pipeline calls verify_stage); SPEC=2 also after every
// named rewrite that names its spec.
#include <optional>
#include <string>

#include "rewrite/matcher.h"

namespace lg {

struct SpecRule {
  Pat pat;
  std::function<bool(const Match&)> ok;  // null: a match is enough
};

struct Spec {
  std::string name;
  std::vector<SpecRule> rules;
  // Checks on the whole graph after every node passed (e.g. "a kernel has one STORE"); returns an
  // error message or "".
  std::function<std::string(const NodeRef& root)> whole;
};

// The first problem found: the rejected node and the graph it sits in; nullopt when accepted.
std::optional<std::string> spec_error(const NodeRef& root, const Spec& spec);
// Aborts with spec_error's message when the graph is rejected.
void verify(const NodeRef& root, const Spec& spec, std::string_view stage);
// verify() when SPEC >= 1.
void verify_stage(const NodeRef& root, const Spec& spec, std::string_view stage);

}  // namespace lg
