// Optimizers, clipping and LR schedules against hand-computed values and against PyTorch's
// (tests/nn/data/optim_reference.json, written by tools/adamw_reference.py).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "nn/lr_schedule.h"
#include "nn/optim.h"
#include "base/error.h"
#include "runtime/realize.h"
#include "schedule/schedule.h"
#include "tensor/jit.h"

namespace lg::nn {
namespace {

using json = nlohmann::json;
const DType F32 = dtypes::float32;

std::vector<float> as_floats(const json& j) {
  std::vector<float> v;
  for (double d : j) v.push_back(static_cast<float>(d));
  return v;
}
Tensor param(const std::vector<float>& v, Shape s) {
  return Tensor::from_vector<float>(v, s).contiguous().realize().requires_grad(true);
}
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rtol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++)
    EXPECT_NEAR(got[i], want[i], rtol * std::abs(want[i])) << what << " element " << i;
}

json reference() {
  std::filesystem::path p = std::filesystem::path(__FILE__).parent_path() / "data" / "optim_reference.json";
  std::ifstream f(p);
  EXPECT_TRUE(f.good()) << "missing " << p;
  return json::parse(f);
}

// Parameters must agree to 1 ulp of float32 (rtol 2.5e-7). Measured on INTERP: AdamW is bit-identical
// to PyTorch at every step; SGD differs by 1 ulp in 9 of 54 values (PyTorch's CPU kernels fuse
// a + alpha*b).
// Replays the reference run: per step set the gradients, (clip), set the LR, step.
void replay(const json& ref, Optimizer& opt, Tensor& p0, Tensor& p1, bool clip) {
  LRSchedule lr = warmup_cosine(1e-2, 1e-3, 2, 6);
  for (size_t s = 0; s < ref["steps"].size(); s++) {
    const json& st = ref["steps"][s];
    EXPECT_DOUBLE_EQ(lr(static_cast<int64_t>(s)), st["lr"].get<double>()) << "step " << s;
    p0.set_grad(Tensor::from_vector<float>(as_floats(st["g0"]), {2, 3}));
    p1.set_grad(Tensor::from_vector<float>(as_floats(st["g1"]), {3}));
    opt.set_lr(lr(static_cast<int64_t>(s)));
    if (clip) {
      Tensor norm = clip_grad_norm(opt.params(), 1.0);
      opt.step({norm});
      EXPECT_NEAR(norm.to_vector<float>()[0], st["norm"].get<double>(), 1e-6 * st["norm"].get<double>());
    } else {
      opt.step();
    }
    expect_close(p0.to_vector<float>(), as_floats(st["p0"]), 2.5e-7, "p0 step " + std::to_string(s));
    expect_close(p1.to_vector<float>(), as_floats(st["p1"]), 2.5e-7, "p1 step " + std::to_string(s));
  }
}

TEST(AdamW, MatchesPyTorchWithClippingAndWarmupCosine) {
  json ref = reference()["adamw"];
  Tensor p0 = param(as_floats(ref["p0"]), {2, 3}), p1 = param(as_floats(ref["p1"]), {3});
  ParamList ps;
  ps.add("w", p0);
  ps.add("gain", p1);
  AdamW opt(ps, AdamWConfig{});
  EXPECT_EQ(opt.weight_decay_of(0), 0.1);
  EXPECT_EQ(opt.weight_decay_of(1), 0.0);  // 1-D: no decay
  replay(ref, opt, p0, p1, true);
  EXPECT_EQ(opt.steps(), 6);
}

TEST(SGD, MomentumMatchesPyTorch) {
  json ref = reference()["sgd"];
  Tensor p0 = param(as_floats(ref["p0"]), {2, 3}), p1 = param(as_floats(ref["p1"]), {3});
  ParamList ps;
  ps.add("w", p0);
  ps.add("b", p1);
  SGD opt(ps, SGDConfig{.lr = 1e-2, .momentum = 0.9, .weight_decay = 0.01});
  replay(ref, opt, p0, p1, false);
}

TEST(AdamW, FirstStepByHand) {
  // One element, g = 0.5, lr 0.1, wd 0.1, b1 0.9, b2 0.95, eps 1e-5, p = 2:
  // m = 0.05, v = 0.0125, m^ = 0.5, v^ = 0.25; p = 2*(1 - 0.01) - 0.1 * 0.5 / (0.5 + 1e-5)
  Tensor p = param({2}, {1, 1});
  ParamList ps;
  ps.add("p", p);
  AdamW opt(ps, AdamWConfig{.lr = 0.1});
  p.set_grad(Tensor::from_vector<float>({0.5f}, {1, 1}));
  opt.step();
  double want = 2 * (1 - 0.01) - 0.1 * 0.5 / (0.5 + 1e-5);
  EXPECT_NEAR(p.to_vector<float>()[0], want, 2e-7);
  EXPECT_NEAR(opt.state().at("exp_avg.p").to_vector<float>()[0], 0.05, 1e-8);
  EXPECT_NEAR(opt.state().at("exp_avg_sq.p").to_vector<float>()[0], 0.0125, 1e-9);
}

TEST(AdamW, StepIsOneScheduleWhoseKernelsCompileOnce) {
  ParamList ps;
  for (int i = 0; i < 4; i++) ps.add("w" + std::to_string(i), param({1, 2, 3, 4}, {2, 2}));
  AdamW opt(ps, AdamWConfig{});
  auto set_grads = [&] {
    for (const auto& [n, p] : ps) Tensor(p).set_grad(Tensor::full({2, 2}, 0.5));
  };
  set_grads();
  opt.step();
  size_t built = programs_built();
  set_grads();
  opt.set_lr(5e-4);
  opt.step();
  EXPECT_EQ(programs_built(), built);  // new LR and step count, same kernels
}

// The parameters live in one flat buffer (views of it, same values), and the update of all of them,
// in two weight-decay groups, is one kernel writing m, v and p (schedule/multi_output.h), whatever
// their number.
TEST(AdamW, UpdateIsOneKernelOverTheFlatBuffers) {
  ParamList ps;
  std::vector<std::vector<float>> init;
  for (int i = 0; i < 6; i++) {
    init.push_back({1.0f + i, 2, 3, 4 - 0.5f * i});
    ps.add("w" + std::to_string(i), param(init.back(), i % 2 ? Shape{4} : Shape{2, 2}));
  }
  AdamW opt(ps, AdamWConfig{.lr = 0.1});
  EXPECT_EQ(opt.layout().groups(), 2);
  for (size_t i = 0; i < ps.size(); i++) {
    EXPECT_EQ(ps.items()[i].second.to_vector<float>(), init[i]) << i;  // the caller's handles now view the flat buffer
    EXPECT_EQ(view_base(ps.items()[i].second.node().get()), view_base(opt.flat_params().node().get()));
  }
  Jit update([&](const std::vector<Tensor>& in) {
    Tensor::realize(opt.build_step(in[0]));
    return std::vector<Tensor>{};
  });
  for (int s = 0; s < 3; s++) {
    std::vector<Tensor> writes;
    for (size_t i = 0; i < ps.size(); i++) {
      Tensor g = opt.grad_view(i);
      writes.push_back(g.assign(Tensor::full(g.shape(), 0.5)));
    }
    Tensor::realize(writes);
    update({opt.upload_scalars()});
  }
  EXPECT_EQ(update.captured_items(), 1u);
  // p = 1 after three steps of g = 0.5: Adam's step is lr each time (m^/sqrt(v^) = 1, up to eps);
  // the 2-D parameters also decay by (1 - lr*wd) per step, the 1-D ones do not.
  double adam = 0.1 * 0.5 / (0.5 + 1e-5);
  double p_nodecay = 3 - 3 * adam, p_decay = ((3 * 0.99 - adam) * 0.99 - adam) * 0.99 - adam;
  EXPECT_NEAR(ps.items()[0].second.to_vector<float>()[2], p_decay, 1e-6);
  EXPECT_NEAR(ps.items()[1].second.to_vector<float>()[2], p_nodecay, 1e-6);
}

// Equal layers whose weights are runs of the optimizer's flat buffer run the same kernels (the
// runs are read through moved slot pointers, not offsets in the kernel): the forward and backward
// of 5 layers have as many distinct kernels as those of 3 (the first and last layers differ).
TEST(AdamW, EqualLayersInTheFlatBufferShareTheirKernels) {
  auto distinct_kernels = [](int layers) {
    ParamList ps;
    std::vector<float> w(16 * 16);
    for (size_t i = 0; i < w.size(); i++) w[i] = static_cast<float>(i % 7) / 7.0f - 0.4f;
    for (int l = 0; l < layers; l++) ps.add("w" + std::to_string(l), param(w, {16, 16}));
    AdamW opt(ps, AdamWConfig{});
    Tensor x = Tensor::full({8, 16}, 0.5);
    for (const auto& [name, p] : ps) x = x.matmul(p).relu();
    std::vector<NodeRef> roots{x.sum().node()};
    for (const Tensor& g : Tensor::gradients(x.sum(), [&] {
           std::vector<Tensor> v;
           for (const auto& [name, p] : ps) v.push_back(p);
           return v;
         }()))
      roots.push_back(g.node());
    std::set<const Node*> asts;
    for (const ScheduleItem& item : create_schedule(make(Op::SINK, dtypes::void_, roots)).items) asts.insert(item.ast.get());
    return asts.size();
  };
  EXPECT_EQ(distinct_kernels(5), distinct_kernels(3));
}

// A parameter without a gradient is left as it is (its state too), between updated neighbours.
TEST(AdamW, ParametersWithoutAGradientAreLeftAsTheyAre) {
  Tensor a = param({2}, {1, 1}), b = param({5, 6}, {1, 2}), c = param({2}, {1, 1});
  ParamList ps;
  ps.add("a", a);
  ps.add("b", b);
  ps.add("c", c);
  AdamW opt(ps, AdamWConfig{.lr = 0.1});
  for (int s = 0; s < 2; s++) {
    a.set_grad(Tensor::from_vector<float>({0.5f}, {1, 1}));
    c.set_grad(Tensor::from_vector<float>({0.5f}, {1, 1}));
    opt.step();
  }
  double adam = 0.1 * 0.5 / (0.5 + 1e-5), want = (2 * 0.99 - adam) * 0.99 - adam;
  EXPECT_NEAR(a.to_vector<float>()[0], want, 2e-7);
  EXPECT_NEAR(c.to_vector<float>()[0], want, 2e-7);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{5, 6}));
  EXPECT_EQ(opt.state().at("exp_avg.b").to_vector<float>(), (std::vector<float>{0, 0}));
  EXPECT_FALSE(a.grad().defined());  // step() consumed the gradients
}

TEST(Optimizer, ParametersOfTwoDtypesOrTheSameTensorTwiceAreUserErrors) {
  ParamList mixed;
  mixed.add("a", param({1, 2}, {2}));
  mixed.add("b", Tensor::from_vector<float>({1, 2}, {2}).cast(dtypes::bfloat16).contiguous().realize());
  EXPECT_THROW(AdamW(mixed, AdamWConfig{}), Error);
  Tensor a = param({1, 2}, {2});
  ParamList twice;
  twice.add("a", a);
  twice.add("b", a);
  EXPECT_THROW(AdamW(twice, AdamWConfig{}), Error);
}

TEST(SGD, NesterovByHand) {
  // p = 1, g = 2, wd 0.5, momentum 0.5, lr 0.1: d = 2.5, buf = 2.5, step = d + 0.5*buf = 3.75
  // second step with g = 2 at p = 0.625: d = 2.3125, buf = 1.25 + 2.3125, step = d + 0.5*buf
  Tensor p = param({1}, {1});
  ParamList ps;
  ps.add("p", p);
  SGD opt(ps, SGDConfig{.lr = 0.1, .momentum = 0.5, .weight_decay = 0.5, .nesterov = true});
  p.set_grad(Tensor::from_vector<float>({2}, {1}));
  opt.step();
  EXPECT_FLOAT_EQ(p.to_vector<float>()[0], 0.625f);
  p.set_grad(Tensor::from_vector<float>({2}, {1}));
  opt.step();
  double d = 2 + 0.5 * 0.625, buf = 0.5 * 2.5 + d;
  EXPECT_FLOAT_EQ(p.to_vector<float>()[0], static_cast<float>(0.625 - 0.1 * (d + 0.5 * buf)));
}

TEST(Clip, ScalesByMaxNormOverNormPlusEpsilon) {
  // grads (3, 4) and (0): norm 5; scale 1/(5 + 1e-6)
  Tensor a = param({0, 0}, {2}), b = param({0}, {1});
  a.set_grad(Tensor::from_vector<float>({3, 4}, {2}));
  b.set_grad(Tensor::from_vector<float>({0}, {1}));
  ParamList ps;
  ps.add("a", a);
  ps.add("b", b);
  Tensor norm = clip_grad_norm(ps, 1.0);
  EXPECT_FLOAT_EQ(norm.to_vector<float>()[0], 5);
  std::vector<float> g = a.grad().to_vector<float>();
  EXPECT_FLOAT_EQ(g[0], static_cast<float>(3 / (5 + 1e-6)));
  EXPECT_FLOAT_EQ(g[1], static_cast<float>(4 / (5 + 1e-6)));
}

TEST(Clip, LeavesSmallGradientsUnscaled) {
  Tensor a = param({0, 0}, {2});
  a.set_grad(Tensor::from_vector<float>({0.3f, 0.4f}, {2}));
  ParamList ps;
  ps.add("a", a);
  EXPECT_FLOAT_EQ(clip_grad_norm(ps, 1.0).to_vector<float>()[0], 0.5f);
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{0.3f, 0.4f}));
}

TEST(LRSchedule, WarmupCosineFollowsTheMlperfFormula) {
  LRSchedule lr = warmup_cosine(4e-4, 4e-5, 16, 1200000);
  EXPECT_DOUBLE_EQ(lr(0), 4e-4 * 1 / 17);
  EXPECT_DOUBLE_EQ(lr(15), 4e-4 * 16 / 17);
  EXPECT_DOUBLE_EQ(lr(16), 4e-4);  // s = W: the last warmup step reaches base
  EXPECT_DOUBLE_EQ(lr(17), 4e-5 + (4e-4 - 4e-5) * 0.5 * (1 + std::cos(M_PI * 1 / (1200000 - 16))));
  EXPECT_NEAR(lr(600008), 4e-5 + (4e-4 - 4e-5) * 0.5, 1e-15);  // halfway
  EXPECT_DOUBLE_EQ(lr(1200000), 4e-5);
  EXPECT_DOUBLE_EQ(lr(2000000), 4e-5);
}

TEST(LRSchedule, ConstantAndWarmupStableDecay) {
  EXPECT_EQ(constant_lr(3e-4)(12345), 3e-4);
  LRSchedule wsd = warmup_stable_decay(1.0, 0.1, 3, 10, 4);
  EXPECT_DOUBLE_EQ(wsd(0), 0.25);
  EXPECT_DOUBLE_EQ(wsd(3), 1.0);
  EXPECT_DOUBLE_EQ(wsd(9), 1.0);
  EXPECT_DOUBLE_EQ(wsd(10), 1.0);
  EXPECT_DOUBLE_EQ(wsd(12), 0.55);
  EXPECT_DOUBLE_EQ(wsd(14), 0.1);
  EXPECT_DOUBLE_EQ(wsd(99), 0.1);
}

}  // namespace
}  // namespace lg::nn
