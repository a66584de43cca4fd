// The gradient rules of every differentiable tensor-stage op, and the reverse walk that applies them.
// Notation in the comments: ret = the matched node, g = the gradient of ret, x/a/b its sources.
#include "tensor/gradient.h"

#include <numbers>
#include <unordered_map>
#include <unordered_set>

#include "base/error.h"
#include "ir/attention.h"
#include "ir/graph.h"
#include "tensor/internal.h"

namespace lg {
namespace {

using Grads = std::vector<Tensor>;  // one per source; an undefined Tensor means no gradient

Tensor grad_of(const Match& m) { return Tensor(m.ctx<GradCtx>().grad); }
Tensor src_of(const Match& m, size_t i) { return Tensor(m.root()->src[i]); }

NodeRef pack(const Grads& gs) {
  std::vector<NodeRef> src;
  for (const Tensor& g : gs) src.push_back(g.defined() ? g.node() : no_gradient());
  return make(Op::SINK, dtypes::void_, std::move(src));
}

// A rule from a function of (ret, g) to the gradients of ret's sources.
Rule grad_rule(const char* name, Pat pat, Grads (*f)(const Match&, const Tensor& ret, const Tensor& g)) {
  return Rule{name, std::move(pat), [f](const Match& m) { return pack(f(m, Tensor(m.root()), grad_of(m))); }};
}

// Sum of t over `axes` keeping them as size-1 axes; 16-bit floats accumulate in float32.
Tensor sum_keep(const Tensor& t, const std::vector<int64_t>& axes) {
  if (axes.empty()) return t;
  bool narrow = t.dtype() == dtypes::float16 || t.dtype() == dtypes::bfloat16;
  Tensor acc = narrow ? t.cast(dtypes::float32) : t;
  return detail::reduce_raw(acc, Op::ADD, axes, true, "gradient").cast(t.dtype());
}

// t itself, or, when t reads a layout copy of stored values (movement ops over a CONTIGUOUS whose
// source is movement ops over a BUFFER: the CPU matmul's weight panels, tensor/reduce.cpp), the
// same reads of the stored values. Same values; the copy's layout is the forward product's choice,
// and a gradient product is better off reading the values as stored: the input gradient of
// x @ W^T reads W (out, in) row-major, contiguous along its output axis (in), where the panels
// (out/32, in, 32) are contiguous along the summed axis (out) only. Not through a cast (a bfloat16
// weight widened for the product): the CPU's NN kernel then widens its broadcast operand one
// element at a time, and the head's input gradient in bf16 measured slower (188 against 223
// GFLOP/s) than through the panels, where both operands widen 16 lanes at a time.
Tensor stored_operand(const Tensor& t) {
  std::vector<const Node*> chain;  // from t down to the CONTIGUOUS, exclusive
  const Node* n = t.node().get();
  for (; is_movement(n->op); n = n->src[0].get()) chain.push_back(n);
  if (n->op != Op::CONTIGUOUS) return t;
  const Node* base = n->src[0].get();
  while (is_movement(base->op)) base = base->src[0].get();
  if (base->op != Op::BUFFER) return t;
  NodeRef v = n->src[0];
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) v = make((*it)->op, (*it)->dtype, {v}, (*it)->arg);
  return Tensor(v);
}

// ---- elementwise ----
Grads add_grad(const Match&, const Tensor&, const Tensor& g) { return {g, g}; }
Grads mul_grad(const Match& m, const Tensor&, const Tensor& g) {
  return {g * stored_operand(src_of(m, 1)), g * stored_operand(src_of(m, 0))};
}
Grads neg_grad(const Match&, const Tensor&, const Tensor& g) { return {g.neg()}; }
// d(1/x) = -1/x^2 = -ret^2
Grads reciprocal_grad(const Match&, const Tensor& ret, const Tensor& g) { return {g.neg() * ret * ret}; }
// d sqrt(x) = 1/(2 sqrt x)
Grads sqrt_grad(const Match&, const Tensor& ret, const Tensor& g) { return {g * (ret * 2).reciprocal()}; }
// d 2^x = 2^x ln 2
Grads exp2_grad(const Match&, const Tensor& ret, const Tensor& g) { return {g * ret * std::numbers::ln2}; }
// d log2 x = 1/(x ln 2)
Grads log2_grad(const Match& m, const Tensor&, const Tensor& g) {
  return {g * (src_of(m, 0) * std::numbers::ln2).reciprocal()};
}
// d sin x = cos x = sin(pi/2 - x)
Grads sin_grad(const Match& m, const Tensor&, const Tensor& g) {
  Tensor x = src_of(m, 0);
  return {g * (x.scalar_like(std::numbers::pi / 2) - x).sin()};
}
// Between floats the gradient is cast back to the source dtype; from an integer or bool source there
// is none (the walk never sends gradients into non-float nodes).
Grads cast_grad(const Match& m, const Tensor& ret, const Tensor& g) {
  Tensor x = src_of(m, 0);
  if (!is_float(x.dtype()) || !is_float(ret.dtype())) return {Tensor()};
  return {g.cast(x.dtype())};
}
// MAX: the larger source takes the gradient; on a tie (a == b) each source takes half, as tinygrad
// does, so the two halves sum to g and max(x, x) has gradient 1 with respect to x.
Grads max_grad(const Match& m, const Tensor&, const Tensor& g) {
  Tensor a = src_of(m, 0), b = src_of(m, 1);
  Tensor zero = g.scalar_like(0), half = g * 0.5;
  Tensor tie = a.eq(b).where(half, zero);
  return {a.gt(b).where(g, tie), b.gt(a).where(g, tie)};
}
// WHERE(c, a, b): the condition gets none; a gets g where c holds, b where it does not.
Grads where_grad(const Match& m, const Tensor&, const Tensor& g) {
  Tensor c = src_of(m, 0), zero = g.scalar_like(0);
  return {Tensor(), c.where(g, zero), c.where(zero, g)};
}

// ---- movement: the gradient is the inverse view, or a sum for EXPAND ----
Grads reshape_grad(const Match& m, const Tensor&, const Tensor& g) {
  return {g.reshape(src_of(m, 0).shape())};
}
Grads permute_grad(const Match& m, const Tensor&, const Tensor& g) {
  const Shape& order = m.root()->get_arg<Shape>();
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); i++) inverse[order[i]] = static_cast<int64_t>(i);
  return {g.permute(inverse)};
}
// EXPAND broadcasts size-1 axes: their gradient is the sum over the broadcast copies.
Grads expand_grad(const Match& m, const Tensor& ret, const Tensor& g) {
  const Shape& in = src_of(m, 0).shape();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < in.size(); i++)
    if (in[i] != ret.shape()[i]) axes.push_back(static_cast<int64_t>(i));
  return {sum_keep(g, axes)};
}
Grads pad_grad(const Match& m, const Tensor&, const Tensor& g) {
  const Pairs& pads = m.root()->get_arg<Pairs>();
  const Shape& in = src_of(m, 0).shape();
  Pairs keep;
  for (size_t i = 0; i < pads.size(); i++) keep.emplace_back(pads[i].first, pads[i].first + in[i]);
  return {g.shrink(keep)};
}
Grads shrink_grad(const Match& m, const Tensor&, const Tensor& g) {
  const Pairs& ranges = m.root()->get_arg<Pairs>();
  const Shape& in = src_of(m, 0).shape();
  Pairs pads;
  for (size_t i = 0; i < ranges.size(); i++) pads.emplace_back(ranges[i].first, in[i] - ranges[i].second);
  return {g.pad(pads)};
}
Grads flip_grad(const Match& m, const Tensor&, const Tensor& g) {
  const Shape& flags = m.root()->get_arg<Shape>();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < flags.size(); i++)
    if (flags[i]) axes.push_back(static_cast<int64_t>(i));
  return {g.flip(axes)};
}

// ---- reductions: ret keeps the folded axes as size 1, so g expands back to the source shape ----
Grads reduce_grad(const Match& m, const Tensor& ret, const Tensor& g) {
  const ReduceArg& r = m.root()->get_arg<ReduceArg>();
  Tensor x = src_of(m, 0);
  Tensor ge = g.expand(x.shape());
  if (r.op == Op::ADD) return {ge};
  if (r.op == Op::MAX) {
    // Every position equal to the maximum shares g equally (ties split, as for binary MAX).
    Tensor hit = x.eq(ret.expand(x.shape())).cast(g.dtype());
    return {hit * ge / sum_keep(hit, r.axes).expand(x.shape())};
  }
  LG_CHECK(r.op == Op::MUL, "REDUCE_AXIS with ", op_name(r.op));
  // d prod / d x_i = prod / x_i: exact for nonzero x; a zero element gives NaN/inf (as tinygrad).
  return {ge * ret.expand(x.shape()) / x};
}

Grads identity_grad(const Match&, const Tensor&, const Tensor& g) { return {g}; }

// FLASH_ATTENTION(q, k, v) (ir/attention.h): ret = (O, L) per row, g = (dO, dL). With P = exp(x - L),
// dx[s,t] = P (dO.v[t] - delta + dL) where delta = dO.O (the softmax's gradient, plus L's own:
// dL/dx = P). The kernels take delta - dL as the row's delta and recompute P from q, k and L.
Grads flash_attention_grad(const Match& m, const Tensor& ret, const Tensor& g) {
  Tensor q = src_of(m, 0), k = src_of(m, 1), v = src_of(m, 2);
  int64_t D = q.size(3), flags = m.root()->get_arg<int64_t>();
  Tensor d_out = g.slice(-1, 0, D), d_lse = g.slice(-1, D, D + 1);
  Tensor delta = (d_out * ret.slice(-1, 0, D)).sum(-1, true) - d_lse;
  Tensor stats = Tensor::cat({ret.slice(-1, D, D + 1), delta}, -1);  // (B, H, S, 2)
  std::vector<NodeRef> src{q.node(), k.node(), v.node(), d_out.cast(q.dtype()).node(), stats.node()};
  Tensor dq(make(Op::FLASH_ATTENTION_GRAD, dtypes::float32, src, flags));
  Tensor dkv(make(Op::FLASH_ATTENTION_GRAD, dtypes::float32, src, flags | kAttentionGradKV));
  return {dq.cast(q.dtype()), dkv.slice(-1, 0, D).cast(k.dtype()), dkv.slice(-1, D, 2 * D).cast(v.dtype())};
}

// GATHER(x, index) along axis a: x's element at position v of axis a receives the sum of g over
// the positions j whose index is v: a SCATTER_ADD of g into a fresh zeroed buffer (O(g) work, not
// O(g x axis length)), float32 for a 16-bit g (cast back after the adds). When the index picks one position
// per row (size 1 along a, x's size along every other axis: cross-entropy's label), that is where(index == v,
// g, 0) over x's shape, an elementwise value that fuses into its reader, where the scatter would write a
// zeroed buffer of x's size first. The index gets no gradient; an index outside the axis gives none (as
// GATHER reads 0 there).
Grads gather_grad(const Match& m, const Tensor&, const Tensor& g) {
  Tensor x = src_of(m, 0), index = src_of(m, 1);
  int64_t a = m.root()->get_arg<int64_t>();
  Shape one_per_row = x.shape();
  one_per_row[a] = 1;
  if (index.shape() == one_per_row) {
    Shape along(x.ndim(), 1);
    along[a] = x.shape()[a];
    // compared as int32 (vector lanes on the CPU), or int64 where int32 could wrap: a narrow index
    // type's arange over a long axis would repeat positions
    bool wide = itemsize(index.dtype()) == 8 || x.shape()[a] > INT32_MAX;
    DType pos = wide ? dtypes::int64 : dtypes::int32;
    Tensor v = Tensor::arange(0, x.shape()[a], 1, pos, x.device()).reshape(along);
    Tensor hit = index.cast(pos).expand(x.shape()).eq(v.expand(x.shape()));
    return {hit.where(g.expand(x.shape()), g.scalar_like(0).expand(x.shape())), Tensor()};
  }
  // summed in float32 for 16-bit floats, as sum() is, and rounded once
  DType wide = is_float(g.dtype()) && itemsize(g.dtype()) < 4 ? dtypes::float32 : g.dtype();
  Tensor acc = Tensor::empty(x.shape(), wide, g.device());
  acc.assign(Tensor::zeros(x.shape(), wide, g.device()));
  Tensor sums(make(Op::SCATTER_ADD, wide, {acc.node(), index.node(), g.cast(wide).node()},
                   m.root()->get_arg<int64_t>()));
  return {sums.cast(g.dtype()), Tensor()};
}
// COPY(x, DEVICE): the gradient goes back to x's device; the DEVICE source gets none.
Grads copy_grad(const Match& m, const Tensor&, const Tensor& g) {
  return {g.to(src_of(m, 0).device()), Tensor()};
}
// ALLREDUCE(DEVICE, x_0..x_{n-1}): the result is the sum, so each x_j gets g (on x_j's device);
// the other devices' results add theirs when the walk reaches them.
Grads allreduce_grad(const Match& m, const Tensor&, const Tensor& g) {
  Grads out{Tensor()};
  for (size_t j = 1; j < m.root()->src.size(); j++) out.push_back(g.to(src_of(m, j).device()));
  return out;
}
// Piecewise-constant and integer ops, DETACH, and the leaves (BUFFER, CONST and IOTA have only a
// DEVICE source): no gradient to any source.
Grads none_grad(const Match& m, const Tensor&, const Tensor&) { return Grads(m.root()->src.size()); }

PatternMatcher make_pm_gradient() {
  OpSet none = op_set({Op::CMPLT, Op::CMPNE, Op::CMPEQ, Op::IDIV, Op::MOD, Op::AND, Op::OR, Op::XOR, Op::SHL,
                       Op::SHR, Op::TRUNC, Op::BITCAST, Op::DETACH, Op::BUFFER, Op::CONST, Op::IOTA});
  return PatternMatcher({
      grad_rule("add", Pat::op(Op::ADD), add_grad),
      grad_rule("mul", Pat::op(Op::MUL), mul_grad),
      grad_rule("neg", Pat::op(Op::NEG), neg_grad),
      grad_rule("reciprocal", Pat::op(Op::RECIPROCAL), reciprocal_grad),
      grad_rule("sqrt", Pat::op(Op::SQRT), sqrt_grad),
      grad_rule("exp2", Pat::op(Op::EXP2), exp2_grad),
      grad_rule("log2", Pat::op(Op::LOG2), log2_grad),
      grad_rule("sin", Pat::op(Op::SIN), sin_grad),
      grad_rule("cast", Pat::op(Op::CAST), cast_grad),
      grad_rule("max", Pat::op(Op::MAX), max_grad),
      grad_rule("where", Pat::op(Op::WHERE), where_grad),
      grad_rule("reshape", Pat::op(Op::RESHAPE), reshape_grad),
      grad_rule("permute", Pat::op(Op::PERMUTE), permute_grad),
      grad_rule("expand", Pat::op(Op::EXPAND), expand_grad),
      grad_rule("pad", Pat::op(Op::PAD), pad_grad),
      grad_rule("shrink", Pat::op(Op::SHRINK), shrink_grad),
      grad_rule("flip", Pat::op(Op::FLIP), flip_grad),
      grad_rule("reduce_axis", Pat::op(Op::REDUCE_AXIS), reduce_grad),
      grad_rule("contiguous", Pat::op(Op::CONTIGUOUS), identity_grad),
      grad_rule("copy", Pat::op(Op::COPY), copy_grad),
      grad_rule("allreduce", Pat::op(Op::ALLREDUCE), allreduce_grad),
      grad_rule("gather", Pat::op(Op::GATHER), gather_grad),
      grad_rule("flash_attention", Pat::op(Op::FLASH_ATTENTION), flash_attention_grad),
      grad_rule("not differentiable", Pat::ops(none), none_grad),
  });
}

}  // namespace

const PatternMatcher& pm_gradient() {
  static const PatternMatcher pm = make_pm_gradient();
  return pm;
}

const NodeRef& no_gradient() {
  static const NodeRef* none = new NodeRef(make(Op::SINK, dtypes::void_, {}));
  return *none;
}

namespace {

// in_path[i]: order[i] is a target or depends on one; only those nodes need gradients.
std::vector<bool> nodes_on_path(const std::vector<const Node*>& order, const std::vector<NodeRef>& targets) {
  std::unordered_set<const Node*> target_set;
  for (const NodeRef& t : targets) target_set.insert(t.get());
  std::unordered_map<const Node*, bool> on;
  std::vector<bool> out(order.size());
  for (size_t i = 0; i < order.size(); i++) {
    bool hit = target_set.count(order[i]) > 0;
    for (const NodeRef& s : order[i]->src) hit = hit || on[s.get()];
    on[order[i]] = out[i] = hit;
  }
  return out;
}

// The gradients of n's sources, from the rule matching n.
std::vector<NodeRef> source_grads(const Node* n, const NodeRef& g) {
  GradCtx ctx{g};
  std::any any_ctx = &ctx;
  NodeRef r = pm_gradient().rewrite(NodeRef::share(n), &any_ctx);
  LG_USER_CHECK(r, "gradient: no gradient rule for ", op_name(n->op),
                " on the path from the loss to a tensor that requires grad; detach() that input");
  LG_CHECK(r->op == Op::SINK && r->src.size() == n->src.size(), "gradient rule for ", op_name(n->op),
           " returned ", r->src.size(), " gradients for ", n->src.size(), " sources");
  return r->src;
}

}  // namespace

std::vector<NodeRef> compute_gradient(const NodeRef& root, const NodeRef& root_grad,
                                      const std::vector<NodeRef>& targets) {
  LG_CHECK(root_grad->shape == root->shape && root_grad->dtype == root->dtype, "root gradient is ",
           name(root_grad->dtype), " ", detail::shape_str(root_grad->shape), " for a root of ",
           name(root->dtype), " ", detail::shape_str(root->shape));
  std::vector<const Node*> order = toposort(root);
  std::vector<bool> on_path = nodes_on_path(order, targets);
  std::unordered_map<const Node*, NodeRef> grads{{root.get(), root_grad}};
  for (size_t k = order.size(); k-- > 0;) {
    const Node* n = order[k];
    auto it = grads.find(n);
    if (!on_path[k] || it == grads.end() || n->src.empty()) continue;
    std::vector<NodeRef> gs = source_grads(n, it->second);
    for (size_t i = 0; i < gs.size(); i++) {
      const Node* s = n->src[i].get();
      if (gs[i] == no_gradient() || !is_float(s->dtype)) continue;
      LG_CHECK(gs[i]->shape == s->shape && gs[i]->dtype == s->dtype, "gradient rule for ", op_name(n->op),
               " gave source ", i, " a gradient of the wrong shape or dtype");
      auto [at, fresh] = grads.try_emplace(s, gs[i]);
      if (!fresh) at->second = alu(Op::ADD, at->second, gs[i]);  // sum over every user of s
    }
  }
  std::vector<NodeRef> out;
  for (const NodeRef& t : targets) {
    auto it = grads.find(t.get());
    out.push_back(it == grads.end() ? NodeRef{} : it->second);
  }
  return out;
}

}  // namespace lg
