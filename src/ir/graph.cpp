#include "ir/graph.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "base/error.h"

namespace lg {

std::vector<const Node*> toposort(const NodeRef& root) {
  std::vector<const Node*> order;
  std::unordered_set<const Node*> done;
  // Explicit stack of (node, next source to visit) so deep graphs do not overflow the call stack.
  std::vector<std::pair<const Node*, size_t>> stack;
  if (!root) return order;
  stack.emplace_back(root.get(), 0);
  done.insert(root.get());
  while (!stack.empty()) {
    auto& [n, i] = stack.back();
    if (i < n->src.size()) {
      const Node* s = n->src[i++].get();
      if (done.insert(s).second) stack.emplace_back(s, 0);
      continue;
    }
    order.push_back(n);
    stack.pop_back();
  }
  return order;
}

static std::string shape_string(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); i++) r += (i ? "," : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

std::string node_line(const Node& n, const std::vector<std::pair<const Node*, int>>& names) {
  auto lookup = [&](const Node* s) -> std::string {
    auto it = std::lower_bound(names.begin(), names.end(), std::make_pair(s, -1));
    if (it != names.end() && it->first == s) return "%" + std::to_string(it->second);
    return std::string(op_name(s->op));
  };
  std::string line = std::string(op_name(n.op)) + " " + name(n.dtype);
  if (!n.src.empty()) {
    line += " (";
    for (size_t i = 0; i < n.src.size(); i++) line += (i ? ", " : "") + lookup(n.src[i].get());
    line += ")";
  }
  std::string a = arg_to_string(n.arg);
  if (!a.empty()) line += " " + a;
  if (!n.shape.empty()) line += " shape=" + shape_string(n.shape);
  return line;
}

bool depends_on(const NodeRef& root, const Node* n) {
  for (const Node* x : toposort(root))
    if (x == n) return true;
  return false;
}

std::string to_string(const NodeRef& root) {
  std::vector<const Node*> order = toposort(root);
  std::vector<std::pair<const Node*, int>> names;
  for (size_t i = 0; i < order.size(); i++) names.emplace_back(order[i], static_cast<int>(i));
  std::sort(names.begin(), names.end());
  std::string out;
  for (size_t i = 0; i < order.size(); i++)
    out += "%" + std::to_string(i) + " = " + node_line(*order[i], names) + "\n";
  return out;
}

int UserMap::index_of(const Node* n) const {
  auto it = std::lower_bound(pos_.begin(), pos_.end(), std::make_pair(n, -1));
  LG_CHECK(it != pos_.end() && it->first == n, "node not in graph");
  return it->second;
}

UserMap user_map(const NodeRef& root) {
  UserMap m;
  m.order = toposort(root);
  for (size_t i = 0; i < m.order.size(); i++) m.pos_.emplace_back(m.order[i], static_cast<int>(i));
  std::sort(m.pos_.begin(), m.pos_.end());
  m.users.resize(m.order.size());
  for (size_t i = 0; i < m.order.size(); i++) {
    std::vector<int> seen;
    for (const NodeRef& s : m.order[i]->src) {
      int j = m.index_of(s.get());
      if (std::find(seen.begin(), seen.end(), j) != seen.end()) continue;
      seen.push_back(j);
      m.users[j].push_back(static_cast<int>(i));
    }
  }
  return m;
}

}  // namespace lg
