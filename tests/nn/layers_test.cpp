// Layers, initializers and parameter collections.
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/optim.h"

namespace lg::nn {
namespace {

std::vector<double> vals(const Tensor& t) { return t.to_doubles(); }

TEST(Linear, IsXTimesWeightTransposedWithoutBiasByDefault) {
  Linear l(3, 2);
  EXPECT_EQ(l.weight.shape(), (Shape{2, 3}));
  EXPECT_FALSE(l.bias.defined());
  EXPECT_TRUE(l.weight.requires_grad());
  l.weight.assign(Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3})).realize();
  Tensor y = l(Tensor::from_vector<float>({1, 0, -1, 2, 1, 0}, {2, 3}));
  EXPECT_EQ(vals(y), (std::vector<double>{-2, -2, 4, 13}));
  EXPECT_EQ(l.params().size(), 1u);
}

TEST(Linear, BiasIsAddedAndNamed) {
  Linear l(2, 2, true);
  l.weight.assign(Tensor::from_vector<float>({1, 0, 0, 1}, {2, 2})).realize();
  l.bias.assign(Tensor::from_vector<float>({10, 20}, {2})).realize();
  EXPECT_EQ(vals(l(Tensor::from_vector<float>({1, 2}, {2}))), (std::vector<double>{11, 22}));
  EXPECT_TRUE(l.params().contains("bias"));
}

TEST(Linear, GradientOfWeightIsOuterProduct) {
  Linear l(2, 1);
  l.weight.assign(Tensor::from_vector<float>({0.5, -1}, {1, 2})).realize();
  l(Tensor::from_vector<float>({3, 4}, {1, 2})).sum().backward();
  EXPECT_EQ(vals(l.weight.grad()), (std::vector<double>{3, 4}));
}

TEST(Embedding, PicksRowsAndScattersGradients) {
  Embedding e(4, 2);
  e.weight.assign(Tensor::from_vector<float>({0, 1, 10, 11, 20, 21, 30, 31}, {4, 2})).realize();
  Tensor ids = Tensor::from_vector<int32_t>({2, 0, 2}, {3});
  Tensor y = e(ids);
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(vals(y), (std::vector<double>{20, 21, 0, 1, 20, 21}));
  y.sum().backward();
  EXPECT_EQ(vals(e.weight.grad()), (std::vector<double>{1, 1, 0, 0, 2, 2, 0, 0}));
  EXPECT_EQ(e(Tensor::from_vector<int32_t>({1, 3, 0, 0}, {2, 2})).shape(), (Shape{2, 2, 2}));
}

TEST(RMSNorm, NormalizesLastAxisAndScalesByWeight) {
  RMSNorm n(2, 0);
  n.weight.assign(Tensor::from_vector<float>({1, 2}, {2})).realize();
  std::vector<double> y = vals(n(Tensor::from_vector<float>({3, 4}, {1, 2})));
  double r = std::sqrt((9 + 16) / 2.0);
  EXPECT_NEAR(y[0], 3 / r, 1e-6);
  EXPECT_NEAR(y[1], 8 / r, 1e-6);
  Tensor bf = n(Tensor::from_vector<float>({3, 4}, {1, 2}).cast(dtypes::bfloat16));
  EXPECT_EQ(bf.dtype(), dtypes::bfloat16);
}

TEST(Init, NormalHasTheRequestedSpreadAndIsRealized) {
  Tensor::manual_seed(7);
  Tensor w = init::normal({64, 32}, 0.02);
  EXPECT_EQ(w.node()->op == Op::BUFFER || w.node()->op == Op::RESHAPE, true);
  std::vector<double> v = vals(w);
  double s2 = 0;
  for (double x : v) s2 += x * x;
  EXPECT_NEAR(std::sqrt(s2 / v.size()), 0.02, 0.002);
  std::vector<double> sv = vals(init::scaled_normal({64, 32}, 0.02, 8));
  s2 = 0;
  for (double x : sv) s2 += x * x;
  EXPECT_NEAR(std::sqrt(s2 / sv.size()), 0.02 / 4, 0.0005);  // std / sqrt(2*8)
  EXPECT_EQ(vals(init::zeros({3})), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(vals(init::ones({2}, dtypes::bfloat16)), (std::vector<double>{1, 1}));
}

// Inside a Deferred scope the draws stay lazy until realize(), which realizes them together; the
// values are those of the same draws made one at a time. Constants are realized at once and stay
// separate buffers (unrealized, two ones() of one shape would be one node).
TEST(Init, DeferredDrawsAreRealizedTogetherWithTheSameValues) {
  Tensor::manual_seed(11);
  std::vector<double> eager_a = vals(init::normal({8, 4}, 0.5)),
                      eager_b = vals(init::scaled_normal({4, 8}, 0.5, 2));
  Tensor::manual_seed(11);
  Tensor a, b, one1, one2;
  {
    init::Deferred scope;
    a = init::normal({8, 4}, 0.5);
    one1 = init::ones({3});
    b = init::scaled_normal({4, 8}, 0.5, 2);
    one2 = init::ones({3});
    EXPECT_EQ(a.node()->op, Op::CONTIGUOUS);
    EXPECT_EQ(b.node()->op, Op::CONTIGUOUS);
    EXPECT_NE(one1.node()->op, Op::CONTIGUOUS);
    scope.realize();
    EXPECT_NE(a.node()->op, Op::CONTIGUOUS);
    EXPECT_NE(b.node()->op, Op::CONTIGUOUS);
  }
  EXPECT_EQ(vals(a), eager_a);
  EXPECT_EQ(vals(b), eager_b);
  EXPECT_NE(one1.node(), one2.node());
  one1.assign(Tensor::from_vector<float>({2, 2, 2}, {3})).realize();
  EXPECT_EQ(vals(one2), (std::vector<double>{1, 1, 1}));
  // after the scope, draws are realized at once again
  EXPECT_NE(init::normal({2}, 1).node()->op, Op::CONTIGUOUS);
}

TEST(ParamList, NamesAreUniqueAndPrefixed) {
  Linear a(2, 2), b(2, 3);
  ParamList ps;
  ps.add_all("layers.0", a.params());
  ps.add_all("layers.1", b.params());
  EXPECT_EQ(ps.items()[1].first, "layers.1.weight");
  EXPECT_EQ(ps.numel(), 4 + 6);
  EXPECT_THROW(ps.add("layers.0.weight", a.weight), Error);
  EXPECT_THROW(ps.at("nope"), Error);
}

TEST(Training, AdamWFitsALinearMapOnInterp) {
  Tensor::manual_seed(1);
  Linear l(3, 1, false, 0.5);
  Tensor x = Tensor::randn({16, 3}).realize();
  Tensor y = x.matmul(Tensor::from_vector<float>({1, -2, 0.5}, {3, 1})).realize();
  AdamW opt(l.params(), AdamWConfig{.lr = 0.1, .weight_decay = 0});
  double first = 0, last = 0;
  for (int s = 0; s < 40; s++) {
    Tensor loss = (l(x) - y).square().mean();
    loss.backward();
    opt.step({loss});
    opt.zero_grad();
    (s == 0 ? first : last) = vals(loss)[0];
  }
  EXPECT_LT(last, first * 0.01);
}

}  // namespace
}  // namespace lg::nn
