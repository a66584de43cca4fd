#include "bench/optimizer_bench.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/config.h"
#include "base/error.h"
#include "bench/baselines.h"
#include "bench/timing.h"
#include "nn/optim.h"
#include "runtime/device.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"

namespace lg::bench {
namespace {

constexpr double kBytesPerParam = 4 * 4 + 3 * 4 + 2;

struct WayResult {
  Timing timing;
  size_t kernels = 0;
  int64_t checksum = 0;  // of the parameters' bits after the three checked updates
};

// One way (fused or apart) at one size: a fresh AdamW over one parameter of n elements with a
// fixed gradient; three updates (eager, capture, first replay) for the check, then the timed ones.
WayResult run_way(const OptimizerBenchOptions& o, int64_t n, bool fused) {
  config().multi_output = fused;
  Tensor::manual_seed(7);
  nn::ParamList ps;
  ps.add("w", Tensor::randn({n}, dtypes::float32, o.device).realize());
  nn::AdamW opt(ps, nn::AdamWConfig{.lr = 1e-3});
  Shape flat = opt.flat_params().shape();  // n, padded to the layout's alignment
  Tensor compute = Tensor::zeros(flat, dtypes::bfloat16, o.device).contiguous().realize();
  Tensor(opt.grads()).assign(Tensor::randn(flat, dtypes::float32, o.device) * 0.01f).realize();
  Jit update([&](const std::vector<Tensor>& in) {
    std::vector<Tensor> outs = opt.build_step(in[0]);
    outs.push_back(compute.assign(opt.flat_params().cast(dtypes::bfloat16)));
    Tensor::realize(outs);
    return std::vector<Tensor>{};
  });
  auto wait = [&] { opt.flat_params().shrink({{0, 1}}).to_doubles(); };  // a read waits for the device
  auto step = [&] {
    update({opt.upload_scalars()});
    wait();
  };
  WayResult r;
  for (int i = 0; i < 3; i++) step();
  // The sum of the parameters' bit patterns as integers, on the device: equal parameters give equal
  // sums, and a single differing bit changes it (no host copy of a billion parameters).
  r.checksum = opt.flat_params().bitcast(dtypes::int32).cast(dtypes::int64).sum().to_vector<int64_t>().at(0);
  r.kernels = update.captured_items();
  r.timing = time_runs(step, 0, o.repeats, o.budget_s);
  config().multi_output = true;
  return r;
}

double triad_gbs(int64_t n, const OptimizerBenchOptions& o) {
  std::vector<float> a(static_cast<size_t>(n)), b(a.size(), 1.0f), c(a.size(), 2.0f);
  Timing t = time_runs([&] { triad(a.data(), b.data(), c.data(), 3.0f, n); }, 1, o.repeats, o.budget_s);
  return 3.0 * 4 * static_cast<double>(n) / t.median_s / 1e9;
}

}  // namespace

void run_optimizer_bench(const OptimizerBenchOptions& o) {
  LG_USER_CHECK(o.repeats >= 1, "bench optimizer: --repeats must be at least 1");
  LG_USER_CHECK(o.budget_s > 0, "bench optimizer: --budget must be positive seconds, got ", o.budget_s);
  LG_USER_CHECK(!o.params.empty(), "bench optimizer: --params needs at least one size");
  std::string dev = canonical_device(o.device);
  bool cpu = dev.rfind("CPU", 0) == 0;
  if (dev.rfind("CUDANULL", 0) == 0 || dev.rfind("HIPNULL", 0) == 0)
    std::fprintf(stderr, "%s runs no kernel (a compile check): the times printed are meaningless\n",
                 dev.c_str());
  bool check_failed = false;
  for (int64_t n : o.params) {
    LG_USER_CHECK(n >= 1, "bench optimizer: --params sizes must be positive, got ", n);
    WayResult ways[2] = {run_way(o, n, true), run_way(o, n, false)};
    for (int w = 0; w < 2; w++) {
      double ms = ways[w].timing.median_s * 1e3;
      std::printf("optimizer %s params=%lld outputs=%s kernels=%zu ms=%.3f gbs=%.1f\n", dev.c_str(),
                  static_cast<long long>(n), w == 0 ? "fused" : "apart", ways[w].kernels, ms,
                  kBytesPerParam * static_cast<double>(n) / ways[w].timing.median_s / 1e9);
    }
    bool same = ways[0].checksum == ways[1].checksum;
    if (!same) {
      std::printf(
          "optimizer %s params=%lld check=FAIL: the fused and the apart update leave other parameters\n",
          dev.c_str(), static_cast<long long>(n));
      check_failed = true;
      continue;
    }
    std::printf("ratio apart/fused params=%lld %.3fx", static_cast<long long>(n),
                ways[1].timing.median_s / ways[0].timing.median_s);
    if (cpu) {
      double triad = triad_gbs(n, o);
      double fused_gbs = kBytesPerParam * static_cast<double>(n) / ways[0].timing.median_s / 1e9;
      std::printf("  fused/triad %.3fx (triad %.1f GB/s)", fused_gbs / triad, triad);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  if (check_failed) std::exit(1);
}

}  // namespace lg::bench
