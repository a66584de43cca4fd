// Mixed precision: float32 masters, bfloat16 compute copies made once per step, float32 gradient
// accumulation across micro-batches, float32 loss.
#include <gtest/gtest.h>

#include <cmath>

#include "nn/layers.h"
#include "nn/mixed_precision.h"
#include "nn/optim.h"

namespace lg::nn {
namespace {

const DType BF16 = dtypes::bfloat16, F32 = dtypes::float32;

bool is_buffer_view(const Tensor& t) {
  const Node* n = t.node().get();
  return n->op == Op::BUFFER || (n->op == Op::RESHAPE && n->src[0]->op == Op::BUFFER);
}

TEST(MixedPrecision, ComputeCopiesAreRealizedBfloat16OncePerStep) {
  Linear l(4, 3);
  MixedPrecision mp(l.params());
  const ParamList& w = mp.begin_step();
  EXPECT_EQ(w.at("weight").dtype(), BF16);
  EXPECT_TRUE(is_buffer_view(w.at("weight")));  // cast already done: forward passes only read it
  EXPECT_TRUE(w.at("weight").requires_grad());
  EXPECT_EQ(w.at("weight").to_doubles(), l.weight.cast(BF16).to_doubles());
  EXPECT_EQ(mp.master().at("weight").dtype(), F32);
}

TEST(MixedPrecision, GradientsAccumulateInFloat32AcrossMicroBatches) {
  // micro-batch gradients 256 and 1: their bfloat16 sum rounds to 256, the float32 sum is 257
  Tensor m = Tensor::from_vector<float>({0.5f}, {1}).contiguous().realize().requires_grad(true);
  ParamList ps;
  ps.add("w", m);
  MixedPrecision mp(ps);
  const ParamList& w = mp.begin_step();
  for (double k : {256.0, 1.0}) {
    (w.at("w") * k).cast(F32).sum().backward();
    mp.accumulate_grads();
  }
  EXPECT_EQ(m.grad().dtype(), F32);
  EXPECT_EQ(m.grad().to_vector<float>(), (std::vector<float>{257}));
  EXPECT_FALSE(w.at("w").grad().defined());  // cleared after each accumulation
}

TEST(MixedPrecision, Bfloat16StepTracksTheFloat32Gradient) {
  Tensor::manual_seed(3);
  Linear l(8, 4);
  RMSNorm n(4);
  ParamList master;
  master.add_all("l", l.params());
  master.add_all("n", n.params());
  Tensor x = Tensor::randn({6, 8}).realize();
  auto loss_of = [&](const Tensor& in) { return n(l(in)).cast(F32).square().mean(); };
  // float32 reference over the two halves of the batch
  (loss_of(x.slice(0, 0, 3)) + loss_of(x.slice(0, 3, 6))).backward();
  std::vector<double> want = l.weight.grad().to_doubles();
  l.weight.set_grad(Tensor());
  n.weight.set_grad(Tensor());

  MixedPrecision mp(master);
  const ParamList& w = mp.begin_step();
  Linear lb = l;
  RMSNorm nb = n;
  ParamList lw, nw;
  lw.add("weight", w.at("l.weight"));
  nw.add("weight", w.at("n.weight"));
  lb.bind(lw);
  nb.bind(nw);
  for (int mb = 0; mb < 2; mb++) {
    Tensor loss = nb(lb(x.slice(0, 3 * mb, 3 * mb + 3).cast(BF16))).cast(F32).square().mean();
    EXPECT_EQ(loss.dtype(), F32);
    loss.backward();
    mp.accumulate_grads();
  }
  std::vector<double> got = mp.master().at("l.weight").grad().to_doubles();
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 3e-2 * scale) << "element " << i;

  AdamW opt(mp.master(), AdamWConfig{.lr = 1e-2});
  std::vector<double> before = l.weight.to_doubles();
  opt.step();
  EXPECT_NE(l.weight.to_doubles(), before);  // the float32 masters moved
  EXPECT_EQ(mp.begin_step().at("l.weight").to_doubles(), l.weight.cast(BF16).to_doubles());
}

}  // namespace
}  // namespace lg::nn
