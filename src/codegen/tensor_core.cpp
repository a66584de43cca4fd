#include "codegen/tensor_core.h"

#include <algorithm>
#include <map>
#include <optional>

#include "base/error.h"
#include "codegen/opt.h"
#include "ir/build.h"
#include "ir/graph.h"

namespace lg {
namespace {

// A fragment coordinate: (g or 2t) + offset, with g = lane / 4 and t = lane % 4 (tensor_core.h).
struct Coord {
  bool by_group;  // g, else 2t
  int offset;
};

Coord coord(TcOperand operand, bool row, int j) {
  LG_CHECK(j >= 0 && j < tc_fragment_size(operand), "no fragment element ", j);
  switch (operand) {
    case TcOperand::A: return row ? Coord{true, 8 * ((j >> 1) & 1)} : Coord{false, (j & 1) + 8 * (j >> 2)};
    case TcOperand::B: return row ? Coord{false, (j & 1) + 8 * (j >> 1)} : Coord{true, 0};
    case TcOperand::C: return row ? Coord{true, 8 * (j >> 1)} : Coord{false, j & 1};
  }
  internal_error(__FILE__, __LINE__, "unknown tensor-core operand");
}

// The reduction a TC kernel computes: REDUCE(ADD, [WHERE(mask,] CAST(x_1) * CAST(y_1) + ... +
// CAST(x_P) * CAST(y_P) [, 0)]) in float32, the only REDUCE of the kernel, used by every store;
// every x_p, y_p of one 16-bit float dtype. P > 1 where the backward of a tensor read by several
// matmuls sums their gradients inside one reduction (x @ W1 and x @ W3 share the broadcast of x).
struct Matmul {
  NodeRef reduce, mask;  // mask: null when k is not padded
  std::vector<std::pair<NodeRef, NodeRef>> products;  // (x_p, y_p)
};

constexpr size_t kMaxProducts = 4;

// The leaves of a float32 ADD tree, left to right.
void add_terms(const NodeRef& n, std::vector<NodeRef>& out) {
  if (n->op == Op::ADD && n->dtype == dtypes::float32 && out.size() <= kMaxProducts) {
    add_terms(n->src[0], out);
    add_terms(n->src[1], out);
  } else {
    out.push_back(n);
  }
}

std::optional<Matmul> match_matmul(const NodeRef& ast) {
  std::vector<const Node*> reduces;
  for (const Node* n : toposort(ast))
    if (n->op == Op::REDUCE) reduces.push_back(n);
  if (reduces.size() != 1) return std::nullopt;
  NodeRef r = NodeRef::share(reduces[0]);
  if (r->get_arg<Op>() != Op::ADD || r->dtype != dtypes::float32) return std::nullopt;
  Matmul mm{r, {}, {}};
  NodeRef body = r->src[0];
  if (body->op == Op::WHERE && body->src[2]->is_const_value(0.0)) {
    mm.mask = body->src[0];
    body = body->src[1];
  }
  std::vector<NodeRef> terms;
  add_terms(body, terms);
  if (terms.size() > kMaxProducts) return std::nullopt;
  for (const NodeRef& term : terms) {
    if (term->op != Op::MUL || term->src[0]->op != Op::CAST || term->src[1]->op != Op::CAST) return std::nullopt;
    const NodeRef &x = term->src[0]->src[0], &y = term->src[1]->src[0];
    DType t = x->dtype;
    if ((t != dtypes::bfloat16 && t != dtypes::float16) || y->dtype != t) return std::nullopt;
    if (!mm.products.empty() && mm.products[0].first->dtype != t) return std::nullopt;  // one mma type
    mm.products.emplace_back(x, y);
  }
  for (const NodeRef& st : ast->src)
    if (!depends_on(st, r.get())) return std::nullopt;
  return mm;
}

bool is_type(const NodeRef& r, AxisType t) { return r->get_arg<RangeArg>().type == t; }

// outer * tile + the fragment coordinate of element j: the index along one axis of the matmul.
NodeRef tile_index(const NodeRef& outer, int64_t tile, TcOperand operand, bool row, const NodeRef& lane, int j) {
  return outer * tile + tc_place(operand, row, lane, j);
}

}  // namespace

int tc_fragment_size(TcOperand operand) { return operand == TcOperand::A ? 8 : 4; }

int64_t tc_place(TcOperand operand, bool row, int64_t lane, int j) {
  Coord c = coord(operand, row, j);
  return (c.by_group ? lane / 4 : 2 * (lane % 4)) + c.offset;
}

NodeRef tc_place(TcOperand operand, bool row, const NodeRef& lane, int j) {
  Coord c = coord(operand, row, j);
  return (c.by_group ? lane / 4 : (lane % 4) * 2) + c.offset;
}

std::string tc_place_c(TcOperand operand, bool row, const std::string& lane, int j) {
  Coord c = coord(operand, row, j);
  return str("(", c.by_group ? str(lane, " / 4") : str("2 * (", lane, " % 4)"), " + ", c.offset, ")");
}

std::vector<TcAxes> tc_candidates(const NodeRef& ast) {
  std::optional<Matmul> mm = match_matmul(ast);
  if (!mm) return {};
  std::vector<NodeRef> axes = kernel_axes(ast);
  int count = static_cast<int>(axes.size());
  auto moves = [&](const NodeRef& x, int a) { return x && depends_on(x, axes[a].get()); };
  // every product's x moves along m and k, not n; its y along n and k, not m
  auto all = [&](auto pred) {
    return std::all_of(mm->products.begin(), mm->products.end(), [&](const auto& p) { return pred(p.first, p.second); });
  };
  std::vector<TcAxes> out;
  for (int k = 0; k < count; k++) {
    const NodeRef& r = mm->reduce;
    bool reduced = std::find(r->src.begin() + 1, r->src.end(), axes[k]) != r->src.end();
    if (!reduced || !all([&](const NodeRef& x, const NodeRef& y) { return moves(x, k) && moves(y, k); })) continue;
    for (int n = count - 1; n >= 0; n--) {
      if (!is_type(axes[n], AxisType::LOOP) || moves(mm->mask, n) ||
          !all([&](const NodeRef& x, const NodeRef& y) { return !moves(x, n) && moves(y, n); }))
        continue;
      for (int m = count - 1; m >= 0; m--)
        if (is_type(axes[m], AxisType::LOOP) && !moves(mm->mask, m) &&
            all([&](const NodeRef& x, const NodeRef& y) { return moves(x, m) && !moves(y, m); }))
          out.push_back({m, n, k, mm->products[0].first->dtype, static_cast<int>(mm->products.size())});
    }
  }
  return out;
}

NodeRef tc_lane_run_k(const NodeRef& lane, TcOperand operand, int steps, int step, int j) {
  LG_CHECK(operand != TcOperand::C && steps >= 1 && step >= 0 && step < steps, "no lane-run k place");
  int p = operand == TcOperand::A ? j >> 2 : j >> 1;  // which half (8 apart) of the PTX k step
  return (lane % 4) * (4 * steps) + (4 * step + 2 * p + (j & 1));
}

NodeRef apply_tensor_core(const NodeRef& ast, int choice, int lane_runs) {
  if (lane_runs < 0 || lane_runs > kTcMostLaneRunSteps)
    throw OptError(str("TC: ", lane_runs, " mma steps per lane run (0 for the PTX order, 1 to ", kTcMostLaneRunSteps, ")"));
  std::vector<TcAxes> cands = tc_candidates(ast);
  if (choice < 0 || choice >= static_cast<int>(cands.size()))
    throw OptError(str("no tensor-core matmul ", choice, " (the kernel has ", cands.size(),
                       "; TC needs one float32 sum of products of two bf16 or fp16 values)"));
  TcAxes c = cands[choice];
  std::vector<NodeRef> axes = kernel_axes(ast);
  NodeRef M = axes[c.m], N = axes[c.n], K = axes[c.k];
  auto outer = [](const NodeRef& r, int64_t tile, const char* what) {
    int64_t n = r->src[0]->const_as_int();
    if (n % tile != 0) throw OptError(str("TC: ", what, " axis of ", n, " is not a multiple of ", tile, " (PADTO first)"));
    const RangeArg& a = r->get_arg<RangeArg>();
    return range(n / tile, a.id, a.type);
  };
  const int steps = std::max(lane_runs, 1);  // mmas per k step, per product
  const int64_t k_step = kTcK * steps;
  NodeRef mo = outer(M, kTcM, "m"), no = outer(N, kTcN, "n"), ko = outer(K, k_step, "k");
  Matmul mm = *match_matmul(ast);
  NodeRef lane = range(kWarpLanes, kTcLaneRangeId, AxisType::LOCAL);
  NodeRef zero16 = cnst(c.input, 0.0);
  // Fragment j of an operand: the operand with its two axes at element j's place in the tile (and
  // zero where a PADTO of k masks the product: both operands, so the product is exactly 0).
  // Step u of the k step reads k = ko * k_step + (the PTX place, or the lane-run place: u's share
  // of each lane's run, tensor_core.h), the same in A's columns and B's rows.
  auto fragment = [&](const NodeRef& x, TcOperand op, const NodeRef& other, const NodeRef& other_outer, int64_t other_tile,
                      bool other_is_row, int u, int j) {
    NodeRef k_at = lane_runs == 0 ? tile_index(ko, kTcK, op, !other_is_row, lane, j)
                                  : ko * k_step + tc_lane_run_k(lane, op, steps, u, j);
    NodeRef v = substitute(x, {{K, k_at}, {other, tile_index(other_outer, other_tile, op, other_is_row, lane, j)}});
    return mm.mask ? where(substitute(mm.mask, {{K, k_at}}), v, zero16) : v;
  };
  // One mma per product, chained: product p's C is product p-1's D (the first's is zero).
  std::vector<NodeRef> d(tc_fragment_size(TcOperand::C), cnst(dtypes::float32, 0.0));
  // With lane runs, the steps of one k step are further links of the chain.
  for (int u = 0; u < steps; u++)
    for (const auto& [x, y] : mm.products) {
      std::vector<NodeRef> src{lane};
      for (int j = 0; j < tc_fragment_size(TcOperand::A); j++) src.push_back(fragment(x, TcOperand::A, M, mo, kTcM, true, u, j));
      for (int j = 0; j < tc_fragment_size(TcOperand::B); j++) src.push_back(fragment(y, TcOperand::B, N, no, kTcN, false, u, j));
      src.insert(src.end(), d.begin(), d.end());
      for (int i = 0; i < tc_fragment_size(TcOperand::C); i++) d[i] = make(Op::WMMA, dtypes::float32, src, int64_t{i});
    }
  std::vector<NodeRef> stores;
  for (int i = 0; i < tc_fragment_size(TcOperand::C); i++) {
    // REDUCE over k/k_step (and any other reduce range) of element i of this lane's D fragment.
    std::vector<NodeRef> red{d[i]};
    for (auto s = mm.reduce->src.begin() + 1; s != mm.reduce->src.end(); ++s) red.push_back(*s == K ? ko : *s);
    NodeRef ri = make(Op::REDUCE, dtypes::float32, std::move(red), Op::ADD);
    for (const NodeRef& st : ast->src)
      stores.push_back(substitute(st, {{mm.reduce, ri},
                                       {M, tile_index(mo, kTcM, TcOperand::C, true, lane, i)},
                                       {N, tile_index(no, kTcN, TcOperand::C, false, lane, i)}}));
  }
  return make(Op::SINK, dtypes::void_, std::move(stores));
}

namespace {

// The mma chain ending at WMMA w (apply_tensor_core: a link's C is the previous link's D, the first
// link's C is zero), first link to last, each as its sources 0..12 (lane, A, B); empty when w does
// not end such a chain.
std::vector<std::vector<const Node*>> chain_of(const Node* w) {
  std::vector<std::vector<const Node*>> links;
  for (;;) {
    links.emplace_back();
    for (size_t s = 0; s < 13; s++) links.back().push_back(w->src[s].get());
    bool zero_c = true;
    for (size_t s = 13; s < 17; s++) zero_c = zero_c && w->src[s]->is_const_value(0.0);
    if (zero_c) break;
    const Node* prev = w->src[13].get();
    if (prev->op != Op::WMMA) return {};
    for (int i = 0; i < 4; i++) {
      const Node* c = w->src[13 + i].get();
      if (c->op != Op::WMMA || c->get_arg<int64_t>() != i || !std::equal(c->src.begin(), c->src.end(), prev->src.begin(), prev->src.end()))
        return {};
    }
    w = prev;
  }
  std::reverse(links.begin(), links.end());
  return links;
}

}  // namespace

NodeRef fuse_wmma_accumulate(const NodeRef& kernel) {
  // The four updates of one tile, by element; keyed by the chain's lane, A and B sources.
  struct Tile {
    std::vector<std::vector<const Node*>> links;
    const Node* acc[4] = {};
    const Node* update[4] = {};
  };
  std::map<std::vector<const Node*>, Tile> tiles;
  for (const Node* n : toposort(kernel)) {
    if (n->op != Op::ACCUMULATE || n->src[1]->op != Op::ADD) continue;
    const Node *acc = n->src[0].get(), *sum = n->src[1].get();
    const Node* w = sum->src[0] == acc ? sum->src[1].get() : sum->src[1] == acc ? sum->src[0].get() : nullptr;
    if (w == nullptr || w->op != Op::WMMA) continue;
    std::vector<std::vector<const Node*>> links = chain_of(w);
    if (links.empty()) continue;
    std::vector<const Node*> key;
    for (const auto& l : links) key.insert(key.end(), l.begin(), l.end());
    Tile& t = tiles[key];
    t.links = std::move(links);
    int64_t e = w->get_arg<int64_t>();
    t.acc[e] = acc;
    t.update[e] = n;
  }
  std::vector<std::pair<NodeRef, NodeRef>> with;
  for (auto& [key, t] : tiles) {
    bool whole = true;
    for (int i = 0; i < 4; i++)
      whole = whole && t.acc[i] && std::equal(t.acc[i]->src.begin() + 1, t.acc[i]->src.end(), t.acc[0]->src.begin() + 1,
                                              t.acc[0]->src.end());
    if (!whole) continue;  // the four accumulators do not share their loops: keep C = 0 and the add
    std::vector<NodeRef> c;  // the first link adds into the accumulators, each next one into its D
    for (int i = 0; i < 4; i++) c.push_back(NodeRef::share(t.acc[i]));
    for (const auto& link : t.links) {
      std::vector<NodeRef> src;
      for (const Node* s : link) src.push_back(NodeRef::share(s));
      src.insert(src.end(), c.begin(), c.end());
      for (int i = 0; i < 4; i++) c[i] = make(Op::WMMA, dtypes::float32, src, int64_t{i});
    }
    for (int i = 0; i < 4; i++)
      with.emplace_back(NodeRef::share(t.update[i]), make(Op::ACCUMULATE, dtypes::float32, {NodeRef::share(t.acc[i]), c[i]}));
  }
  return with.empty() ? kernel : substitute(kernel, with);
}

}  // namespace lg
