#include "schedule/fusion.h"

#include <algorithm>
#include <unordered_set>

#include "base/error.h"
#include "rewrite/rules/movement.h"
#include "schedule/schedule.h"
#include "schedule/split_reduce.h"

namespace lg {

namespace {

bool is_leaf(const Node* n) {
  return n->op == Op::BUFFER || n->op == Op::CONST || n->op == Op::IOTA || n->op == Op::DEVICE ||
         n->op == Op::DEFINE_VAR;
}

bool is_attention(Op op) { return op == Op::FLASH_ATTENTION || op == Op::FLASH_ATTENTION_GRAD; }

// Ops that are realize points wherever they are (find_realize_points' first rule).
bool always_realized(Op op) {
  return op == Op::CONTIGUOUS || op == Op::COPY || op == Op::ASSIGN || op == Op::SCATTER_ADD ||
         is_attention(op);
}

// Distinct inputs (buffers and realized nodes) read by n's fused subgraph, counted up to `cap`.
// Realize points are decided from the roots toward the leaves, so n's sources are not decided yet
// when this runs: an op that is always realized (a matmul's CONTIGUOUS product) counts as one input,
// not as the inputs of its own kernel, and so does a reduction (a matmul's product, a row's
// maximum): it ends up realized (n's users give it several paths) or computed once per row in the
// one kernel its paths lead to, never recomputed with n in each of n's readers.
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
      const Node* src = um.order[k];
      if (realize[k] || src->op == Op::BUFFER || src->op == Op::REDUCE_AXIS || always_realized(src->op))
        inputs++;
      else if (!is_leaf(src))
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

// A row shape is (rows..., 1...): at least one trailing size-1 axis, at least two rows. Returns
// the number of leading (row) axes, or 0 for any other shape.
size_t row_axes(const Shape& s) {
  size_t p = s.size();
  while (p > 0 && s[p - 1] == 1) p--;
  int64_t rows = 1;
  for (size_t i = 0; i < p; i++) rows *= s[i];
  return p > 0 && p < s.size() && rows >= 2 ? p : 0;
}

// Whether `wide` has the rows of row shape `row` as its leading axes (same rank).
bool has_rows_of(const Shape& wide, const Shape& row) {
  size_t p = row_axes(row);
  if (p == 0 || wide.size() != row.size()) return false;
  for (size_t i = 0; i < p; i++)
    if (wide[i] != row[i]) return false;
  return true;
}

// An EXPAND of a row shape along its trailing axes: a value per row, broadcast along the row.
bool is_row_expand(const Node* n) { return n->op == Op::EXPAND && has_rows_of(n->shape, n->src[0]->shape); }

// Whether user u of a node keeps the node inside the row space: elementwise ops, row expands and
// row reductions, up to a realize point that is elementwise or a row reduction.
bool keeps_rows(const Node* user, bool realized, bool user_in_rows) {
  bool row_op = is_alu(user->op) || is_row_reduce(user);
  if (realized) return row_op;
  return user_in_rows && (row_op || is_row_expand(user));
}

// CAST of a 16-bit float to float32: exact, so the 16-bit value can be stored in its place.
bool is_widening_cast(const Node* n) {
  return n->op == Op::CAST && n->dtype == dtypes::float32 &&
         (n->src[0]->dtype == dtypes::bfloat16 || n->src[0]->dtype == dtypes::float16);
}

// A view of a whole buffer, row-major from its element 0: what an attention kernel can read as is.
bool is_whole_buffer(const Node* n) {
  ElementRange r = element_range(n);
  return r.base->op == Op::BUFFER && r.offset == 0 && is_contiguous_buffer_view(n);
}

// Whether every user of node i reads it inside its own kernel (no SINK, COPY, ASSIGN, SCATTER_ADD
// or attention kernel that needs this very node's buffer).
bool only_fused_users(const UserMap& um, int i) {
  for (int u : um.users[i]) {
    Op op = um.order[u]->op;
    if (op == Op::SINK || op == Op::COPY || op == Op::ASSIGN || op == Op::SCATTER_ADD || is_attention(op)) return false;
  }
  return true;
}

// A node through movement ops (the views a tensor-stage graph puts between values).
const Node* through_views(const Node* n) {
  while (is_movement(n->op)) n = n->src[0].get();
  return n;
}

// Whether n is an ADD reduction of a MUL (or of an ADD of MULs) for which factors_ok(mul) holds.
template <class F>
bool sums_products(const Node* n, F factors_ok) {
  if (n->op != Op::REDUCE_AXIS || n->get_arg<ReduceArg>().op != Op::ADD) return false;
  std::vector<const Node*> todo{n->src[0].get()};
  while (!todo.empty()) {
    const Node* x = todo.back();
    todo.pop_back();
    if (x->op == Op::ADD) {
      todo.push_back(x->src[0].get());
      todo.push_back(x->src[1].get());
    } else if (x->op == Op::MUL && x->src[0] != x->src[1] && factors_ok(x)) {
      return true;
    }
  }
  return false;
}

// A sum of 16-bit products: REDUCE_AXIS(ADD) of a MUL (or an ADD of MULs) whose two sources are
// widening casts (through views): a matmul in bf16 or fp16, what tensor cores compute.
bool is_half_product_sum(const Node* n) {
  return sums_products(n, [](const Node* mul) {
    return is_widening_cast(through_views(mul->src[0].get())) &&
           is_widening_cast(through_views(mul->src[1].get()));
  });
}

// A 16-bit cast of a 16-bit product sum (through views): the value a bf16 / fp16 matmul stores.
bool is_half_matmul_result(const Node* n) {
  return n->op == Op::CAST && (n->dtype == dtypes::bfloat16 || n->dtype == dtypes::float16) &&
         is_half_product_sum(through_views(n->src[0].get()));
}

// Whether node `from`'s value reaches, through movement ops, a MUL for which mul_ok holds that is
// summed, directly or as a term of an ADD of products, by a node for which sum_ok holds.
template <class M, class S>
bool reaches_summed_mul(const UserMap& um, int from, M mul_ok, S sum_ok) {
  auto summed = [&](int r) { return sum_ok(um.order[r]); };
  std::vector<int> todo{from};
  while (!todo.empty()) {
    int j = todo.back();
    todo.pop_back();
    for (int u : um.users[j]) {
      const Node* n = um.order[u];
      if (is_movement(n->op)) todo.push_back(u);
      if (n->op != Op::MUL || !mul_ok(n)) continue;
      for (int r : um.users[u])
        if (summed(r) ||
            (um.order[r]->op == Op::ADD && std::any_of(um.users[r].begin(), um.users[r].end(), summed)))
          return true;
    }
  }
  return false;
}

// Whether node i (a 16-bit value) is an operand of a 16-bit matmul: a user of it is a widening CAST
// whose value reaches, through movement ops, a MUL summed by a 16-bit product sum
// (is_half_product_sum).
bool is_half_matmul_operand(const UserMap& um, int i) {
  return std::any_of(um.users[i].begin(), um.users[i].end(), [&](int c) {
    return is_widening_cast(um.order[c]) && reaches_summed_mul(
                                                um, c, [](const Node*) { return true; }, is_half_product_sum);
  });
}

// Whether node i (a float32 value) is a factor of a float32 product sum: its value reaches, through
// movement ops, a float32 MUL of two distinct sources summed by an ADD reduction. With the caller's
// broadcast check (an EXPAND on the way), that is an operand of a float32 matmul.
bool is_f32_matmul_operand(const UserMap& um, int i) {
  return reaches_summed_mul(
      um, i, [](const Node* mul) { return mul->dtype == dtypes::float32 && mul->src[0] != mul->src[1]; },
      [](const Node* r) { return r->op == Op::REDUCE_AXIS && r->get_arg<ReduceArg>().op == Op::ADD; });
}

// A sum of float32 products whose factors are not both widened 16-bit values: a float32 matmul.
bool is_f32_product_sum(const Node* n) {
  return sums_products(n, [](const Node* mul) { return mul->dtype == dtypes::float32; }) &&
         !is_half_product_sum(n);
}

// Whether a RESHAPE from `from` to `to` merges axes: some axis of `to` spans more than one axis of
// `from` (size-1 axes aside). Splitting axes and adding or dropping size-1 axes do not merge.
bool merges_axes(const Shape& from, const Shape& to) {
  size_t j = 0;
  auto next = [](const Shape& s, size_t& i) {
    while (i < s.size() && s[i] == 1) i++;
    return i < s.size() ? s[i++] : int64_t{1};
  };
  for (size_t i = 0; i < from.size();) {
    int64_t left = next(from, i);
    while (left > 1) {
      int64_t d = next(to, j);
      if (d == 1 || left % d != 0) return true;
      left /= d;
    }
  }
  return false;
}

// The last PERMUTE of the chain of RESHAPEs and PERMUTEs that node i's one user starts (each node of
// the chain the one user of the node before, none realized yet), or -1 if the chain has none. The
// PERMUTE must come before any RESHAPE that merges axes: a kernel realizing it loops over its axes,
// and a merged one would index node i's sources by division and remainder.
int last_permute_of_chain(const UserMap& um, const std::vector<bool>& realize, int i) {
  int last = -1;
  for (int j = i; um.users[j].size() == 1;) {
    int u = um.users[j][0];
    const Node* n = um.order[u];
    if ((n->op != Op::RESHAPE && n->op != Op::PERMUTE) || realize[u]) break;
    if (n->op == Op::RESHAPE && merges_axes(n->src[0]->shape, n->shape)) break;
    if (n->op == Op::PERMUTE) last = u;
    j = u;
  }
  return last;
}

// n under its RESHAPEs and PERMUTEs (no broadcast, padding or slice). is_computed_value: that is an
// ALU op, computed here, not a view of a buffer.
const Node* through_layout(const Node* n) {
  while (n->op == Op::RESHAPE || n->op == Op::PERMUTE) n = n->src[0].get();
  return n;
}
bool is_computed_value(const Node* n) { return is_alu(through_layout(n)->op); }

// Whether node i's value reaches realize point t through movement ops only (each node on the way,
// t included, one of them; every node before t with one user), one of them a PERMUTE: t stores i's
// value in another axis order.
bool permuted_on_the_way(const UserMap& um, int i, int t) {
  bool permuted = false;
  for (int j = i; j != t;) {
    if (um.users[j].size() != 1) return false;
    j = um.users[j][0];
    const Node* n = um.order[j];
    if (!is_movement(n->op)) return false;
    permuted = permuted || n->op == Op::PERMUTE;
  }
  return permuted;
}

}  // namespace

bool is_row_reduce(const Node* n) {
  return n->op == Op::REDUCE_AXIS && has_rows_of(n->src[0]->shape, n->shape);
}

std::vector<bool> find_realize_points(const UserMap& um, const NodeRef& sink) {
  const auto& order = um.order;
  size_t n = order.size();
  std::vector<bool> realize(n, false);
  std::vector<bool> narrow(n, false);  // realized in place of a widening cast of it (below)
  std::vector<int> half_products(n, 0);  // per realize point: 16-bit product sums fused into its kernel
  for (const NodeRef& s : sink->src)
    if (!is_buffer_view(s.get()) && !is_reshaped_contiguous(s.get())) realize[um.index_of(s.get())] = true;

  // paths[i]: number of paths from node i to realize points through fused nodes (capped at 2);
  // crosses[i]: some such path crosses an EXPAND (the value would be recomputed per broadcast
  // element), a PAD (the reduction would run, gated off, over the padding too) or the table of a
  // GATHER (rows read at data-dependent positions).
  std::vector<int> paths(n, 0);
  std::vector<bool> crosses(n, false);
  // in_rows[i]: every path from node i to realize points stays in the row space of one kernel
  // (keeps_rows): its rows are the outer loops of the kernels that read it, and a row reduction
  // there runs once per row, before the loops over the row's elements (codegen/linearize.h).
  std::vector<bool> in_rows(n, false);
  // target[i]: the one realize point every path from node i leads to; kNone before any, kMany when
  // they lead to several (a row reduction there would be computed once in each).
  constexpr int kNone = -1, kMany = -2;
  std::vector<int> target(n, kNone);
  auto join = [&](int a, int b) { return a == kNone ? b : (b == kNone || a == b) ? a : kMany; };
  for (size_t k = n; k-- > 0;) {
    const Node* node = order[k];
    if (node->op == Op::SINK) continue;
    if (narrow[k]) realize[k] = true;
    if (always_realized(node->op)) realize[k] = true;
    if (node->op == Op::COPY) {  // the copy reads a run of its base's buffer
      const Node* base = element_range(node->src[0].get()).base;
      if (base->op != Op::BUFFER) realize[um.index_of(base)] = true;
    }
    int p = 0, t = kNone;
    bool c = false, rows = true;
    for (int u : um.users[k]) {
      const Node* user = order[u];
      if (user->op == Op::SINK) continue;
      t = join(t, realize[u] ? u : target[u]);
      // an attention kernel (hand-written) reads its sources row-major from their buffers
      if (is_attention(user->op) && !is_whole_buffer(node)) realize[k] = true;
      if (realize[u] && user->op != Op::ASSIGN && user->op != Op::COPY) {
        p += 1;
        rows = rows && keeps_rows(user, true, false);
        continue;
      }
      if (user->op == Op::ASSIGN || user->op == Op::COPY || is_attention(user->op) ||
          (user->op == Op::SCATTER_ADD && user->src[0].get() == node)) {  // read as realized values
        p += 1;
        rows = false;
        continue;
      }
      p += paths[u];
      rows = rows && keeps_rows(user, false, in_rows[u]);
      // a row expand inside the row space is no recomputation: the row's value is computed once
      bool row_expand = is_row_expand(user) && in_rows[u];
      c = c || crosses[u] || (user->op == Op::EXPAND && !row_expand) || user->op == Op::PAD ||
          (user->op == Op::GATHER && user->src[0].get() == node);
    }
    paths[k] = std::min(p, 2);
    crosses[k] = c;
    in_rows[k] = rows;
    target[k] = t;
    // A row reduction whose paths all stay in its row space and lead to one realize point fuses
    // into that kernel, however many paths there are: it runs there once per row (a softmax is
    // one kernel).
    bool row_local = is_row_reduce(node) && rows && t >= 0;
    if (node->op == Op::REDUCE_AXIS && !realize[k] && !row_local && (paths[k] > 1 || crosses[k])) realize[k] = true;
    // One 16-bit product sum per kernel: a second one (x @ Wq^T and x @ Wk^T share x, so the
    // backward adds their products) gets its own kernel, so that each is one tensor-core matmul
    // (codegen/tensor_core.h maps a kernel with a single reduction).
    if (node->op == Op::REDUCE_AXIS && !realize[k] && t >= 0 && is_half_product_sum(node) && half_products[t]++ > 0)
      realize[k] = true;
    // A reduction with many outputs read by a kernel with few (a loss: the mean over tokens of a
    // reduction over the vocabulary) gets its own kernel: fused, the whole nested reduction would be
    // the loop of those few outputs' threads; realized, its rows run in parallel.
    if (node->op == Op::REDUCE_AXIS && !realize[k] && t >= 0 && order[t]->numel() < kSplitBelowOutputs &&
        node->numel() >= kSplitBelowOutputs)
      realize[k] = true;
    // A 16-bit matmul whose result reaches its realize point only re-laid-out (the gradient of a
    // permuted operand: attention's dV for grouped kv heads, summed over the heads that share one)
    // is realized in its own axes, where tensor cores map it; the realize point becomes a copy
    // through the permute. Stored straight in the permuted layout, two of its output axes (kv
    // head and head dim) would merge into one that both operands move along.
    if (!realize[k] && t >= 0 && is_half_matmul_result(node) && permuted_on_the_way(um, static_cast<int>(k), t))
      realize[k] = true;
    // A 16-bit matmul result read along several paths (the LM head's logits, read by the loss's
    // row reductions and its gradient) is stored as that 16-bit value: left alone, its float32
    // product sum would be the realize point (several paths), twice the bytes to store and read.
    if (!realize[k] && paths[k] > 1 && is_half_matmul_result(node)) realize[k] = true;
    if (!realize[k] && is_alu(node->op) && um.users[k].size() >= 2 &&
        count_inputs(um, realize, static_cast<int>(k), 3) >= 3)
      realize[k] = true;
    // An elementwise value broadcast into a bigger iteration space (e.g. the softmax gradient
    // feeding a matmul) would be recomputed per broadcast element: realize it when that includes a
    // transcendental.
    if (!realize[k] && is_alu(node->op) && crosses[k] && has_transcendental(um, realize, static_cast<int>(k), 64))
      realize[k] = true;
    // A computed 16-bit operand of a 16-bit matmul (a normalization's output cast to bf16, a
    // gradient) would be recomputed for every output column it is broadcast to, inside the
    // matmul's loads: realize it as the matmul reads it (after its reshapes and permutes), so the
    // matmul reads a buffer laid out along its axes (tensor cores' block tiles copy operands
    // straight from memory, codegen/block_mma.h).
    // The same holds for a computed float32 operand of a float32 matmul (the rotated queries and
    // keys of attention: rotation, slices and concatenation recomputed per key and per query,
    // inside the score kernel's reduction over the head dim, kept it off vector lanes).
    if (!realize[k] && crosses[k] && is_computed_value(node) &&
        (((node->dtype == dtypes::bfloat16 || node->dtype == dtypes::float16) &&
          is_half_matmul_operand(um, static_cast<int>(k))) ||
         (node->dtype == dtypes::float32 && !is_widening_cast(through_layout(node)) &&
          is_f32_matmul_operand(um, static_cast<int>(k)))))
      realize[k] = true;
    // A widening cast is realized as its 16-bit source: half the bytes stored and read, and a
    // matmul reading it sees a 16-bit operand widened on load (tensor cores, codegen/tensor_core.h).
    if (realize[k] && is_widening_cast(node) && only_fused_users(um, static_cast<int>(k))) {
      realize[k] = false;
      const Node* src = node->src[0].get();
      if (!is_buffer_view(src)) narrow[um.index_of(src)] = true;
    }
    // A float32 matmul stored for several readers that all read it through the same transposes
    // (a value gradient: computed in the layout of b^T, read back through the transpose and the
    // heads' permute) is stored as they read it, so that their loads are linear.
    if (realize[k] && node->dtype == dtypes::float32 && is_f32_product_sum(node)) {
      if (int p = last_permute_of_chain(um, realize, static_cast<int>(k)); p >= 0) {
        realize[k] = false;
        realize[p] = true;
        target[k] = p;
        paths[k] = 1;  // its one path, to p (set for its sources below)
        crosses[k] = false;
      }
    }
    if (realize[k]) {
      paths[k] = 1;
      crosses[k] = false;
    }
  }
  return realize;
}

}  // namespace lg
