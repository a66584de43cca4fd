#include "rewrite/spec.h"

#include "base/config.h"
#include "base/error.h"
#include "ir/graph.h"

namespace lg {

std::optional<std::string> spec_error(const NodeRef& root, const Spec& spec) {
  std::vector<const Node*> order = toposort(root);
  Captures caps;
  for (const Node* n : order) {
    bool accepted = false;
    NodeRef ref = NodeRef::share(n);
    for (const SpecRule& r : spec.rules) {
      caps.items.clear();
      if (!r.pat.match(n, caps)) continue;
      if (!r.ok || r.ok(Match(ref, caps, nullptr))) {
        accepted = true;
        break;
      }
    }
    if (!accepted) {
      std::vector<std::pair<const Node*, int>> none;
      return str("spec \"", spec.name, "\" rejects node: ", node_line(*n, none), "\nin graph:\n",
                 to_string(root));
    }
  }
  if (spec.whole) {
    std::string e = spec.whole(root);
    if (!e.empty()) return str("spec \"", spec.name, "\" rejects graph: ", e, "\n", to_string(root));
  }
  return std::nullopt;
}

void verify(const NodeRef& root, const Spec& spec, std::string_view stage) {
  if (auto e = spec_error(root, spec)) internal_error(__FILE__, __LINE__, str("at ", stage, ": ", *e));
}

void verify_stage(const NodeRef& root, const Spec& spec, std::string_view stage) {
  if (config().spec >= 1) verify(root, spec, stage);
}

}  // namespace lg
