#include "bench/kernel_bench.h"

#include <CLI/CLI.hpp>  // CLI::RuntimeError: a wrong result makes the command exit 1

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "base/error.h"
#include "bench/baselines.h"
#include "bench/timing.h"
#include "runtime/cpu.h"
#include "runtime/thread_pool.h"
#include "tensor/tensor.h"

namespace lg::bench {
namespace {

const char* kDevice = "CPU";

// One line of the table. Baseline-only lines (triad, memcpy) leave the lazygrad columns empty.
struct Row {
  std::string name, shape;
  Timing lazygrad;  // runs == 0: no lazygrad measurement on this line
  double lazygrad_rate = 0, baseline_rate = 0;
  std::string unit, baseline_name, check;
};

void print_table_header() {
  std::printf("%-9s %-28s %12s %5s %16s %24s %7s  %s\n", "name", "shape", "lazygrad ms", "runs", "lazygrad",
              "baseline", "ratio", "check");
}

void print_row(const Row& r) {
  char lg_ms[32] = "-", lg_rate[32] = "-", base[48], ratio[16] = "-", runs[8] = "-";
  if (r.lazygrad.runs > 0) {
    std::snprintf(lg_ms, sizeof lg_ms, "%.2f", r.lazygrad.median_s * 1e3);
    std::snprintf(runs, sizeof runs, "%d", r.lazygrad.runs);
    std::snprintf(lg_rate, sizeof lg_rate, "%.1f %s", r.lazygrad_rate, r.unit.c_str());
    std::snprintf(ratio, sizeof ratio, "%.3fx", r.lazygrad_rate / r.baseline_rate);
  }
  std::snprintf(base, sizeof base, "%s %.1f %s", r.baseline_name.c_str(), r.baseline_rate, r.unit.c_str());
  std::printf("%-9s %-28s %12s %5s %16s %24s %7s  %s\n", r.name.c_str(), r.shape.c_str(), lg_ms, runs,
              lg_rate, base, ratio, r.check.c_str());
  std::fflush(stdout);
}

// "ok", or "WRONG (...)" when lazygrad's result is off the reference by more than tol relative to the
// reference's largest magnitude.
std::string compare(const std::vector<float>& got, const std::vector<float>& want, double tol, bool& all_ok) {
  double max_diff = 0, max_ref = 1e-30;
  for (size_t i = 0; i < want.size(); i++) {
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(got[i]) - want[i]));
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(want[i])));
  }
  if (got.size() == want.size() && max_diff <= tol * max_ref) return "ok";
  all_ok = false;
  return str("WRONG (max |diff| ", max_diff, " vs max |ref| ", max_ref, ")");
}

Tensor random_input(const Shape& shape) { return Tensor::randn(shape, dtypes::float32, kDevice).realize(); }

// OpenBLAS's worker threads spin for a while after a call; let them go to sleep before lazygrad's
// pool runs, so the two never compete for the 2 cores.
void let_blas_threads_sleep() { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }

void bench_matmul(const MatmulShape& s, const KernelBenchOptions& o, const OpenBlas& blas, bool& all_ok) {
  Tensor a = random_input({s.m, s.k}), b = random_input({s.k, s.n});
  Tensor out;
  Timing t = time_runs(
      [&] {
        out = Tensor();
        out = a.matmul(b).realize();
      },
      o.warmup, o.repeats, o.budget_s);
  std::vector<float> got = out.to_vector<float>();
  out = Tensor();
  std::vector<float> ha = a.to_vector<float>(), hb = b.to_vector<float>(), hc(s.m * s.n);
  Timing tb = time_runs([&] { blas.sgemm(s.m, s.n, s.k, ha.data(), hb.data(), hc.data()); }, o.warmup,
                        o.repeats, o.budget_s);
  let_blas_threads_sleep();
  double flop = 2.0 * s.m * s.n * s.k;
  print_row({.name = "matmul",
             .shape = str("(", s.m, "x", s.k, ")@(", s.k, "x", s.n, ")"),
             .lazygrad = t,
             .lazygrad_rate = flop / t.median_s / 1e9,
             .baseline_rate = flop / tb.median_s / 1e9,
             .unit = "GFLOP/s",
             .baseline_name = "sgemm",
             .check = compare(got, hc, 1e-4, all_ok)});
}

// Row softmax on the host, in double, as the reference.
std::vector<float> host_softmax(const std::vector<float>& x, int64_t cols) {
  std::vector<float> y(x.size());
  for (size_t r = 0; r < x.size(); r += cols) {
    double mx = *std::max_element(x.begin() + r, x.begin() + r + cols), sum = 0;
    for (int64_t j = 0; j < cols; j++) sum += std::exp(static_cast<double>(x[r + j]) - mx);
    for (int64_t j = 0; j < cols; j++) y[r + j] = static_cast<float>(std::exp(x[r + j] - mx) / sum);
  }
  return y;
}

// Triad and memcpy over n floats of host memory: prints their lines and returns the triad's GB/s.
double bench_bandwidth_baselines(const std::vector<float>& b, const std::vector<float>& c,
                                 std::vector<float>& a, const KernelBenchOptions& o) {
  int64_t n = static_cast<int64_t>(a.size());
  Timing triad_t =
      time_runs([&] { triad(a.data(), b.data(), c.data(), 3.0f, n); }, o.warmup, o.repeats, o.budget_s);
  Timing copy_t =
      time_runs([&] { parallel_memcpy(a.data(), b.data(), n * 4); }, o.warmup, o.repeats, o.budget_s);
  double triad_gbs = 3.0 * n * 4 / triad_t.median_s / 1e9, mib = n * 4.0 / (1 << 20);
  print_row({.name = "triad",
             .shape = str("3 x ", mib, " MiB"),
             .baseline_rate = triad_gbs,
             .unit = "GB/s",
             .baseline_name = "triad"});
  print_row({.name = "memcpy",
             .shape = str("2 x ", mib, " MiB"),
             .baseline_rate = 2.0 * n * 4 / copy_t.median_s / 1e9,
             .unit = "GB/s",
             .baseline_name = "memcpy"});
  return triad_gbs;
}

// add and softmax over arrays of o.mib MiB each, against a triad (and a memcpy) over the same arrays.
// Bytes count what must move once: add reads 2 arrays and writes 1; softmax reads 1 and writes 1.
void bench_bandwidth(const KernelBenchOptions& o, bool& all_ok) {
  int64_t cols = o.softmax_cols;
  int64_t rows = std::max<int64_t>(1, static_cast<int64_t>(o.mib * (1 << 20) / 4) / cols), n = rows * cols;
  Tensor x = random_input({rows, cols}), y = random_input({rows, cols});
  std::vector<float> hx = x.to_vector<float>(), hy = y.to_vector<float>(), hout(n);
  double triad_gbs = bench_bandwidth_baselines(hx, hy, hout, o);
  Tensor out;
  if (o.only.empty() || o.only == "add") {
    Timing t = time_runs(
        [&] {
          out = Tensor();
          out = x.add(y).realize();
        },
        o.warmup, o.repeats, o.budget_s);
    for (int64_t i = 0; i < n; i++) hout[i] = hx[i] + hy[i];
    print_row({.name = "add",
               .shape = str("(", rows, "x", cols, ") f32, 3 arrays"),
               .lazygrad = t,
               .lazygrad_rate = 3.0 * n * 4 / t.median_s / 1e9,
               .baseline_rate = triad_gbs,
               .unit = "GB/s",
               .baseline_name = "triad",
               .check = compare(out.to_vector<float>(), hout, 0, all_ok)});
  }
  if (o.only.empty() || o.only == "softmax") {
    Timing t = time_runs(
        [&] {
          out = Tensor();
          out = x.softmax(-1).realize();
        },
        o.warmup, o.repeats, o.budget_s);
    print_row({.name = "softmax",
               .shape = str("(", rows, "x", cols, ") f32, rows"),
               .lazygrad = t,
               .lazygrad_rate = 2.0 * n * 4 / t.median_s / 1e9,
               .baseline_rate = triad_gbs,
               .unit = "GB/s",
               .baseline_name = "triad",
               .check = compare(out.to_vector<float>(), host_softmax(hx, cols), 1e-5, all_ok)});
  }
}

}  // namespace

MatmulShape parse_matmul_shape(const std::string& s) {
  std::vector<int64_t> dims;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = std::min(s.find('x', pos), s.size());
    std::string part = s.substr(pos, end - pos);
    bool digits = !part.empty() && part.size() <= 9 && std::all_of(part.begin(), part.end(), ::isdigit);
    LG_USER_CHECK(digits && std::stoll(part) > 0, "bench: bad matmul size '", s,
                  "': expected N (square) or MxKxN with positive integers, e.g. 1024 or 8192x512x1536");
    dims.push_back(std::stoll(part));
    pos = end + 1;
  }
  LG_USER_CHECK(dims.size() == 1 || dims.size() == 3, "bench: bad matmul size '", s,
                "': expected N (square) or MxKxN, e.g. 1024 or 8192x512x1536");
  if (dims.size() == 1) return {dims[0], dims[0], dims[0]};
  return {dims[0], dims[1], dims[2]};
}

KernelBenchOptions default_kernel_bench(bool quick) {
  KernelBenchOptions o;
  if (quick) {
    o.matmuls = {{64, 64, 64}, {128, 128, 128}, {96, 64, 200}};
    o.mib = 1;
    o.softmax_cols = 256;
    o.warmup = 1;
    o.repeats = 3;
    return o;
  }
  o.matmuls = {
      {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 512, 1536}, {2048, 512, 32000}};
  return o;
}

void run_kernel_bench(const KernelBenchOptions& o) {
  LG_USER_CHECK(o.only.empty() || o.only == "matmul" || o.only == "add" || o.only == "softmax",
                "bench: --only takes matmul, add or softmax, not '", o.only, "'");
  LG_USER_CHECK(o.repeats >= 1 && o.warmup >= 1, "bench: --repeats and --warmup must be at least 1");
  LG_USER_CHECK(o.mib > 0 && o.softmax_cols > 0, "bench: --mib must be positive");
  LG_USER_CHECK(o.budget_s > 0, "bench: --budget must be positive seconds, got ", o.budget_s);
  OpenBlas blas = load_openblas(o.blas_core);
  std::printf(
      "lazygrad: device %s, %d threads. OpenBLAS core %s (OPENBLAS_CORETYPE=%s, --blas-core %s; %s), "
      "%d threads.\nmedian of up to %d timed runs after %d warm-up (a line stops timing after %.0f s)\n",
      kDevice, threads(), blas.corename.c_str(), blas.requested.empty() ? "<unset>" : blas.requested.c_str(),
      o.blas_core.c_str(), blas.config.c_str(), blas.threads, o.repeats, o.warmup, o.budget_s);
  print_table_header();
  bool all_ok = true;
  if (o.only.empty() || o.only == "matmul")
    for (const MatmulShape& s : o.matmuls) bench_matmul(s, o, blas, all_ok);
  if (o.only != "matmul") bench_bandwidth(o, all_ok);
  std::printf("kernels compiled by this run: %zu (0 when the disk cache already held them all)\n",
              cpu_compiles());
  if (!all_ok) {
    std::fprintf(stderr, "lazygrad: error: a lazygrad result differs from the reference (check column)\n");
    throw CLI::RuntimeError(1);
  }
}

}  // namespace lg::bench
