#include "schedule/split_reduce.h"

#include <algorithm>

#include "ir/build.h"

namespace lg {
namespace {

bool is_16bit_float(DType t) { return t.scalar == Scalar::Float16 || t.scalar == Scalar::BFloat16; }

bool contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// x: (..., n, ...) -> (..., p, n/p, ...) at axis a.
NodeRef split_axis(const NodeRef& x, int64_t a, int64_t p) {
  Shape split = x->shape;
  split[a] = p;
  split.insert(split.begin() + a + 1, x->shape[a] / p);
  return make(Op::RESHAPE, x->dtype, {x}, split);
}
// The axes the first stage reduces after split_axis at a: the chunk axis a + 1 and the other reduced
// axes, renumbered (p, at a, stays as the partials' axis).
std::vector<int64_t> chunk_axes(const ReduceArg& arg, int64_t a) {
  std::vector<int64_t> axes{a + 1};
  for (int64_t b : arg.axes)
    if (b != a) axes.push_back(b < a ? b : b + 1);
  std::sort(axes.begin(), axes.end());
  return axes;
}

// ---- few outputs ----

// The split factor for axis size n of a reduction over `reduced` elements (per output). Up to 64
// chunks of kSplitChunk: the largest of 64, 32, 16 that leaves chunks of at least 2. Larger: the
// smallest power of two from 128 to kSplitMaxParts dividing n whose chunks hold at most kSplitChunk
// elements, else the largest such divisor, else as for the smaller ones.
int64_t split_factor(int64_t n, int64_t reduced) {
  if (reduced > 64 * kSplitChunk) {
    int64_t largest = 0;
    for (int64_t p = 128; p <= kSplitMaxParts; p *= 2) {
      if (n % p != 0 || n / p < 2) continue;
      if (reduced / p <= kSplitChunk) return p;
      largest = p;
    }
    if (largest) return largest;
  }
  for (int64_t p : {64, 32, 16})
    if (n % p == 0 && n / p >= 2) return p;
  return 0;
}

NodeRef split_few_outputs(const Node& r) {
  const auto& arg = r.get_arg<ReduceArg>();
  const NodeRef& x = r.src[0];
  if (r.numel() >= kSplitBelowOutputs || x->numel() / r.numel() < kSplitFrom) return {};
  for (int64_t a : arg.axes) {
    int64_t p = split_factor(x->shape[a], x->numel() / r.numel());
    if (!p) continue;
    NodeRef partial =
        make(Op::CONTIGUOUS, r.dtype,
             {make(Op::REDUCE_AXIS, r.dtype, {split_axis(x, a, p)}, ReduceArg{arg.op, chunk_axes(arg, a)})});
    NodeRef total = make(Op::REDUCE_AXIS, r.dtype, {partial}, ReduceArg{arg.op, {a}});
    return make(Op::RESHAPE, r.dtype, {total}, r.shape);
  }
  return {};
}

// ---- split-K ----

const Node* under_casts(const Node* n) {
  while (n->op == Op::CAST) n = n->src[0].get();
  return n;
}

// Whether factor f (under casts) is an EXPAND along some axis that is not reduced: one value of it is
// read by several outputs.
bool broadcast_along_outputs(const Node* f, const std::vector<int64_t>& reduced) {
  f = under_casts(f);
  if (f->op != Op::EXPAND) return false;
  for (size_t i = 0; i < f->shape.size(); i++)
    if (f->src[0]->shape[i] == 1 && f->shape[i] > 1 && !contains(reduced, static_cast<int64_t>(i)))
      return true;
  return false;
}

// A product of two such factors, or a sum of such products (x @ W1 + y @ W3): a matmul's summand.
bool is_product_of_broadcasts(const Node* x, const std::vector<int64_t>& reduced) {
  x = under_casts(x);
  if (x->op == Op::ADD)
    return is_product_of_broadcasts(x->src[0].get(), reduced) &&
           is_product_of_broadcasts(x->src[1].get(), reduced);
  return x->op == Op::MUL && broadcast_along_outputs(x->src[0].get(), reduced) &&
         broadcast_along_outputs(x->src[1].get(), reduced);
}

// The chunk c of a reduced axis of size n (each step of it `inner` elements of the other reduced
// axes) that split-K uses, or 0: c divides n and leaves n/c >= 2 partials, with at most
// kSplitKMaxPartials partial results. Preferred: the largest chunk of at most kSplitKChunk elements
// (c * inner); when none keeps the partials few enough, the smallest one that does. Either way a
// chunk that is a multiple of 32 elements first (two vectors of CPU lanes; a k tile of tensor-core
// block matmuls), then one of any size.
int64_t split_k_chunk(int64_t n, int64_t inner, int64_t outputs) {
  std::vector<int64_t> divisors;  // of n, ascending, below n
  for (int64_t d = 1; d * d <= n; d++)
    if (n % d == 0) divisors.insert(divisors.end(), {d, n / d});
  std::sort(divisors.begin(), divisors.end());
  divisors.erase(std::unique(divisors.begin(), divisors.end()), divisors.end());
  divisors.pop_back();
  int64_t fits[2] = {0, 0}, smallest[2] = {0, 0};  // [0]: any chunk, [1]: a multiple of 32
  for (int64_t c : divisors) {
    if ((n / c) * outputs > kSplitKMaxPartials) continue;
    for (int aligned = 0; aligned < 2; aligned++) {
      if (aligned && c * inner % 32 != 0) continue;
      if (c * inner <= kSplitKChunk)
        fits[aligned] = c;
      else if (!smallest[aligned])
        smallest[aligned] = c;
    }
  }
  for (int64_t c : {fits[1], fits[0], smallest[1], smallest[0]})
    if (c) return c;
  return 0;
}

// The largest reduced axis of r.
int64_t largest_reduced_axis(const Node& r) {
  const auto& arg = r.get_arg<ReduceArg>();
  const Shape& shape = r.src[0]->shape;
  return *std::max_element(arg.axes.begin(), arg.axes.end(),
                           [&](int64_t i, int64_t j) { return shape[i] < shape[j]; });
}

// r split into P chunks of reduced axis a: the partials laid out (P, outputs...) (stored), then
// reduced over P.
NodeRef split_chunks_first(const Node& r, int64_t a, int64_t p) {
  const auto& arg = r.get_arg<ReduceArg>();
  NodeRef partial =
      make(Op::REDUCE_AXIS, r.dtype, {split_axis(r.src[0], a, p)}, ReduceArg{arg.op, chunk_axes(arg, a)});
  Shape front{a};  // the partials' axis first: (P, outputs...)
  for (int64_t i = 0; i < static_cast<int64_t>(partial->shape.size()); i++)
    if (i != a) front.push_back(i);
  NodeRef stored = make(Op::CONTIGUOUS, r.dtype, {make(Op::PERMUTE, r.dtype, {partial}, front)});
  NodeRef total = make(Op::REDUCE_AXIS, r.dtype, {stored}, ReduceArg{arg.op, {0}});
  return make(Op::RESHAPE, r.dtype, {total}, r.shape);
}

NodeRef split_k(const Node& r) {
  const auto& arg = r.get_arg<ReduceArg>();
  const NodeRef& x = r.src[0];
  int64_t outputs = r.numel(), k = x->numel() / outputs;
  if (arg.op != Op::ADD || outputs < kSplitBelowOutputs || k < kSplitKFrom ||
      !is_product_of_broadcasts(x.get(), arg.axes))
    return {};
  int64_t a = largest_reduced_axis(r);
  int64_t n = x->shape[a], c = split_k_chunk(n, k / n, outputs);
  if (!c) return {};
  return split_chunks_first(r, a, n / c);
}

// ---- columns ----

// A long reduction over an outer axis (the last axis is an output: a sum over tokens per column)
// with fewer than kSplitColumnsBelow outputs, not a matmul: P chunks of its largest reduced axis,
// P the smallest power of two that makes P * outputs >= kSplitColumnsPartials, or the largest
// one short of that which divides the axis into chunks of at least kSplitColumnsChunk (none: no
// split).
NodeRef split_columns(const Node& r) {
  const auto& arg = r.get_arg<ReduceArg>();
  const NodeRef& x = r.src[0];
  int64_t outputs = r.numel(), last = static_cast<int64_t>(x->shape.size()) - 1;
  if (outputs < kSplitBelowOutputs || outputs >= kSplitColumnsBelow ||
      x->numel() / outputs < kSplitColumnsFrom || contains(arg.axes, last) ||
      x->shape[last] < kSplitBelowOutputs || is_product_of_broadcasts(x.get(), arg.axes))
    return {};
  int64_t a = largest_reduced_axis(r), n = x->shape[a], p = 1;
  while (p * outputs < kSplitColumnsPartials && n % (2 * p) == 0 && n / (2 * p) >= kSplitColumnsChunk) p *= 2;
  return p > 1 ? split_chunks_first(r, a, p) : NodeRef{};
}

NodeRef split_reduce(const Node& r) {
  if (is_16bit_float(r.dtype)) return {};
  if (NodeRef s = split_few_outputs(r)) return s;
  if (NodeRef s = split_k(r)) return s;
  return split_columns(r);
}

}  // namespace

const PatternMatcher& pm_split_reduce() {
  static const PatternMatcher pm({{"split large reduction", Pat::op(Op::REDUCE_AXIS),
                                   [](const Match& m) { return split_reduce(*m.root()); }}});
  return pm;
}

}  // namespace lg
