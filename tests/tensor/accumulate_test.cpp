// Tensor::accumulate into a run of a buffer (a gradient sum's view of the optimizer's flat buffer):
// assign or add any value, and scatter a GATHER's gradient straight into the run, summed in the
// run's dtype, with the elements around the run untouched.
#include <gtest/gtest.h>

#include "ir/node.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"

namespace lg {
namespace {

constexpr DType F32 = dtypes::float32;

std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

// A realized 1-D float32 buffer of n elements, all `fill`.
Tensor flat(int64_t n, double fill) { return Tensor::full({n}, fill, F32).contiguous().realize(); }

// The gradient of sum(w.gather(0, ids) * coef) for w of shape (rows, 2): row r gets the sum of
// coef's rows over the positions whose id is r.
Tensor gather_grad(DType dtype, int64_t rows, const std::vector<double>& ids,
                   const std::vector<double>& coef) {
  int64_t n = static_cast<int64_t>(ids.size());
  Tensor w = Tensor::zeros({rows, 2}, dtype).contiguous().realize().requires_grad(true);
  Tensor index = Tensor::from_doubles(ids, {n, 1}, dtypes::int32).expand({n, 2});
  (w.gather(0, index) * Tensor::from_doubles(coef, {n, 2}, dtype)).sum().backward();
  return w.grad();
}
Tensor gather_grad(DType dtype, int64_t rows, const std::vector<double>& coef) {
  return gather_grad(dtype, rows, {2, 0, 2, 2}, coef);
}

TEST(Accumulate, ScattersAGathersGradientIntoTheRun) {
  Tensor buf = flat(10, 5);
  Tensor run = buf.slice(0, 2, 8).reshape({3, 2});
  Tensor g = gather_grad(F32, 3, {1, 2, 3, 4, 5, 6, 7, 8});
  run.accumulate(g, /*overwrite=*/true);
  EXPECT_EQ(run.node()->op, Op::SCATTER_ADD);  // into the run itself, not a copy of g's buffer
  run.realize();
  // row 0: ids[1] -> (3, 4); row 1: none; row 2: ids 0, 2, 3 -> (1+5+7, 2+6+8)
  EXPECT_EQ(values(buf), (std::vector<float>{5, 5, 3, 4, 0, 0, 13, 16, 5, 5}));
  EXPECT_EQ(values(run), (std::vector<float>{3, 4, 0, 0, 13, 16}));
}

TEST(Accumulate, AddsAGathersGradientToTheRunsSums) {
  Tensor buf = flat(8, 1);
  Tensor run = buf.slice(0, 1, 7).reshape({3, 2});
  run.accumulate(gather_grad(F32, 3, {1, 2, 3, 4, 5, 6, 7, 8}), false).realize();
  EXPECT_EQ(values(buf), (std::vector<float>{1, 4, 5, 1, 1, 14, 17, 1}));
}

TEST(Accumulate, AssignsOrAddsAnyOtherValue) {
  Tensor buf = flat(6, 2);
  Tensor a = buf.slice(0, 0, 3), b = buf.slice(0, 3, 6);
  a.accumulate(Tensor::from_doubles({1, 2, 3}, {3}, F32), true);
  b.accumulate(Tensor::from_doubles({1, 2, 3}, {3}, dtypes::bfloat16), false);  // cast to float32
  Tensor::realize({a, b});
  EXPECT_EQ(values(buf), (std::vector<float>{1, 2, 3, 3, 4, 5}));
}

// bfloat16 has 8 significant bits: between 256 and 512 it holds the even integers only. A GATHER's
// bfloat16 gradient sums in float32 and rounds once: 256 + 1 + 1 + 1 = 259 -> 260 (adds rounded
// one at a time would give 256). Scattered into a float32 run, the sum stays 259.
TEST(Accumulate, SumsABfloat16GradientInTheRunsDtype) {
  std::vector<double> ids{1, 1, 1, 1}, coef{256, 256, 1, 1, 1, 1, 1, 1};
  Tensor g = gather_grad(dtypes::bfloat16, 2, ids, coef);
  EXPECT_EQ(g.dtype(), dtypes::bfloat16);
  EXPECT_EQ(values(g.cast(F32)), (std::vector<float>{0, 0, 260, 260}));
  Tensor buf = flat(4, 7);
  buf.reshape({2, 2}).accumulate(gather_grad(dtypes::bfloat16, 2, ids, coef), true).realize();
  EXPECT_EQ(values(buf), (std::vector<float>{0, 0, 259, 259}));
}

TEST(Accumulate, ReplaysInACapturedStep) {
  Tensor buf = flat(6, 0);
  Tensor w = Tensor::zeros({3, 2}, F32).contiguous().realize().requires_grad(true);
  Jit jit([&](const std::vector<Tensor>& in) {
    Tensor ids = in[0].reshape({4, 1}).expand({4, 2});
    (w.gather(0, ids) * 2).sum().backward();
    Tensor g = w.grad();
    w.set_grad(Tensor());
    Tensor run = buf.reshape({3, 2});
    run.accumulate(g, true).realize();  // as llm/train_step.cpp's micro step does
    return std::vector<Tensor>{in[0] * 1};
  });
  for (int step = 0; step < 3; step++) {
    std::vector<double> ids{double(step % 3), 1, 1, 0};
    jit({Tensor::from_doubles(ids, {4}, dtypes::int32).realize()});
    std::vector<float> want(6, 0);
    for (double id : ids) {
      want[2 * static_cast<int>(id)] += 2;
      want[2 * static_cast<int>(id) + 1] += 2;
    }
    EXPECT_EQ(values(buf), want) << "step " << step;
  }
}

}  // namespace
}  // namespace lg
