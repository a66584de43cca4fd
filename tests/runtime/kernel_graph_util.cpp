#include "runtime/kernel_graph_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ir/build.h"
#include "runtime/buffer.h"
#include "runtime/realize.h"

namespace lg::graph_testing {

NodeRef input(const std::string& device, const Shape& shape, float scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  NodeRef b = new_buffer(device_node(device), dtypes::float32, n);
  std::vector<float> host(n);
  for (int64_t i = 0; i < n; i++) host[i] = scale * static_cast<float>((i * 7) % 11 - 5);
  buffer_copy_in(*b, host.data(), host.size() * 4);
  return shape.size() == 1 ? b : make(Op::RESHAPE, dtypes::float32, {b}, shape);
}
NodeRef permute(const NodeRef& x, const Shape& order) { return make(Op::PERMUTE, x->dtype, {x}, order); }

NodeRef matmul_nt(const NodeRef& a, const NodeRef& bt) {
  int64_t n = a->shape[0], k = a->shape[1], m = bt->shape[0];
  NodeRef x = make(Op::EXPAND, a->dtype, {make(Op::RESHAPE, a->dtype, {a}, Shape{n, 1, k})}, Shape{n, m, k});
  NodeRef y =
      make(Op::EXPAND, bt->dtype, {make(Op::RESHAPE, bt->dtype, {bt}, Shape{1, m, k})}, Shape{n, m, k});
  return make(Op::REDUCE_AXIS, a->dtype, {x * y}, ReduceArg{Op::ADD, {2}});
}

NodeRef matmul(const std::string& dev, Layout l, int64_t n, int64_t k, int64_t m) {
  NodeRef a = l == Layout::TN ? permute(input(dev, {k, n}, 0.5f), {1, 0}) : input(dev, {n, k}, 0.5f);
  NodeRef bt = l == Layout::NT ? input(dev, {m, k}, 0.25f) : permute(input(dev, {k, m}, 0.25f), {1, 0});
  return matmul_nt(a, bt);
}

const ScheduleItem& only_item(const Schedule& s) {
  EXPECT_EQ(s.items.size(), 1u);
  return s.items.back();
}

std::vector<float> values(const NodeRef& view) {
  std::vector<float> out(view->numel());
  const Node* b = view->op == Op::BUFFER ? view.get() : view->src[0].get();
  buffer_copy_out(*b, out.data(), out.size() * 4);
  return out;
}

std::vector<float> run(const NodeRef& root) {
  return values(realize(make(Op::SINK, dtypes::void_, {root}))[0]);
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++)
    EXPECT_NEAR(got[i], want[i], 1e-4f * std::max(1.0f, std::abs(want[i]))) << i;
}

}  // namespace lg::graph_testing
