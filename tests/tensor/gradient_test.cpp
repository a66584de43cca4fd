// Autograd: every differentiable op of the op harness checked against central finite differences in
// float64, closed-form gradients of the composites, exact broadcasting gradients, and the Tensor API
// (backward, accumulation, requires_grad, detach, gradients()).
//
// A case is f over input tensors t[i]; the checked scalar is L = sum(f(t) * w) with w a fixed random
// weight of f's shape, so every output element contributes with a different weight. The analytic
// gradient dL/dt[i] comes from Tensor::gradients; the numeric one from (L(x+h) - L(x-h)) / 2h per
// element, with h = 1e-5 (float64: truncation ~h^2, rounding ~1e-16/h, both far below the tolerance).
#include <gtest/gtest.h>

#include "common/user_error.h"

#include <cmath>
#include <functional>

#include "base/error.h"
#include "ir/graph.h"
#include "tensor/host_ref.h"
#include "tensor/tensor.h"

namespace lg {
namespace {

using Ts = std::vector<Tensor>;
const DType F64 = dtypes::float64, F32 = dtypes::float32;

struct GradInput {
  Shape shape;
  ref::Fill fill = ref::Fill::Signed;
};
struct GradCase {
  std::string name;
  std::vector<GradInput> inputs;
  std::function<Tensor(const Ts&)> f;
};

#define F(...) []([[maybe_unused]] const Ts& t) -> Tensor { return __VA_ARGS__; }
using ref::Fill;
const Fill POS = Fill::Positive, NZ = Fill::NonZero;

Tensor int_tensor(std::vector<int32_t> v, Shape s) { return Tensor::from_vector<int32_t>(v, s); }

const std::vector<GradCase>& grad_cases() {
  static const std::vector<GradCase> cases = {
      // ---- elementwise ----
      {"add", {{{2, 3}}, {{2, 3}}}, F(t[0] + t[1])},
      {"add_broadcast", {{{3, 1}}, {{1, 4}}}, F(t[0] + t[1])},
      {"sub", {{{2, 3}}, {{3}}}, F(t[0] - t[1])},
      {"mul", {{{2, 3}}, {{2, 3}}}, F(t[0] * t[1])},
      {"mul_broadcast_0d", {{{2, 3}}, {{}}}, F(t[0] * t[1])},
      {"div", {{{2, 3}}, {{2, 3}, NZ}}, F(t[0] / t[1])},
      {"neg", {{{5}}}, F(-t[0])},
      {"reciprocal", {{{5}, NZ}}, F(t[0].reciprocal())},
      {"square", {{{5}}}, F(t[0].square())},
      {"exp", {{{5}}}, F(t[0].exp())},
      {"exp2", {{{5}}}, F(t[0].exp2())},
      {"log", {{{5}, POS}}, F(t[0].log())},
      {"log2", {{{5}, POS}}, F(t[0].log2())},
      {"sqrt", {{{5}, POS}}, F(t[0].sqrt())},
      {"rsqrt", {{{5}, POS}}, F(t[0].rsqrt())},
      {"sin", {{{6}}}, F(t[0].sin())},
      {"cos", {{{6}}}, F(t[0].cos())},
      {"tanh", {{{6}}}, F(t[0].tanh())},
      {"sigmoid", {{{6}}}, F(t[0].sigmoid())},
      {"relu", {{{6}, NZ}}, F(t[0].relu())},
      {"silu", {{{6}}}, F(t[0].silu())},
      {"gelu", {{{6}}}, F(t[0].gelu())},
      {"abs", {{{6}, NZ}}, F(t[0].abs())},
      {"maximum", {{{2, 3}}, {{2, 3}}}, F(t[0].maximum(t[1]))},
      {"minimum_broadcast", {{{2, 3}}, {{3}}}, F(t[0].minimum(t[1]))},
      {"pow_tensor", {{{4}, POS}, {{4}}}, F(t[0].pow(t[1]))},
      {"pow_cube_of_signed", {{{5}, NZ}}, F(t[0].pow(3))},
      {"pow_half", {{{5}, POS}}, F(t[0].pow(0.5))},
      {"where",
       {{{2, 3}}, {{2, 3}}},
       F(Tensor::from_vector<bool>({true, false, false, true, true, false}, {2, 3}).where(t[0], t[1]))},
      {"where_broadcast_branch", {{{2, 3}}, {{3}}}, F(t[0].gt(t[0].scalar_like(0)).where(t[1], t[0]))},
      {"scalar_ops", {{{4}, NZ}}, F((2.0 - t[0]) * 3.0 / t[0] + 1.5)},
      // ---- movement ----
      {"reshape", {{{2, 6}}}, F(t[0].reshape({3, 4}) * t[0].reshape({3, 4}))},
      {"permute", {{{2, 3, 4}}}, F(t[0].permute({2, 0, 1}))},
      {"transpose", {{{3, 4}}}, F(t[0].transpose())},
      {"expand", {{{3, 1}}}, F(t[0].expand({2, 3, 4}))},
      {"pad", {{{2, 3}}}, F(t[0].pad({{1, 0}, {2, 1}}))},
      {"pad_value", {{{2, 3}}}, F(t[0].pad({{0, 1}, {1, 1}}, 2.5))},
      {"shrink", {{{4, 5}}}, F(t[0].shrink({{1, 3}, {0, 4}}))},
      {"slice", {{{4, 5}}}, F(t[0].slice(-1, 2, 5))},
      {"flip", {{{3, 4}}}, F(t[0].flip({0, 1}))},
      {"unsqueeze_squeeze", {{{3, 1}}}, F(t[0].squeeze(1).unsqueeze(0))},
      {"flatten", {{{2, 3, 2}}}, F(t[0].flatten(1))},
      {"cat", {{{2, 3}}, {{2, 2}}}, F(Tensor::cat({t[0], t[1]}, 1))},
      {"stack", {{{3}}, {{3}}}, F(Tensor::stack({t[0], t[1]}, 1))},
      {"split", {{{5, 2}}}, F(t[0].split(2, 0)[2] * 2.0 + t[0].split(2, 0)[0].sum())},
      {"repeat", {{{2, 2}}}, F(t[0].repeat({2, 3}))},
      {"gather", {{{3, 4}}}, F(t[0].gather(1, int_tensor({0, 3, 3, 1, 2, 0}, {3, 2})))},
      {"gather_rows_of_a_wider_table", {{{4, 3}}}, F(t[0].gather(0, int_tensor({3, 0, 3, 1}, {2, 2})))},
      {"contiguous", {{{2, 3}}}, F(t[0].permute({1, 0}).contiguous())},
      // ---- reductions ----
      {"sum_all", {{{2, 3}}}, F(t[0].sum())},
      {"sum_axis_keepdim", {{{2, 3, 2}}}, F(t[0].sum({0, 2}, true))},
      {"prod", {{{2, 3}, NZ}}, F(t[0].prod({1}))},
      {"max_axis", {{{3, 4}}}, F(t[0].max(1))},
      {"max_all", {{{3, 4}}}, F(t[0].max())},
      {"min_axis", {{{3, 4}}}, F(t[0].min({0}))},
      {"mean", {{{3, 4}}}, F(t[0].mean(-1))},
      {"var", {{{3, 4}}}, F(t[0].var({1}))},
      // ---- composites ----
      {"matmul", {{{3, 4}}, {{4, 2}}}, F(t[0].matmul(t[1]))},
      {"matmul_batched_broadcast", {{{2, 3, 4}}, {{4, 2}}}, F(t[0].matmul(t[1]))},
      {"matmul_vector", {{{4}}, {{4, 3}}}, F(t[0].matmul(t[1]))},
      {"softmax", {{{3, 4}}}, F(t[0].softmax())},
      {"softmax_axis0", {{{3, 4}}}, F(t[0].softmax(0))},
      {"log_softmax", {{{3, 4}}}, F(t[0].log_softmax())},
      {"logsumexp", {{{3, 4}}}, F(t[0].logsumexp(-1))},
      {"cross_entropy", {{{3, 5}}}, F(t[0].cross_entropy(int_tensor({4, 0, 2}, {3})))},
      {"cross_entropy_ignore", {{{3, 5}}}, F(t[0].cross_entropy(int_tensor({4, -100, 2}, {3}), "sum"))},
      {"rms_norm", {{{3, 4}}}, F(t[0].rms_norm())},
      {"layer_norm", {{{3, 4}}}, F(t[0].layer_norm())},
      {"triu", {{{3, 3}}}, F(t[0].triu(1))},
      {"tril", {{{3, 3}}}, F(t[0].tril())},
  };
  return cases;
}

Tensor input_tensor(const std::vector<double>& v, const Shape& s) { return Tensor::from_doubles(v, s, F64); }

double scalar_loss(const GradCase& c, const std::vector<std::vector<double>>& xs, const Tensor& w) {
  Ts t;
  for (size_t i = 0; i < xs.size(); i++) t.push_back(input_tensor(xs[i], c.inputs[i].shape));
  return (c.f(t) * w).sum().to_doubles()[0];
}

class GradientFiniteDifference : public testing::TestWithParam<GradCase> {};

TEST_P(GradientFiniteDifference, MatchesCentralDifferencesInFloat64) {
  const GradCase& c = GetParam();
  std::vector<std::vector<double>> xs;
  Ts t;
  for (size_t i = 0; i < c.inputs.size(); i++) {
    const GradInput& in = c.inputs[i];
    xs.push_back(ref::random_fill(in.shape, in.fill, F64, ref::seed_from_name(c.name) + i).data);
    t.push_back(input_tensor(xs.back(), in.shape));
  }
  Tensor out = c.f(t);
  Tensor w = input_tensor(ref::random_fill(out.shape(), Fill::Signed, F64, 99).data, out.shape());
  std::vector<Tensor> grads = Tensor::gradients((out * w).sum(), t);
  const double h = 1e-5;
  for (size_t i = 0; i < xs.size(); i++) {
    ASSERT_EQ(grads[i].shape(), t[i].shape());
    ASSERT_EQ(grads[i].dtype(), F64);
    std::vector<double> got = grads[i].to_doubles();
    for (size_t k = 0; k < xs[i].size(); k++) {
      std::vector<std::vector<double>> up = xs, down = xs;
      up[i][k] += h;
      down[i][k] -= h;
      double want = (scalar_loss(c, up, w) - scalar_loss(c, down, w)) / (2 * h);
      EXPECT_NEAR(got[k], want, 1e-6 + 1e-6 * std::abs(want))
          << c.name << ": input " << i << " element " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, GradientFiniteDifference, testing::ValuesIn(grad_cases()),
                         [](const testing::TestParamInfo<GradCase>& p) { return p.param.name; });

// ---- closed forms of the composites ----

std::vector<double> vals(const Tensor& t) { return t.to_doubles(); }
void expect_all_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(GradientClosedForm, SoftmaxIsSTimesWMinusWeightedMean) {
  // L = sum(w * s), s = softmax(x) on rows: dL/dx = s * (w - sum_j w_j s_j)
  std::vector<double> x = {0.5, -1, 2, 0.1, 0.3, 0.2}, wv = {1, -2, 0.5, 3, 0.25, -1};
  Tensor xt = input_tensor(x, {2, 3}), w = input_tensor(wv, {2, 3});
  std::vector<double> got = vals(Tensor::gradients((xt.softmax() * w).sum(), {xt})[0]);
  ref::HostArray s = ref::softmax(ref::array({2, 3}, x), -1);
  std::vector<double> want(6);
  for (int r = 0; r < 2; r++) {
    double dot = 0;
    for (int j = 0; j < 3; j++) dot += wv[r * 3 + j] * s.data[r * 3 + j];
    for (int j = 0; j < 3; j++) want[r * 3 + j] = s.data[r * 3 + j] * (wv[r * 3 + j] - dot);
  }
  expect_all_near(got, want, 1e-12);
}

// The row maximum that keeps exp() in range is detached: the gradients of softmax, log_softmax and
// logsumexp have no path through it (no mask of the maxima, so x itself is not kept for the
// backward pass), and they still match the closed form where a row has tied maxima.
TEST(GradientClosedForm, SoftmaxFamilyHasNoPathThroughTheRowMax) {
  std::vector<double> x = {2, 2, -1, 0.5, 0.5, 0.5}, wv = {1, -2, 0.5, 3, 0.25, -1};
  Tensor xt = input_tensor(x, {2, 3}), w = input_tensor(wv, {2, 3});
  for (const auto& [what, f] : std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>>{
           {"softmax", [](const Tensor& t) { return t.softmax(); }},
           {"log_softmax", [](const Tensor& t) { return t.log_softmax(); }},
           {"logsumexp", [](const Tensor& t) { return t.logsumexp(-1, true).expand({2, 3}); }}}) {
    Tensor g = Tensor::gradients((f(xt) * w).sum(), {xt})[0];
    for (const Node* n : toposort(g.node())) EXPECT_NE(n->op, Op::CMPEQ) << what << ": a mask of the maxima";
  }
  std::vector<double> got = vals(Tensor::gradients((xt.softmax() * w).sum(), {xt})[0]);
  ref::HostArray s = ref::softmax(ref::array({2, 3}, x), -1);
  for (int r = 0; r < 2; r++) {
    double dot = 0;
    for (int j = 0; j < 3; j++) dot += wv[r * 3 + j] * s.data[r * 3 + j];
    for (int j = 0; j < 3; j++) EXPECT_NEAR(got[r * 3 + j], s.data[r * 3 + j] * (wv[r * 3 + j] - dot), 1e-12);
  }
}

TEST(GradientClosedForm, CrossEntropyMeanIsSoftmaxMinusOneHotOverN) {
  std::vector<double> x = {0.5, -1, 2, 0.1, 0.3, 0.2, -0.7, 1.1};
  Tensor xt = input_tensor(x, {2, 4});
  std::vector<double> got = vals(Tensor::gradients(xt.cross_entropy(int_tensor({2, 0}, {2})), {xt})[0]);
  ref::HostArray s = ref::softmax(ref::array({2, 4}, x), -1);
  std::vector<double> want = s.data;
  want[2] -= 1, want[4] -= 1;
  for (double& v : want) v /= 2;
  expect_all_near(got, want, 1e-12);
}

TEST(GradientClosedForm, RmsNorm) {
  // y = x r, r = (mean(x^2) + eps)^-1/2: dL/dx_i = r w_i - x_i r^3 (sum_j w_j x_j) / n
  std::vector<double> x = {0.5, -1, 2, 0.1}, wv = {1, -2, 0.5, 3};
  double eps = 1e-6;
  Tensor xt = input_tensor(x, {4}), w = input_tensor(wv, {4});
  std::vector<double> got = vals(Tensor::gradients((xt.rms_norm(-1, eps) * w).sum(), {xt})[0]);
  double ms = 0, wx = 0;
  for (int i = 0; i < 4; i++) ms += x[i] * x[i] / 4, wx += wv[i] * x[i];
  double r = 1 / std::sqrt(ms + eps);
  std::vector<double> want(4);
  for (int i = 0; i < 4; i++) want[i] = r * wv[i] - x[i] * r * r * r * wx / 4;
  expect_all_near(got, want, 1e-12);
}

TEST(GradientClosedForm, MatmulIsWTimesBTransposedAndATransposedTimesW) {
  ref::HostArray a = ref::random_fill({3, 4}, Fill::Signed, F64, 1),
                 b = ref::random_fill({4, 2}, Fill::Signed, F64, 2);
  ref::HostArray w = ref::random_fill({3, 2}, Fill::Signed, F64, 3);
  Tensor at = input_tensor(a.data, a.shape), bt = input_tensor(b.data, b.shape),
         wt = input_tensor(w.data, w.shape);
  std::vector<Tensor> g = Tensor::gradients((at.matmul(bt) * wt).sum(), {at, bt});
  expect_all_near(vals(g[0]), ref::matmul(w, ref::transpose(b)).data, 1e-12);
  expect_all_near(vals(g[1]), ref::matmul(ref::transpose(a), w).data, 1e-12);
}

// A gather of one element per row (cross-entropy's label pick): the gradient is g at the picked
// column of each row, zero elsewhere and in a row whose index is outside the axis, built as an
// elementwise select (no SCATTER_ADD into a zeroed buffer).
TEST(GradientClosedForm, GatherOfOneElementPerRowIsAOneHotSelect) {
  Tensor x = input_tensor({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4});
  Tensor index = Tensor::from_vector(std::vector<int32_t>{2, -100, 0}, {3, 1});
  Tensor w = input_tensor({10, 20, 30}, {3, 1});
  Tensor g = Tensor::gradients((x.gather(1, index) * w).sum(), {x})[0];
  for (const Node* n : toposort(g.node())) EXPECT_NE(n->op, Op::SCATTER_ADD);
  expect_all_near(vals(g), {0, 0, 10, 0, 0, 0, 0, 0, 30, 0, 0, 0}, 0);
  // a uint8 index over an axis longer than 256 picks one position, not every 256th
  Tensor wide = input_tensor(std::vector<double>(600, 1.0), {1, 600});
  Tensor u8 = Tensor::from_vector(std::vector<uint8_t>{7}, {1, 1});
  std::vector<double> gw = vals(Tensor::gradients(wide.gather(1, u8).sum(), {wide})[0]);
  std::vector<double> want(600, 0.0);
  want[7] = 1;
  expect_all_near(gw, want, 0);
}

TEST(GradientBroadcast, SumsOverBroadcastAxesExactly) {
  // a (3,1) + b (4): da_i = sum_j w_ij, db_j = sum_i w_ij; small integers, so exact
  std::vector<double> wv = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  Tensor a = input_tensor({1, 2, 3}, {3, 1}), b = input_tensor({1, 1, 1, 1}, {4}),
         w = input_tensor(wv, {3, 4});
  std::vector<Tensor> g = Tensor::gradients(((a + b) * w).sum(), {a, b});
  EXPECT_EQ(g[0].shape(), (Shape{3, 1}));
  EXPECT_EQ(vals(g[0]), (std::vector<double>{10, 26, 42}));
  EXPECT_EQ(vals(g[1]), (std::vector<double>{15, 18, 21, 24}));
}

TEST(GradientTies, BinaryMaxSplitsEvenlyOnTies) {
  Tensor x = input_tensor({1, 2, 3}, {3}), y = input_tensor({1, 5, 0}, {3});
  std::vector<Tensor> g = Tensor::gradients(x.maximum(y).sum(), {x, y});
  EXPECT_EQ(vals(g[0]), (std::vector<double>{0.5, 0, 1}));
  EXPECT_EQ(vals(g[1]), (std::vector<double>{0.5, 1, 0}));
  EXPECT_EQ(vals(Tensor::gradients(x.maximum(x).sum(), {x})[0]), (std::vector<double>{1, 1, 1}));
}

TEST(GradientTies, ReduceMaxSharesAmongEqualMaxima) {
  Tensor x = input_tensor({3, 1, 3, 2}, {4});
  EXPECT_EQ(vals(Tensor::gradients(x.max(), {x})[0]), (std::vector<double>{0.5, 0, 0.5, 0}));
}

TEST(GradientCast, FloatRoundTripPassesGradientInSourceDtype) {
  Tensor x = input_tensor({1.5, -2}, {2});
  Tensor g = Tensor::gradients((x.cast(F32) * 3.0).cast(F64).sum(), {x})[0];
  EXPECT_EQ(g.dtype(), F64);
  EXPECT_EQ(vals(g), (std::vector<double>{3, 3}));
}

TEST(GradientCast, Bfloat16ComputeGivesFloat32Gradient) {
  Tensor x = Tensor::from_doubles({1, 2, 3, 4}, {4}, F32);
  Tensor g = Tensor::gradients((x.cast(dtypes::bfloat16) * 2.0).cast(F32).sum(), {x})[0];
  EXPECT_EQ(g.dtype(), F32);
  EXPECT_EQ(vals(g), (std::vector<double>{2, 2, 2, 2}));
}

TEST(GradientRandomMask, DropoutGradientIsTheMaskOverKeepProbability) {
  // rand() < 0.75 compares a scaled float against a float constant: the kernel's symbolic rules must
  // leave float comparisons alone (they once read the float constant as an integer).
  Tensor::manual_seed(11);
  Tensor x = input_tensor({1, 2, 3, 4, 5, 6, 7, 8}, {8});
  Tensor keep = Tensor::rand({8}).lt(Tensor::full({}, 0.75));
  Tensor y = keep.where(x / 0.75, x.scalar_like(0));
  std::vector<double> g = vals(Tensor::gradients(y.sum(), {x})[0]);
  std::vector<double> k = vals(keep.cast(F64));
  for (size_t i = 0; i < g.size(); i++) EXPECT_DOUBLE_EQ(g[i], k[i] / 0.75) << i;
}

// ---- the Tensor API ----

using testing_util::error_of;

TEST(Backward, FillsGradOfTensorsThatRequireGradOnly) {
  Tensor w = Tensor::from_doubles({1, 2, 3}, {3}, F32).realize().requires_grad(true);
  Tensor x = Tensor::from_doubles({4, 5, 6}, {3}, F32).realize();
  (w * x).sum().backward();
  EXPECT_EQ(vals(w.grad()), (std::vector<double>{4, 5, 6}));
  EXPECT_FALSE(x.grad().defined());
}

TEST(Backward, AccumulatesAcrossCallsAndCopiesShareTheGradient) {
  Tensor w = Tensor::from_doubles({1, 2}, {2}, F32).realize().requires_grad(true);
  Tensor copy = w;
  (w * w).sum().backward();
  (w * 3.0).sum().backward();
  EXPECT_EQ(vals(copy.grad()), (std::vector<double>{5, 7}));  // 2w + 3
  copy.set_grad(Tensor());
  EXPECT_FALSE(w.grad().defined());
}

TEST(Backward, ForwardAndBackwardRealizeInOneSchedule) {
  Tensor w = Tensor::from_doubles({0.5, -1, 2, 0.25}, {2, 2}, F32).realize().requires_grad(true);
  Tensor x = Tensor::from_doubles({1, 2, 3, 4}, {2, 2}, F32).realize();
  Tensor loss = x.matmul(w).square().mean();
  loss.backward();
  Tensor g = w.grad();
  Tensor::realize({loss, g});
  // y = x w = [[4.5, -0.5], [9.5, -2]]: loss = mean(y^2); dL/dw = x^T (2y/4)
  EXPECT_NEAR(vals(loss)[0], (4.5 * 4.5 + 0.25 + 9.5 * 9.5 + 4) / 4, 1e-5);
  std::vector<double> want = {(1 * 4.5 + 3 * 9.5) / 2, (1 * -0.5 + 3 * -2) / 2, (2 * 4.5 + 4 * 9.5) / 2,
                              (2 * -0.5 + 4 * -2) / 2};
  expect_all_near(vals(g), want, 1e-5);
}

TEST(Backward, DetachStopsTheGradient) {
  Tensor w = Tensor::from_doubles({1, 2}, {2}, F64).realize().requires_grad(true);
  Tensor loss = (w * w.detach()).sum();
  loss.backward();
  EXPECT_EQ(vals(w.grad()), (std::vector<double>{1, 2}));  // not 2w
  EXPECT_EQ(vals(w.detach() * 2.0), (std::vector<double>{2, 4}));
}

TEST(Backward, UserErrorsNameTheProblem) {
  Tensor w = Tensor::from_doubles({1, 2}, {2}, F32).realize().requires_grad(true);
  EXPECT_NE(error_of([&] { (w * 2.0).backward(); }).find("one element"), std::string::npos);
  Tensor x = Tensor::from_doubles({1, 2}, {2}, F32).realize();
  EXPECT_NE(error_of([&] { x.sum().backward(); }).find("requires grad"), std::string::npos);
  EXPECT_NE(error_of([&] { Tensor::gradients(x.sum(), {w}); }).find("does not depend"), std::string::npos);
  Tensor i = int_tensor({1, 2}, {2});
  EXPECT_NE(error_of([&] { i.sum().backward(); }).find("float"), std::string::npos);
}

TEST(Backward, CopyToAnotherDeviceSendsTheGradientBack) {
  Tensor w = Tensor::from_doubles({1, 2}, {2}, F64).realize().requires_grad(true);
  Tensor far = w.to("INTERP:1");
  (far * far).sum().backward();
  EXPECT_EQ(w.grad().device(), w.device());
  EXPECT_EQ(vals(w.grad()), (std::vector<double>{2, 4}));
}

TEST(Backward, UnusedParameterKeepsNoGradient) {
  Tensor a = Tensor::from_doubles({1}, {1}, F32).realize().requires_grad(true);
  Tensor b = Tensor::from_doubles({1}, {1}, F32).realize().requires_grad(true);
  Tensor c = Tensor::from_doubles({2}, {1}, F32).realize().requires_grad(true);
  (a * 2.0 + b.lt(c).where(1.0, 0.0).cast(F32)).sum().backward();
  EXPECT_EQ(vals(a.grad()), (std::vector<double>{2}));
  EXPECT_FALSE(b.grad().defined());  // only through a comparison
  EXPECT_FALSE(c.grad().defined());
}

}  // namespace
}  // namespace lg
