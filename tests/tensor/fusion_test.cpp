// Fusion as seen from the Tensor API: how many kernels the scheduler makes for common expressions
// over realized inputs (schedule/fusion.h states the rules), and that the fused result is right.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "schedule/schedule.h"
#include "tensor/host_ref.h"
#include "tensor/tensor.h"

namespace lg {
namespace {

using namespace lg::ref;

// Kernels (not copies) the scheduler makes to realize t.
int64_t kernel_count(const Tensor& t) {
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {t.node()}));
  return std::count_if(s.items.begin(), s.items.end(),
                       [](const ScheduleItem& it) { return it.kind == ScheduleItem::Kind::Kernel; });
}

// A realized input buffer holding h's values.
Tensor realized(const HostArray& h) {
  return Tensor::from_doubles(h.data, h.shape, dtypes::float32).realize();
}

HostArray input(const Shape& shape, uint64_t seed, Fill fill = Fill::Signed) {
  return random_fill(shape, fill, dtypes::float32, seed);
}

void expect_values(const Tensor& got, const HostArray& want, double tol = 1e-5) {
  ASSERT_EQ(got.shape(), want.shape);
  std::vector<double> v = got.to_doubles();
  ASSERT_EQ(static_cast<int64_t>(v.size()), want.numel());
  for (size_t i = 0; i < v.size(); i++)
    EXPECT_NEAR(v[i], want.data[i], tol * (1 + std::abs(want.data[i]))) << "element " << i;
}

TEST(Fusion, MultiplyAddThenSumIsOneKernel) {
  HostArray a = input({4, 6}, 1), b = input({4, 6}, 2), c = input({4, 6}, 3);
  Tensor out = (realized(a) * realized(b) + realized(c)).sum(1);
  EXPECT_EQ(kernel_count(out), 1);
  expect_values(
      out, reduce(map3(a, b, c, [](double x, double y, double z) { return x * y + z; }), Reduce::Sum, {1}));
}

TEST(Fusion, SoftmaxOverLastAxisIsOneKernel) {
  HostArray x = input({4, 8}, 4);
  Tensor out = realized(x).softmax(-1);
  EXPECT_EQ(kernel_count(out), 1);
  expect_values(out, softmax(x, -1), 1e-4);
}

TEST(Fusion, ElementwiseChainOfTenOpsIsOneKernel) {
  HostArray x = input({3, 5}, 5, Fill::Positive);
  Tensor t = realized(x);
  Tensor out = ((((t * 2 + 1).exp().log() - 0.5).sqrt().neg().abs() * 3).sigmoid() + t).relu();
  EXPECT_EQ(kernel_count(out), 1);
  expect_values(out,
                map(x,
                    [](double v) {
                      double r = std::sqrt(std::log(std::exp(v * 2 + 1)) - 0.5);
                      return std::max(0.0, sigmoid(std::abs(-r) * 3) + v);
                    }),
                1e-4);
}

TEST(Fusion, MatmulOfRealizedMatricesIsOneKernel) {
  HostArray a = input({5, 7}, 6), b = input({7, 3}, 7);
  Tensor out = realized(a).matmul(realized(b));
  EXPECT_EQ(kernel_count(out), 1);
  expect_values(out, matmul(a, b));
}

TEST(Fusion, MatmulByAWideMatrixPacksItIntoPanelsFirst) {
  // (64, 96) @ (96, 64): b is copied as (64/32, 96, 32) column panels (one kernel), then the product
  // reads the panels (a second); plain and transposed b give the same values.
  HostArray a = input({64, 96}, 9), b = input({96, 64}, 10);
  Tensor out = realized(a).matmul(realized(b));
  EXPECT_EQ(kernel_count(out), 2);
  expect_values(out, matmul(a, b), 1e-4);
  Tensor bt = realized(transpose(b));
  expect_values(realized(a).matmul(bt.transpose()), matmul(a, b), 1e-4);
}

TEST(Fusion, ReduceFusesIntoTheFollowingElementwise) {
  HostArray x = input({4, 6}, 8);
  Tensor out = realized(x).sum(1) * 2;
  EXPECT_EQ(kernel_count(out), 1);
  expect_values(out, map(reduce(x, Reduce::Sum, {1}), [](double v) { return v * 2; }));
}

TEST(Fusion, ViewOfRealizedBufferNeedsNoKernel) {
  HostArray x = input({3, 4, 5}, 9);
  Tensor view = realized(x).permute({2, 0, 1});
  EXPECT_EQ(kernel_count(view), 0);
  expect_values(view, permute(x, {2, 0, 1}));
}

TEST(Fusion, ContiguousOfViewIsOneKernel) {
  HostArray x = input({3, 4, 5}, 10);
  Tensor copy = realized(x).permute({2, 0, 1}).contiguous();
  EXPECT_EQ(kernel_count(copy), 1);
  expect_values(copy, permute(x, {2, 0, 1}));
}

}  // namespace
}  // namespace lg
