#pragma once
// Graph walks: a deterministic topological order and deterministic text printing.
#include <string>
#include <vector>

#include "ir/node.h"

namespace lg {

// Every node reachable from root, sources before users, each once. The order is a depth-first
// post-order visiting sources left to right, so it depends only on the graph's structure.
// The pointers stay valid while root is alive.
std::vector<const Node*> toposort(const NodeRef& root);
// A temporary root dies before the pointers are used (in `for (n : toposort(make(...)))` the
// root's last owner is the temporary): name the root first.
std::vector<const Node*> toposort(NodeRef&& root) = delete;

// Whether n is root or one of its sources, transitively (root's value depends on n's).
bool depends_on(const NodeRef& root, const Node* n);

// One line per node in topological order: "%3 = ADD f32 (%1, %2) arg shape=(2,3)".
// Numbers are positions in that order, so equal graphs print identically in every process.
std::string to_string(const NodeRef& root);
// One node, its sources named by the numbering of `names` (or by op when absent).
std::string node_line(const Node& n, const std::vector<std::pair<const Node*, int>>& names);

// Users of every node in the graph of root (in topological order of the users).
struct UserMap {
  std::vector<const Node*> order;  // toposort(root)
  // users[i]: indices into order of nodes that have order[i] as a source (once per user)
  std::vector<std::vector<int>> users;
  int index_of(const Node* n) const;

 private:
  friend UserMap user_map(const NodeRef& root);
  std::vector<std::pair<const Node*, int>> pos_;  // sorted by pointer, for index_of
};
UserMap user_map(const NodeRef& root);
UserMap user_map(NodeRef&& root) = delete;  // as toposort: the map points into root's graph

}  // namespace lg
