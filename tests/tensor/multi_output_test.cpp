// Kernels of several outputs (schedule/multi_output.h) compute what separate kernels compute: an
// optimizer-shaped update against a host reference and against MULTI_OUTPUT=0, replayed by the
// Jit, and searched by BEAM, whose timing runs must leave the real buffers as they were.
#include <gtest/gtest.h>

#include <cmath>

#include "base/config.h"
#include "ir/build.h"
#include "runtime/device.h"
#include "schedule/schedule.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"

namespace lg {
namespace {

constexpr int64_t kN = 1000;  // not a multiple of the 16-lane vectors: the tail runs too

struct State {
  Tensor p, m, v, half;
};

State fresh_state(int64_t n = kN) {
  Tensor::manual_seed(5);
  return {Tensor::randn({n}).realize(), (Tensor::randn({n}) * 0.1).realize(), Tensor::rand({n}).realize(),
          Tensor::zeros({n}, dtypes::bfloat16).contiguous().realize()};
}

// AdamW's shape: m and v from g, p from their new values, a 16-bit copy of the new p.
std::vector<Tensor> update(State& s, const Tensor& g) {
  Tensor m = s.m.assign(s.m * 0.9f + g * 0.1f);
  Tensor v = s.v.assign(s.v * 0.95f + g * g * 0.05f);
  Tensor p = s.p.assign(s.p - m * 0.01f / (v.sqrt() + 1e-8f));
  Tensor half = s.half.assign(p.cast(dtypes::bfloat16));
  return {m, v, p, half};
}

// The same in float32 on the host, in the same order of operations.
void host_update(std::vector<float>& p, std::vector<float>& m, std::vector<float>& v,
                 const std::vector<float>& g) {
  for (size_t i = 0; i < p.size(); i++) {
    m[i] = m[i] * 0.9f + g[i] * 0.1f;
    v[i] = v[i] * 0.95f + g[i] * g[i] * 0.05f;
    p[i] = p[i] - m[i] * 0.01f / (std::sqrt(v[i]) + 1e-8f);
  }
}

size_t kernels_of(const std::vector<Tensor>& ts) {
  std::vector<NodeRef> roots;
  for (const Tensor& t : ts) roots.push_back(t.node());
  return create_schedule(make(Op::SINK, dtypes::void_, std::move(roots))).items.size();
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++)
    ASSERT_NEAR(got[i], want[i], 1e-6 * (1 + std::abs(want[i]))) << what << " element " << i;
}

TEST(MultiOutput, AnOptimizerUpdateIsOneKernelAndMatchesTheHost) {
  State s = fresh_state();
  Tensor g = Tensor::randn({kN}).realize();
  std::vector<float> p = s.p.to_vector<float>(), m = s.m.to_vector<float>(), v = s.v.to_vector<float>();
  std::vector<Tensor> outs = update(s, g);
  EXPECT_EQ(kernels_of(outs), 1u);
  Tensor::realize(outs);
  host_update(p, m, v, g.to_vector<float>());
  expect_near_all(s.m.to_vector<float>(), m, "m");
  expect_near_all(s.v.to_vector<float>(), v, "v");
  expect_near_all(s.p.to_vector<float>(), p, "p");
  std::vector<double> half = s.half.to_doubles(), want = s.p.cast(dtypes::bfloat16).to_doubles();
  for (int64_t i = 0; i < kN; i++) ASSERT_EQ(half[i], want[i]) << "bf16 copy element " << i;
}

TEST(MultiOutput, GivesTheBitsOfOneKernelPerOutput) {
  std::vector<std::vector<double>> got[2];
  for (int on = 0; on < 2; on++) {
    config().multi_output = on == 1;
    State s = fresh_state();
    Tensor g = Tensor::randn({kN}).realize();
    std::vector<Tensor> outs = update(s, g);
    EXPECT_EQ(kernels_of(outs), on ? 1u : 4u);
    Tensor::realize(outs);
    for (const Tensor& t : {s.p, s.m, s.v, s.half}) got[on].push_back(t.to_doubles());
  }
  config().multi_output = true;
  for (size_t k = 0; k < got[0].size(); k++)
    for (size_t i = 0; i < got[0][k].size(); i++)
      ASSERT_EQ(got[0][k][i], got[1][k][i]) << "output " << k << " element " << i;
}

TEST(MultiOutput, JitReplaysTheKernelWithNewInputs) {
  State s = fresh_state();
  std::vector<float> p = s.p.to_vector<float>(), m = s.m.to_vector<float>(), v = s.v.to_vector<float>();
  Jit step([&](const std::vector<Tensor>& in) {
    Tensor::realize(update(s, in[0]));
    return std::vector<Tensor>{};
  });
  for (int call = 0; call < 4; call++) {
    Tensor g = Tensor::randn({kN}).realize();
    step({g});
    host_update(p, m, v, g.to_vector<float>());
    expect_near_all(s.p.to_vector<float>(), p, "p");
    expect_near_all(s.v.to_vector<float>(), v, "v");
  }
  EXPECT_TRUE(step.captured());
  EXPECT_EQ(step.captured_items(), 1u);
}

// BEAM times every candidate on scratch outputs, which start from the outputs' current values (the
// kernel reads them: an in-place update) and are checked after a run from there; the real m, v, p
// and the bf16 copy are written once. Without the disk cache, so the search runs every time.
TEST(MultiOutput, BeamSearchesIntoScratchOutputs) {
  if (canonical_device(config().device) != "CPU")
    GTEST_SKIP() << "BEAM's CPU space (device " << config().device << ")";
  // A size of its own: the other tests' kernel may already be in this process's program cache.
  constexpr int64_t n = kN + 16;
  State s = fresh_state(n);
  Tensor g = Tensor::randn({n}).realize();
  std::vector<float> p = s.p.to_vector<float>(), m = s.m.to_vector<float>(), v = s.v.to_vector<float>();
  std::vector<Tensor> outs = update(s, g);
  config().beam = 1, config().cache = false, config().debug = 2;
  testing::internal::CaptureStderr();
  Tensor::realize(outs);
  std::string err = testing::internal::GetCapturedStderr();
  config().beam = 0, config().cache = true, config().debug = 0;
  EXPECT_NE(err.find("beam E_1016: "), std::string::npos) << err;
  EXPECT_NE(err.find("(0 with other values)"), std::string::npos) << err;
  host_update(p, m, v, g.to_vector<float>());
  expect_near_all(s.m.to_vector<float>(), m, "m");
  expect_near_all(s.v.to_vector<float>(), v, "v");
  expect_near_all(s.p.to_vector<float>(), p, "p");
}

// A row reduction with what reads it row by row (schedule/multi_output.h "Row consumers"): a value
// per row (log of the row sum) and the row's elements (x / sum) are, on the CPU and INTERP, one
// kernel of three outputs that reads x once, with the bits of a kernel each; GPU row kernels keep
// them apart. Against the host, in float64, and then searched by BEAM (CPU), whose candidates
// must store the row values once per row too.
TEST(MultiOutput, ARowSumAndItsRowConsumersAreOneKernelOnTheCpu) {
  constexpr int64_t rows = 8, cols = 1000;  // not a multiple of the 16-lane vectors
  std::string dev = canonical_device(config().device);
  bool together = dev == "CPU" || dev == "INTERP";
  std::vector<std::vector<double>> got[2];
  Tensor::manual_seed(11);
  Tensor x = Tensor::randn({rows, cols}).realize();
  for (int on = 0; on < 2; on++) {
    config().multi_output = on == 1;
    Tensor sum = x.exp().sum(-1, true);
    std::vector<Tensor> outs{sum, x / sum, sum.log()};
    EXPECT_EQ(kernels_of(outs), on && together ? 1u : 3u) << dev;
    Tensor::realize(outs);
    for (const Tensor& t : outs) got[on].push_back(t.to_doubles());
  }
  config().multi_output = true;
  for (size_t k = 0; k < got[0].size(); k++) EXPECT_EQ(got[0][k], got[1][k]) << "output " << k;
  std::vector<double> xs = x.to_doubles();
  for (int64_t r = 0; r < rows; r++) {
    double s = 0;
    for (int64_t c = 0; c < cols; c++) s += std::exp(xs[r * cols + c]);
    ASSERT_NEAR(got[1][0][r], s, 1e-5 * s) << "row sum " << r;
    ASSERT_NEAR(got[1][2][r], std::log(s), 1e-6 * (1 + std::log(s))) << "log of row " << r;
    for (int64_t c = 0; c < cols; c++)
      ASSERT_NEAR(got[1][1][r * cols + c], xs[r * cols + c] / s, 1e-6) << "element " << r << ", " << c;
  }
  if (dev != "CPU") return;
  config().beam = 1, config().cache = false;
  Tensor y = x + 1.0f;  // a kernel of its own shape of values: not in this process's program cache
  Tensor sum = y.exp().sum(-1, true);
  std::vector<Tensor> outs{sum, y / sum, sum.log()};
  Tensor::realize(outs);
  config().beam = 0, config().cache = true;
  std::vector<double> s1 = outs[0].to_doubles(), q = outs[1].to_doubles(), l = outs[2].to_doubles();
  for (int64_t r = 0; r < rows; r++) {
    ASSERT_NEAR(s1[r], got[1][0][r] * std::exp(1.0), 1e-5 * s1[r]) << "BEAM row sum " << r;
    ASSERT_NEAR(l[r], got[1][2][r] + 1.0, 1e-6 * (1 + l[r])) << "BEAM log of row " << r;
    for (int64_t c = 0; c < cols; c++)
      ASSERT_NEAR(q[r * cols + c], (xs[r * cols + c] + 1) / s1[r], 1e-6) << "BEAM element " << r << ", " << c;
  }
}

}  // namespace
}  // namespace lg
