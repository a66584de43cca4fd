#include "schedule/fusion.h"

#include <algorithm>
#include <unordered_set>

#include "base/error.h"
#include "rewrite/rules/movement.h"
#include "schedule/schedule.h"

namespace lg {

namespace {

bool is_leaf(const Node* n) {
  return n->op == Op::BUFFER || n->op == Op::CONST || n->op == Op::IOTA || n->op == Op::DEVICE ||
         n->op == Op::DEFINE_VAR;
}

// Distinct inputs (buffers and realized nodes) read by n's fused subgraph, counted up to `cap`.
int count_inputs(const UserMap& um, const std::vector<bool>& realize, int i, int cap) {
  std::vector<int> stack{i};
  std::unordered_set<int> seen{i};
  int inputs = 0;
  while (!stack.empty() && inputs < cap) {
    int j = stack.back();
    stack.pop_back();
    for (const NodeRef& s : um.order[j]->src) {
      int k = um.index_of(s.get());
      if (!seen.insert(k).second) continue;
      if (realize[k] || um.order[k]->op == Op::BUFFER)
        inputs++;
      else if (!is_leaf(um.order[k]))
        stack.push_back(k);
    }
  }
  return inputs;
}

// Whether n's fused subgraph (up to realized nodes and buffers, at most `cap` nodes looked at)
// computes a transcendental (EXP2, LOG2, SIN): too costly to recompute per broadcast element.
bool has_transcendental(const UserMap& um, const std::vector<bool>& realize, int i, int cap) {
  std::vector<int> stack{i};
  std::unordered_set<int> seen{i};
  while (!stack.empty() && cap-- > 0) {
    const Node* n = um.order[stack.back()];
    stack.pop_back();
    if (n->op == Op::EXP2 || n->op == Op::LOG2 || n->op == Op::SIN) return true;
    for (const NodeRef& s : n->src) {
      int k = um.index_of(s.get());
      if (seen.insert(k).second && !realize[k] && !is_leaf(um.order[k])) stack.push_back(k);
    }
  }
  return false;
}

}  // namespace

std::vector<bool> find_realize_points(const UserMap& um, const NodeRef& sink) {
  const auto& order = um.order;
  size_t n = order.size();
  std::vector<bool> realize(n, false);
  for (const NodeRef& s : sink->src)
    if (!is_buffer_view(s.get()) && !is_reshaped_contiguous(s.get())) realize[um.index_of(s.get())] = true;

  // paths[i]: number of paths from node i to realize points through fused nodes (capped at 2);
  // crosses[i]: some such path crosses an EXPAND (the value would be recomputed per broadcast
  // element), a PAD (the reduction would run, gated off, over the padding too) or the table of a
  // GATHER (rows read at data-dependent positions).
  std::vector<int> paths(n, 0);
  std::vector<bool> crosses(n, false);
  for (size_t k = n; k-- > 0;) {
    const Node* node = order[k];
    if (node->op == Op::SINK) continue;
    if (node->op == Op::CONTIGUOUS || node->op == Op::COPY || node->op == Op::ASSIGN || node->op == Op::SCATTER_ADD)
      realize[k] = true;
    if (node->op == Op::COPY) {  // the copy reads a run of its base's buffer
      const Node* base = element_range(node->src[0].get()).base;
      if (base->op != Op::BUFFER) realize[um.index_of(base)] = true;
    }
    int p = 0;
    bool c = false;
    for (int u : um.users[k]) {
      const Node* user = order[u];
      if (user->op == Op::SINK) continue;
      if (realize[u] && user->op != Op::ASSIGN && user->op != Op::COPY) {
        p += 1;
        continue;
      }
      if (user->op == Op::ASSIGN || user->op == Op::COPY ||
          (user->op == Op::SCATTER_ADD && user->src[0].get() == node)) {  // read as realized values
        p += 1;
        continue;
      }
      p += paths[u];
      c = c || crosses[u] || user->op == Op::EXPAND || user->op == Op::PAD ||
          (user->op == Op::GATHER && user->src[0].get() == node);
    }
    paths[k] = std::min(p, 2);
    crosses[k] = c;
    if (node->op == Op::REDUCE_AXIS && !realize[k] && (paths[k] > 1 || crosses[k])) realize[k] = true;
    if (!realize[k] && is_alu(node->op) && um.users[k].size() >= 2 &&
        count_inputs(um, realize, static_cast<int>(k), 3) >= 3)
      realize[k] = true;
    // An elementwise value broadcast into a bigger iteration space (e.g. the softmax gradient
    // feeding a matmul) would be recomputed per broadcast element: realize it when that includes a
    // transcendental.
    if (!realize[k] && is_alu(node->op) && crosses[k] && has_transcendental(um, realize, static_cast<int>(k), 64))
      realize[k] = true;
    if (realize[k]) {
      paths[k] = 1;
      crosses[k] = false;
    }
  }
  return realize;
}

}  // namespace lg
