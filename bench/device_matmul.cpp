#include "bench/device_matmul.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "base/error.h"
#include "bench/device_dtype.h"
#include "bench/matmul_probe.h"
#include "codegen/opt.h"
#include "runtime/device.h"
#include "schedule/schedule.h"
#include "tensor/tensor.h"

namespace lg::bench {

const char* tensor_core_kind(const Tensor& t) {
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {t.node()}));
  const char* kind = "no";
  for (const ScheduleItem& item : s.items)
    if (item.kind == ScheduleItem::Kind::Kernel)
      for (const Opt& opt : get_device(t.device()).heuristic_opts(item.ast)) {
        if (opt.kind == OptKind::BLOCK_MMA) return "block";
        if (opt.kind == OptKind::TC) kind = "tc";
      }
  return kind;
}

// The product checked at `samples` entries against a float64 sum over the inputs as stored (a, b
// and out read back to the host): the largest error relative to 1 + |reference|, and whether it is
// within the output's rounding (2^-7 relative for bf16, 2^-10 for fp16, 1e-4 for fp32, doubled).
struct Check {
  double max_rel = 0;
  bool ok = true;
};
static Check check_product(const Tensor& a, const Tensor& b, const Tensor& out, int64_t n, DType t, int samples) {
  std::vector<double> ha = a.to_doubles(), hb = b.to_doubles(), ho = out.to_doubles();
  double tol = t == dtypes::bfloat16 ? 2.0 / 128 : t == dtypes::float16 ? 2.0 / 1024 : 2e-4;
  Check c;
  uint64_t x = 0x9e3779b97f4a7c15ull;  // a fixed walk over the entries (xorshift)
  for (int s = 0; s < samples; s++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int64_t i = static_cast<int64_t>(x % static_cast<uint64_t>(n)), j = static_cast<int64_t>((x >> 32) % static_cast<uint64_t>(n));
    double ref = 0;
    for (int64_t k = 0; k < n; k++) ref += ha[i * n + k] * hb[k * n + j];
    double rel = std::abs(ho[i * n + j] - ref) / (1.0 + std::abs(ref));
    c.max_rel = std::max(c.max_rel, rel);
    c.ok = c.ok && rel <= tol;
  }
  return c;
}

void run_device_matmul(const DeviceMatmulOptions& o) {
  if (o.probe) return run_matmul_probe(o);
  DType t = device_bench_dtype(o.dtype, "matmul");
  LG_USER_CHECK(o.repeats >= 1, "bench matmul: --repeats must be at least 1");
  for (int64_t n : o.sizes) {
    LG_USER_CHECK(n >= 1, "bench matmul: sizes must be positive, got ", n);
    Tensor a = Tensor::randn({n, n}, t, o.device).realize(), b = Tensor::randn({n, n}, t, o.device).realize();
    if (o.a_transposed) a = a.transpose();
    if (o.b_transposed) b = b.transpose();
    auto wait = [](const Tensor& x) { x.shrink({{0, 1}, {0, 1}}).to_doubles(); };
    const char* tc = tensor_core_kind(a.matmul(b));
    Tensor out = a.matmul(b).realize();  // compiles
    wait(out);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < o.repeats; i++) out = a.matmul(b).realize();
    wait(out);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / o.repeats;
    // CUDANULL runs no kernel (runtime/compile_check.h): nothing to check.
    bool null_device = canonical_device(o.device).rfind("CUDANULL", 0) == 0;
    Check c = null_device ? Check{} : check_product(a, b, out, n, t, 64);
    std::printf("matmul %s %s N=%lld%s%s ms=%.3f tflops=%.2f tensor_cores=%s kernel=%s check=%s max_rel_err=%.2e\n",
                o.device.c_str(), o.dtype.c_str(), static_cast<long long>(n), o.a_transposed ? " a=X^T" : "",
                o.b_transposed ? " b=W^T" : "", s * 1e3, 2.0 * n * n * n / s / 1e12,
                std::string(tc) == "no" ? "no" : "yes", tc,
                null_device ? "none" : c.ok ? "ok" : "FAIL", c.max_rel);
    std::fflush(stdout);
    if (!c.ok) user_error("bench matmul: the ", o.dtype, " product at N=", n, " on ", o.device,
                          " is wrong at some sampled entries (largest relative error ", c.max_rel, ")");
  }
}

}  // namespace lg::bench
