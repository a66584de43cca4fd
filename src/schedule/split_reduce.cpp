#include "schedule/split_reduce.h"

#include <algorithm>

#include "ir/build.h"

namespace lg {
namespace {

bool is_16bit_float(DType t) { return t.scalar == Scalar::Float16 || t.scalar == Scalar::BFloat16; }

// The split factor for axis size n: the largest of 64, 32, 16 that leaves chunks of at least 2.
int64_t split_factor(int64_t n) {
  for (int64_t p : {64, 32, 16})
    if (n % p == 0 && n / p >= 2) return p;
  return 0;
}

NodeRef split_reduce(const Node& r) {
  const auto& arg = r.get_arg<ReduceArg>();
  const NodeRef& x = r.src[0];
  if (is_16bit_float(r.dtype) || r.numel() >= kSplitBelowOutputs || x->numel() / r.numel() < kSplitFrom) return {};
  for (int64_t a : arg.axes) {
    int64_t p = split_factor(x->shape[a]);
    if (!p) continue;
    // x: (..., n, ...) -> (..., p, n/p, ...); the reduced axes after a move one to the right.
    Shape split = x->shape;
    split[a] = p;
    split.insert(split.begin() + a + 1, x->shape[a] / p);
    std::vector<int64_t> first_axes{a + 1};  // the chunk axis; p stays as the partials' axis
    for (int64_t b : arg.axes)
      if (b != a) first_axes.push_back(b < a ? b : b + 1);
    std::sort(first_axes.begin(), first_axes.end());
    NodeRef xs = make(Op::RESHAPE, x->dtype, {x}, split);
    NodeRef partial = make(Op::CONTIGUOUS, r.dtype, {make(Op::REDUCE_AXIS, r.dtype, {xs}, ReduceArg{arg.op, first_axes})});
    NodeRef total = make(Op::REDUCE_AXIS, r.dtype, {partial}, ReduceArg{arg.op, {a}});
    return make(Op::RESHAPE, r.dtype, {total}, r.shape);
  }
  return {};
}

}  // namespace

const PatternMatcher& pm_split_reduce() {
  static const PatternMatcher pm({{"split large reduction", Pat::op(Op::REDUCE_AXIS),
                                   [](const Match& m) { return split_reduce(*m.root()); }}});
  return pm;
}

}  // namespace lg
