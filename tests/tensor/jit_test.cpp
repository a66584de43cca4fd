// Jit (tensor/jit.h): replays give the values eager calls give, schedule and lower nothing, reject
// inputs of another signature, carry parameter updates (assign) across calls, and plan intermediates
// into shared memory.
#include "tensor/jit.h"

#include <gtest/gtest.h>

#include <cstring>

#include "base/error.h"
#include "runtime/buffer.h"
#include "runtime/host_allocator.h"
#include "runtime/realize.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

void expect_same_values(const Tensor& got, const Tensor& want, double tol = 1e-5) {
  ASSERT_EQ(got.shape(), want.shape());
  std::vector<double> g = got.to_doubles(), w = want.to_doubles();
  for (size_t i = 0; i < g.size(); i++)
    EXPECT_NEAR(g[i], w[i], tol * (1 + std::abs(w[i]))) << "element " << i;
}

// A two-layer MLP head: in[0] is x (4, 8); returns (per-row score (4), total ()).
struct Mlp {
  Tensor w1 = Tensor::randn({8, 16}).realize();
  Tensor w2 = Tensor::randn({16, 3}).realize();
  std::vector<Tensor> operator()(const std::vector<Tensor>& in) const {
    Tensor h = in[0].matmul(w1).relu();  // (4, 16)
    Tensor score = h.matmul(w2).sum(1);  // (4)
    return {score, score.sum()};
  }
};

Tensor new_input() { return Tensor::randn({4, 8}).realize(); }

TEST(Jit, ReplayOfSmallMlpMatchesEagerOnNewInputs) {
  Tensor::manual_seed(1);
  Mlp mlp;
  Jit step(mlp);
  for (int call = 0; call < 6; call++) {
    Tensor x = new_input();
    std::vector<Tensor> got = step({x});
    std::vector<Tensor> want = mlp({x});
    ASSERT_EQ(got.size(), 2u);
    expect_same_values(got[0], want[0]);
    expect_same_values(got[1], want[1]);
  }
  EXPECT_TRUE(step.captured());
  EXPECT_EQ(step.calls(), 6u);
}

TEST(Jit, ReplaySchedulesAndLowersNothing) {
  Tensor::manual_seed(2);
  Mlp mlp;
  Jit step(mlp);
  step({new_input()});
  step({new_input()});
  Tensor x = new_input();
  size_t schedules = schedules_created(), programs = programs_built();
  std::vector<Tensor> got = step({x});
  EXPECT_EQ(schedules_created(), schedules);
  EXPECT_EQ(programs_built(), programs);
  EXPECT_GE(step.captured_items(), 2u);
  expect_same_values(got[1], mlp({x})[1]);
}

std::string error_of(Jit& step, const std::vector<Tensor>& inputs) {
  try {
    step(inputs);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Jit, ReplayRejectsInputsOfAnotherSignature) {
  Tensor::manual_seed(3);
  Mlp mlp;
  Jit step(mlp);
  step({new_input()});
  step({new_input()});
  std::string shape = error_of(step, {Tensor::randn({5, 8}).realize()});
  EXPECT_NE(shape.find("input 0 has shape (5, 8)"), std::string::npos) << shape;
  EXPECT_NE(shape.find("(4, 8)"), std::string::npos) << shape;
  std::string dtype = error_of(step, {Tensor::zeros({4, 8}, dtypes::int32).realize()});
  EXPECT_NE(dtype.find("input 0 has dtype i32"), std::string::npos) << dtype;
  std::string count = error_of(step, {new_input(), new_input()});
  EXPECT_NE(count.find("called with 2 inputs"), std::string::npos) << count;
  // A rejected call leaves the capture usable.
  Tensor x = new_input();
  expect_same_values(step({x})[1], mlp({x})[1]);
}

TEST(Jit, FunctionBodyRunsOnlyForTheEagerAndCaptureCalls) {
  int runs = 0;
  Jit step([&runs](const std::vector<Tensor>& in) {
    runs++;
    return std::vector<Tensor>{in[0] + 1};
  });
  for (int call = 0; call < 5; call++) {
    std::vector<double> got = step({Tensor::full({2}, call).realize()})[0].to_doubles();
    EXPECT_EQ(got, (std::vector<double>{call + 1.0, call + 1.0}));
  }
  EXPECT_EQ(runs, 2);
}

TEST(Jit, CaptureThatThrowsIsRetriedOnTheNextCall) {
  int runs = 0;
  Jit step([&runs](const std::vector<Tensor>& in) {
    if (++runs == 2) throw Error("failing on purpose");
    return std::vector<Tensor>{in[0] * 2};
  });
  step({Tensor::full({3}, 1).realize()});
  EXPECT_THROW(step({Tensor::full({3}, 1).realize()}), Error);
  EXPECT_FALSE(step.captured());
  step({Tensor::full({3}, 2).realize()});  // captures
  EXPECT_TRUE(step.captured());
  EXPECT_EQ(step({Tensor::full({3}, 4).realize()})[0].to_doubles(), (std::vector<double>{8, 8, 8}));
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(step.calls(), 3u);
}

// p <- p/2 + x (an ASSIGN realized inside the function); returns 2p.
Jit::Fn decaying_sum(Tensor& p) {
  return [&p](const std::vector<Tensor>& in) {
    p.assign(p * 0.5 + in[0]).realize();
    return std::vector<Tensor>{p * 2};
  };
}

TEST(Jit, AssignedParameterMatchesEagerAcrossReplays) {
  Tensor::manual_seed(4);
  Tensor p_jit = Tensor::zeros({6}).realize(), p_eager = Tensor::zeros({6}).realize();
  Jit step(decaying_sum(p_jit));
  Jit::Fn eager = decaying_sum(p_eager);
  for (int call = 0; call < 5; call++) {
    Tensor x = Tensor::randn({6}).realize();
    Tensor got = step({x})[0];
    Tensor want = eager({x})[0];
    expect_same_values(got, want);
    expect_same_values(p_jit, p_eager);
  }
  EXPECT_NE(p_jit.to_doubles()[0], 0.0);
}

// Compared with host values, not an eager twin: eagerly, a second assign() over a still-pending
// one re-runs the first (reported separately); the Jit realizes pending assigns before capturing.
TEST(Jit, AssignLeftPendingByTheFunctionIsReplayed) {
  Tensor::manual_seed(9);
  Tensor p = Tensor::zeros({6}).realize();
  Jit step([&p](const std::vector<Tensor>& in) {
    p.assign(p * 0.5 + in[0]);  // not realized, and no output depends on it
    return std::vector<Tensor>{in[0] * 2};
  });
  std::vector<double> want(6, 0.0);
  for (int call = 0; call < 5; call++) {
    Tensor x = Tensor::randn({6}).realize();
    std::vector<double> xs = x.to_doubles();
    std::vector<double> out = step({x})[0].to_doubles();
    for (size_t i = 0; i < want.size(); i++) {
      want[i] = want[i] * 0.5 + xs[i];
      EXPECT_NEAR(out[i], 2 * xs[i], 1e-6);
    }
    if (call >= 1) {  // call 1 (eager) leaves its assign pending until the capture call realizes it
      std::vector<double> got = p.to_doubles();
      for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-5) << "call " << call;
    }
  }
}

// Six realized steps: y_{k+1} = contiguous(y_k * 1.5 + 0.25). Each intermediate lives for two items.
std::vector<Tensor> chain(const std::vector<Tensor>& in) {
  Tensor y = in[0];
  for (int k = 0; k < 6; k++) y = (y * 1.5 + 0.25).contiguous();
  return {y};
}

TEST(Jit, IntermediatesOfAChainShareMemory) {
  Tensor::manual_seed(5);
  Jit step(chain);
  const size_t bytes = 4 * 16 * sizeof(float);
  for (int call = 0; call < 4; call++) {
    Tensor x = Tensor::randn({4, 16}).realize();
    expect_same_values(step({x})[0], chain({x})[0]);
  }
  EXPECT_EQ(step.captured_items(), 6u);
  EXPECT_EQ(step.intermediate_bytes(), 5 * bytes);  // y1..y5; y6 is the output and keeps its buffer
  EXPECT_EQ(step.planned_bytes(), 2 * bytes);       // y_k and y_{k+1} are never live with y_{k+2}
}

TEST(Jit, CaptureReleasesTheIntermediatesOwnMemory) {
  Tensor::manual_seed(10);
  Jit step(chain);
  Tensor x = Tensor::randn({4, 16}).realize();
  step({x});
  size_t before = buffer_bytes_in_use();
  Tensor out = step({x})[0];  // the capture: only the output's buffer stays allocated
  EXPECT_EQ(buffer_bytes_in_use(), before + 4 * 16 * sizeof(float));
  expect_same_values(out, chain({x})[0]);
}

// A float32 tensor's values, read without a conversion kernel (no buffer but the tensor's own).
std::vector<float> floats(const Tensor& t) {
  std::vector<uint8_t> raw = t.to_host();
  std::vector<float> v(raw.size() / sizeof(float));
  std::memcpy(v.data(), raw.data(), raw.size());
  return v;
}

// On the CPU device the arena is a size the step never allocated: it is made of the pages of the
// capture's own intermediates, freed before the plan allocates it (runtime/host_allocator.h).
TEST(Jit, OnTheCpuDeviceTheArenaTakesTheCapturesFreedPages) {
  Tensor::manual_seed(11);
  const size_t bytes = 1024 * 1024 * sizeof(float);  // 4 MiB: mappings advised as huge pages
  std::vector<Tensor> xs;
  std::vector<std::vector<float>> want;
  for (int call = 0; call < 4; call++) {
    xs.push_back(Tensor::randn({1024, 1024}, dtypes::float32, "CPU").realize());
    want.push_back(floats(chain({xs.back()})[0]));
  }
  HostAllocator::release_pool();
  Jit step(chain);
  std::vector<HostAllocator::Stats> d;  // per call: what the allocator did during it
  for (int call = 0; call < 4; call++) {
    HostAllocator::Stats before = HostAllocator::stats();
    std::vector<float> got = floats(step({xs[static_cast<size_t>(call)]})[0]);
    HostAllocator::Stats after = HostAllocator::stats();
    d.push_back({after.fresh - before.fresh, after.reused - before.reused, after.recycled - before.recycled,
                 after.pooled});
    for (size_t i = 0; i < got.size(); i += 4099)
      ASSERT_NEAR(got[i], want[static_cast<size_t>(call)][i],
                  1e-4 * (1 + std::abs(want[static_cast<size_t>(call)][i])))
          << "call " << call;
  }
  // Each y_k is freed once y_{k+1} has read it (the output once its tensor dies), so a call takes
  // the pool's mappings back as y_{k+2}. Eager: y1 and y2 fresh, y3..y6 reused; y5 and y6 pooled.
  EXPECT_EQ(d[0].fresh, 2 * bytes);
  EXPECT_EQ(d[0].reused, 4 * bytes);
  // Capture: y1..y6 reused, y6 kept as the output; then the plan's arena (2 x 4 MiB), a size never
  // allocated before: the pool holds y5's mapping, whose pages become its first half.
  EXPECT_EQ(step.planned_bytes(), 2 * bytes);
  EXPECT_EQ(d[1].reused, 6 * bytes);
  EXPECT_EQ(d[1].recycled, bytes);
  EXPECT_EQ(d[1].fresh, bytes);
  for (size_t call = 2; call < 4; call++) {  // replays allocate nothing
    EXPECT_EQ(d[call].fresh + d[call].reused + d[call].recycled, 0u) << "call " << call;
  }
}

TEST(Jit, OutputViewOfAnInputFollowsTheNewInput) {
  Tensor::manual_seed(6);
  Jit step([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0].reshape({8, 2}), in[0] * 3};
  });
  for (int call = 0; call < 4; call++) {
    Tensor x = Tensor::randn({4, 4}).realize();
    std::vector<Tensor> got = step({x});
    expect_same_values(got[0], x.reshape({8, 2}));
    expect_same_values(got[1], x * 3);
  }
}

TEST(Jit, ReplaysReuseTheOutputBuffer) {
  Tensor::manual_seed(7);
  Jit step([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1}; });
  step({Tensor::zeros({3}).realize()});
  step({Tensor::zeros({3}).realize()});
  Tensor a = step({Tensor::full({3}, 1).realize()})[0];
  Tensor b = step({Tensor::full({3}, 5).realize()})[0];
  EXPECT_EQ(view_base(a.node().get()), view_base(b.node().get()));
  EXPECT_EQ(a.to_doubles(), (std::vector<double>{6, 6, 6}));  // overwritten by the later replay
}

TEST(Jit, RandomNumbersInsideAreFrozenAtCapture) {
  Tensor::manual_seed(8);
  Jit step([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + Tensor::rand({5})}; });
  Tensor zero = Tensor::zeros({5}).realize();
  std::vector<double> eager = step({zero})[0].to_doubles();
  std::vector<double> captured = step({zero})[0].to_doubles();
  RngPosition before = Tensor::rng_position();
  std::vector<double> replayed = step({zero})[0].to_doubles();
  EXPECT_NE(eager, captured);     // each traced call draws new counters
  EXPECT_EQ(replayed, captured);  // replays reuse the captured call's counters
  EXPECT_EQ(Tensor::rng_position().offset, before.offset);
}

}  // namespace
}  // namespace lg
