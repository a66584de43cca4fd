// Data-parallel TrainStep (docs/distributed.md): the global batch split over several devices of
// this process gives the losses of a single-device run with the same global batch, the replicas
// stay bitwise equal, and bad device options are user errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "base/config.h"
#include "common/user_error.h"
#include "llm/micro_llama.h"
#include "llm/synthetic.h"
#include "llm/train_step.h"

namespace lg::llm {
namespace {

using Data = testing::SyntheticBatch;
Data batch(int64_t k, int64_t b, int64_t s) { return testing::synthetic_batch(k, b, s, 13); }

std::vector<std::string> devices(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; i++) out.push_back(config().device + ":" + std::to_string(i));
  return out;
}

std::vector<float> flat(const nn::ParamList& p) {
  std::vector<float> all;
  for (const auto& [n, t] : p) {
    std::vector<float> v = t.to_vector<float>();
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

struct Trained {
  std::vector<double> loss, norm;
  std::vector<std::vector<float>> replicas;  // each replica's final masters
};

// 10 AdamW steps of a global batch of 4 sequences (2 micro-batches of 4 when accum = 2).
Trained train(int ndev, int64_t accum, DType compute) {
  Tensor::manual_seed(31);
  Llama m(testing::micro_llama());
  TrainStepOptions o;
  o.micro_batch = 4, o.seq_len = 8, o.grad_accum = accum, o.compute = compute;
  if (ndev > 1) o.devices = devices(ndev);
  o.bucket_bytes = 20000;  // several buckets for the micro model (~60k parameters)
  TrainStep ts(m, o);
  Trained run;
  for (int s = 0; s < 10; s++) {
    std::vector<Data> data;
    std::vector<HostBatch> micro;
    for (int64_t a = 0; a < accum; a++) data.push_back(batch(s * accum + a, 4, 8));
    for (const Data& d : data) micro.push_back({d.tokens.data(), d.labels.data()});
    StepResult r = ts.step(micro, 3e-3);
    run.loss.push_back(r.loss);
    run.norm.push_back(r.grad_norm);
  }
  for (size_t k = 0; k < ts.replicas(); k++) run.replicas.push_back(flat(ts.masters(k)));
  return run;
}

void expect_same_training(const Trained& one, const Trained& many) {
  for (size_t s = 0; s < one.loss.size(); s++) {
    EXPECT_LT(std::abs(many.loss[s] - one.loss[s]) / std::abs(one.loss[s]), 1e-5) << "step " << s;
    EXPECT_LT(std::abs(many.norm[s] - one.norm[s]) / std::abs(one.norm[s]), 1e-4) << "step " << s;
  }
  for (size_t k = 1; k < many.replicas.size(); k++)
    EXPECT_EQ(std::memcmp(many.replicas[k].data(), many.replicas[0].data(), many.replicas[0].size() * 4), 0)
        << "replica " << k << " drifted from replica 0";
  for (size_t i = 0; i < one.replicas[0].size(); i++)
    ASSERT_NEAR(many.replicas[0][i], one.replicas[0][i], 1e-4) << "parameter element " << i;
}

TEST(DataParallel, FourDevicesMatchOneDevice) {
  Trained one = train(1, 1, dtypes::float32);
  Trained four = train(4, 1, dtypes::float32);
  ASSERT_EQ(four.replicas.size(), 4u);
  expect_same_training(one, four);
  EXPECT_LT(one.loss.back(), one.loss.front());  // it learns
}

TEST(DataParallel, AccumulationAndTwoDevicesMatchOneDevice) {
  Trained one = train(1, 2, dtypes::float32);
  Trained two = train(2, 2, dtypes::float32);
  expect_same_training(one, two);
}

TEST(DataParallel, Bfloat16ReplicasStayEqual) {
  Trained two = train(2, 1, dtypes::bfloat16);
  ASSERT_EQ(two.replicas.size(), 2u);
  EXPECT_EQ(two.replicas[0], two.replicas[1]);
  EXPECT_LT(two.loss.back(), two.loss.front());
}

TEST(DataParallel, BadDeviceOptionsAreUserErrors) {
  Tensor::manual_seed(1);
  Llama m(testing::micro_llama());
  TrainStepOptions o;
  o.micro_batch = 3, o.seq_len = 8;
  o.devices = devices(2);
  EXPECT_NE(testing_util::error_of([&] { TrainStep ts(m, o); }).find("multiple of 2"), std::string::npos);
  o.micro_batch = 4;
  o.devices = {devices(2)[0], devices(2)[0]};
  EXPECT_NE(testing_util::error_of([&] { TrainStep ts(m, o); }).find("listed twice"), std::string::npos);
  o.devices = devices(2);
  o.optimizer = "none";
  EXPECT_NE(testing_util::error_of([&] { TrainStep ts(m, o); }).find("needs an optimizer"), std::string::npos);
  o.optimizer = "adamw";
  o.devices = {devices(2)[1], devices(2)[0]};
  EXPECT_NE(testing_util::error_of([&] { TrainStep ts(m, o); }).find("create the model there"), std::string::npos);
}

}  // namespace
}  // namespace lg::llm
