#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <utility>

#include "base/config.h"
#include "common/user_error.h"
#include "llm/micro_llama.h"
#include "llm/synthetic.h"
#include "llm/train_step.h"

namespace lg::llm {
namespace {

LlamaConfig micro() { return testing::micro_llama(); }

using Data = testing::SyntheticBatch;
Data batch(int64_t k, int64_t b, int64_t s) { return testing::synthetic_batch(k, b, s, 11); }

std::vector<double> flat(const nn::ParamList& p) {
  std::vector<double> all;
  for (const auto& [n, t] : p) {
    std::vector<double> v = t.to_doubles();
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

TrainStepOptions options(int64_t mb, int64_t accum, DType compute, bool jit) {
  TrainStepOptions o;
  o.micro_batch = mb, o.seq_len = 8, o.grad_accum = accum, o.compute = compute, o.jit = jit;
  return o;
}

// Replays run the captured kernels, so a jitted run is bit-identical to an eager one. On GPU devices
// (and their compile checks) the embedding gradient's atomic adds land in any order
// (codegen/atomic_scatter.h), so any two runs may differ in its last bits where a token repeats:
// the claim is checked with the serial scatter, whose order is fixed (ATOMIC_SCATTER=0; this
// process's first kernels, as ctest runs each test in its own).
TEST(TrainStep, JitReplayEqualsEagerBitForBit) {
  const bool atomic = std::exchange(config().atomic_scatter, false);
  std::vector<std::vector<double>> losses(2), params(2);
  for (int jit = 0; jit < 2; jit++) {
    Tensor::manual_seed(21);
    Llama m(micro());
    TrainStep ts(m, options(2, 1, dtypes::float32, jit == 1));
    for (int s = 0; s < 4; s++) {
      Data d = batch(s, 2, 8);
      StepResult r = ts.step({{d.tokens.data(), d.labels.data()}}, 1e-2);
      losses[jit].push_back(r.loss);
      losses[jit].push_back(r.grad_norm);
    }
    EXPECT_EQ(ts.optimizer().steps(), 4);
    params[jit] = flat(ts.masters());
  }
  config().atomic_scatter = atomic;
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_EQ(params[0], params[1]);
}

// The update works on flat buffers (masters, gradient sums, m, v, bf16 copies): the same few
// kernels whatever the number of layers (the norm; m, v, p and the bf16 recast as one kernel of four
// outputs, schedule/multi_output.h; the zero fill; the norm's reduction may be split in two), not
// several per parameter.
TEST(TrainStep, UpdateIsAFewKernelsWhateverTheModelSize) {
  // items of the update by accumulation (1: no zero fill, the micro step writes the sums) and layers
  std::map<int64_t, std::vector<size_t>> items;
  for (int64_t accum : {1, 2}) {
    for (int64_t layers : {1, 4}) {
      Tensor::manual_seed(23);
      LlamaConfig c = micro();
      c.n_layers = layers;
      Llama m(c);
      TrainStep ts(m, options(2, accum, dtypes::bfloat16, true));
      for (int s = 0; s < 3; s++) {
        std::vector<Data> d;
        for (int64_t a = 0; a < accum; a++) d.push_back(batch(s * 2 + static_cast<int>(a), 2, 8));
        std::vector<HostBatch> micro;
        for (const Data& x : d) micro.push_back({x.tokens.data(), x.labels.data()});
        ts.step(micro, 1e-2);
      }
      items[accum].push_back(ts.update_items());
      EXPECT_EQ(m.params().items().size(), static_cast<size_t>(3 + 9 * layers));
    }
  }
  for (size_t i = 0; i < 2; i++) {
    EXPECT_GE(items[1][i], 2u);
    EXPECT_LE(items[1][i], 3u);
    EXPECT_EQ(items[2][i], items[1][i] + 1) << "accumulation adds the zero fill of the sums";
  }
}

// Two micro-batches of 2 accumulate to the gradient of one batch of 4 (same mean loss).
TEST(TrainStep, AccumulationEqualsOneBigBatch) {
  Data d = batch(0, 4, 8);
  size_t half = d.tokens.size() / 2;
  std::vector<double> loss(2), norm(2);
  std::vector<std::vector<double>> params(2);
  for (int accum = 1; accum <= 2; accum++) {
    Tensor::manual_seed(22);
    Llama m(micro());
    TrainStep ts(m, options(4 / accum, accum, dtypes::float32, true));
    std::vector<HostBatch> micro;
    for (int a = 0; a < accum; a++) micro.push_back({d.tokens.data() + a * half * (accum - 1), d.labels.data() + a * half * (accum - 1)});
    StepResult r = ts.step(micro, 1e-2);
    loss[accum - 1] = r.loss, norm[accum - 1] = r.grad_norm;
    params[accum - 1] = flat(ts.masters());
  }
  EXPECT_NEAR(loss[0], loss[1], 1e-6);
  EXPECT_NEAR(norm[0], norm[1], 1e-6 * norm[0]);
  for (size_t i = 0; i < params[0].size(); i++) ASSERT_NEAR(params[0][i], params[1][i], 1e-6) << i;
}

// The step equals the plain recipe of docs/training.md: backward, clip, AdamW.
TEST(TrainStep, EqualsBackwardClipAdamW) {
  Data d = batch(3, 2, 8);
  Tensor::manual_seed(23);
  Llama a(micro());
  TrainStepOptions o = options(2, 1, dtypes::float32, false);
  o.clip = 0.5;
  TrainStep ts(a, o);
  StepResult r = ts.step({{d.tokens.data(), d.labels.data()}}, 3e-3);

  Tensor::manual_seed(23);
  Llama b(micro());
  nn::AdamWConfig cfg;
  cfg.lr = 3e-3;
  nn::AdamW opt(b.params(), cfg);
  Tensor tok = Tensor::from_vector(d.tokens, {2, 8}), lab = Tensor::from_vector(d.labels, {2, 8});
  Tensor loss = b.loss(tok, lab);
  loss.backward();
  Tensor norm = nn::clip_grad_norm(b.params(), 0.5);
  opt.step({loss, norm});
  EXPECT_NEAR(r.loss, loss.to_doubles()[0], 1e-6);
  EXPECT_NEAR(r.grad_norm, norm.to_doubles()[0], 1e-6 * r.grad_norm);
  EXPECT_GT(r.grad_norm, 0.5);  // the clip was active
  std::vector<double> x = flat(ts.masters()), y = flat(b.params());
  for (size_t i = 0; i < x.size(); i++) ASSERT_NEAR(x[i], y[i], 1e-6) << i;
}

TEST(TrainStep, Bfloat16ComputeLearnsAndKeepsFloat32Masters) {
  Tensor::manual_seed(24);
  Llama m(micro());
  TrainStep ts(m, options(4, 1, dtypes::bfloat16, true));
  EXPECT_EQ(m.compute_dtype(), dtypes::bfloat16);
  std::vector<double> losses;
  for (int s = 0; s < 12; s++) {
    Data d = batch(s, 4, 8);
    losses.push_back(ts.step({{d.tokens.data(), d.labels.data()}}, 1e-2).loss);
  }
  EXPECT_NEAR(losses.front(), std::log(64.0), 0.2);
  EXPECT_LT(losses.back(), losses.front() - 0.5);
  for (const auto& [n, p] : ts.masters()) EXPECT_EQ(p.dtype(), dtypes::float32) << n;
  // Evaluation with the bf16 copies: the summed loss of a batch, near the mean training loss.
  Data d = batch(100, 4, 8);
  double eval = ts.eval_loss_sum({d.tokens.data(), d.labels.data()}) / 32;
  EXPECT_NEAR(eval, losses.back(), 0.5);
}

TEST(TrainStep, BadOptionsAreUserErrors) {
  Tensor::manual_seed(25);
  Llama m(micro());
  TrainStepOptions o = options(2, 1, dtypes::float16, true);
  EXPECT_NE(testing_util::error_of([&] { TrainStep ts(m, o); }).find("bfloat16"), std::string::npos);
  o = options(2, 1, dtypes::float32, true);
  o.seq_len = 17;
  EXPECT_NE(testing_util::error_of([&] { TrainStep ts(m, o); }).find("max_seq_len"), std::string::npos);
  TrainStep ts(m, options(2, 2, dtypes::float32, true));
  Data d = batch(0, 2, 8);
  EXPECT_NE(testing_util::error_of([&] { ts.step({{d.tokens.data(), d.labels.data()}}, 1e-3); }).find("micro-batches"),
            std::string::npos);
}

}  // namespace
}  // namespace lg::llm

namespace lg::llm {
namespace {

// --optimizer none: forward and backward run (the loss is reported) and the weights stay as they are.
TEST(TrainStep, OptimizerNoneRunsForwardAndBackwardOnly) {
  Tensor::manual_seed(26);
  Llama m(micro());
  std::vector<double> before = flat(m.params());
  TrainStepOptions o = options(2, 1, dtypes::float32, true);
  o.optimizer = "none";
  TrainStep ts(m, o);
  for (int s = 0; s < 3; s++) {
    Data d = batch(s, 2, 8);
    EXPECT_NEAR(ts.step({{d.tokens.data(), d.labels.data()}}, 1e-2).loss, std::log(64.0), 0.2);
  }
  EXPECT_EQ(flat(ts.masters()), before);
  EXPECT_NE(testing_util::error_of([&] { ts.optimizer(); }).find("none"), std::string::npos);
}

}  // namespace
}  // namespace lg::llm
