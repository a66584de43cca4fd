#include "bench/device_attention.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>

#include "base/error.h"
#include "bench/device_dtype.h"
#include "runtime/device.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"

namespace lg::bench {
namespace {

struct Shape4 {
  int64_t B, H, KV, S, D;
};

// Attention from matmul and softmax, as the Llama model builds it (scores in float32).
Tensor matmul_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Shape4& s, bool causal) {
  int64_t rep = s.H / s.KV;
  auto spread = [&](const Tensor& x) {  // (B, KV, S, D) -> (B, H, S, D), kv heads broadcast
    return x.reshape({s.B, s.KV, 1, s.S, s.D}).expand({s.B, s.KV, rep, s.S, s.D}).reshape({s.B, s.H, s.S, s.D});
  };
  Tensor x = q.matmul(spread(k).transpose(-2, -1)).cast(dtypes::float32) * (1.0 / std::sqrt(static_cast<double>(s.D)));
  if (causal) {
    Tensor pos = Tensor::arange(0, s.S, 1, dtypes::int32, q.device());
    x = pos.unsqueeze(1).lt(pos.unsqueeze(0)).where(x.scalar_like(-INFINITY).expand(x.shape()), x);
  }
  return x.softmax(-1).cast(q.dtype()).matmul(spread(v));
}

// Rows (b, h, s) of the attention output from the inputs read back, in float64.
struct Reference {
  std::vector<double> q, k, v;
  Shape4 s;
  bool causal;
  std::vector<double> row(int64_t b, int64_t h, int64_t i) const {
    int64_t g = h / (s.H / s.KV), n = causal ? i + 1 : s.S;
    const double* qr = &q[static_cast<size_t>(((b * s.H + h) * s.S + i) * s.D)];
    std::vector<double> x(static_cast<size_t>(n));
    double m = -INFINITY, l = 0;
    for (int64_t t = 0; t < n; t++) {
      const double* kr = &k[static_cast<size_t>(((b * s.KV + g) * s.S + t) * s.D)];
      double dot = 0;
      for (int64_t e = 0; e < s.D; e++) dot += qr[e] * kr[e];
      x[t] = dot / std::sqrt(static_cast<double>(s.D));
      m = std::max(m, x[t]);
    }
    std::vector<double> o(static_cast<size_t>(s.D), 0.0);
    for (int64_t t = 0; t < n; t++) {
      double p = std::exp(x[t] - m);
      l += p;
      const double* vr = &v[static_cast<size_t>(((b * s.KV + g) * s.S + t) * s.D)];
      for (int64_t e = 0; e < s.D; e++) o[e] += p * vr[e];
    }
    for (double& e : o) e /= l;
    return o;
  }
};

struct PathTiming {
  double fwd_s = 0, step_s = 0;
  Tensor out;
};

// Mean seconds per forward, and per forward plus the gradients of q, k and v, each captured by a
// Jit and replayed (no scheduling on the host inside the timed runs; tensor/jit.h).
PathTiming time_path(const std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>& forward, const Tensor& q,
                 const Tensor& k, const Tensor& v, int repeats) {
  auto wait = [](const Tensor& x) { x.reshape({-1}).shrink({{0, 1}}).to_doubles(); };
  auto mean_s = [&](Jit& fn) {
    Tensor last;
    for (int i = 0; i < 2; i++) last = fn({q, k, v})[0];  // eager (compiles), then captured
    wait(last);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < repeats; i++) last = fn({q, k, v})[0];
    wait(last);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / repeats;
  };
  Jit fwd([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{forward(in[0], in[1], in[2]).realize()}; });
  Jit step([&](const std::vector<Tensor>& in) {
    std::vector<Tensor> g = Tensor::gradients(forward(in[0], in[1], in[2]).cast(dtypes::float32).sum(), in);
    Tensor::realize(g);
    return g;
  });
  PathTiming t;
  t.fwd_s = mean_s(fwd);
  t.out = fwd({q, k, v})[0].contiguous().realize();
  t.step_s = mean_s(step);
  return t;
}

}  // namespace

void run_device_attention(const DeviceAttentionOptions& o) {
  DType t = device_bench_dtype(o.dtype, "attention");
  LG_USER_CHECK(o.repeats >= 1, "bench attention: --repeats must be at least 1");
  LG_USER_CHECK(o.batch >= 1 && o.kv_heads >= 1 && o.heads % o.kv_heads == 0 && o.head_dim >= 1,
                "bench attention: needs --batch, --kv-heads, --head-dim >= 1 and --heads a multiple of --kv-heads");
  bool null_device = canonical_device(o.device).rfind("CUDANULL", 0) == 0;  // runs no kernel
  if (null_device) std::printf("(%s runs no kernel: the times below are the host's work alone)\n", o.device.c_str());
  for (int64_t S : o.seqs) {
    LG_USER_CHECK(S >= 1, "bench attention: sequence lengths must be positive, got ", S);
    Shape4 s{o.batch, o.heads, o.kv_heads, S, o.head_dim};
    Tensor q = Tensor::randn({s.B, s.H, S, s.D}, t, o.device).realize();
    Tensor k = Tensor::randn({s.B, s.KV, S, s.D}, t, o.device).realize();
    Tensor v = Tensor::randn({s.B, s.KV, S, s.D}, t, o.device).realize();
    double fwd_flops = 4.0 * s.B * s.H * S * S * s.D * (o.causal ? 0.5 : 1.0), step_flops = 3.5 * fwd_flops;
    std::optional<Reference> ref;
    if (!null_device) ref = Reference{q.to_doubles(), k.to_doubles(), v.to_doubles(), s, o.causal};
    std::optional<std::vector<double>> fused_out;
    std::optional<double> fused_step, matmul_step;
    for (const char* path : {"fused", "matmul"}) {
      bool fused = std::string(path) == "fused";
      if (!fused && !o.matmul) continue;
      std::string head = str("attention ", o.device, " ", o.dtype, " B=", s.B, " H=", s.H, " KV=", s.KV, " S=", S, " D=",
                             s.D, " causal=", o.causal ? "yes" : "no", " path=", path);
      auto forward = [&, fused](const Tensor& qi, const Tensor& ki, const Tensor& vi) {
        return fused ? qi.flash_attention(ki, vi, o.causal) : matmul_attention(qi, ki, vi, s, o.causal);
      };
      PathTiming tm;
      try {
        tm = time_path(forward, q, k, v, o.repeats);
      } catch (const Error& e) {
        std::printf("%s failed: %s\n", head.c_str(), e.what());
        std::fflush(stdout);
        continue;
      }
      // The check: 16 sampled rows of the fused output against float64; the matmul path's against
      // the fused one.
      double max_rel = 0;
      bool ok = true;
      bool checkable = ref && (fused || fused_out);
      if (checkable) {
        std::vector<double> out = tm.out.to_doubles();
        double tol = t == dtypes::bfloat16 ? 4.0 / 128 : t == dtypes::float16 ? 4.0 / 1024 : 1e-4;
        uint64_t x = 0x9e3779b97f4a7c15ull;
        for (int n = 0; n < 16; n++) {
          x ^= x << 13, x ^= x >> 7, x ^= x << 17;
          int64_t b = static_cast<int64_t>(x % s.B), h = static_cast<int64_t>((x >> 16) % s.H),
                  i = static_cast<int64_t>((x >> 32) % S);
          std::vector<double> want = fused ? ref->row(b, h, i) : std::vector<double>();
          for (int64_t e = 0; e < s.D; e++) {
            size_t at = static_cast<size_t>(((b * s.H + h) * S + i) * s.D + e);
            double w = fused ? want[e] : (*fused_out)[at];
            double rel = std::abs(out[at] - w) / (1.0 + std::abs(w));
            max_rel = std::max(max_rel, rel);
            ok = ok && rel <= tol;
          }
        }
        if (fused) fused_out = std::move(out);
      }
      const char* check = !checkable ? "none" : ok ? "ok" : "FAIL";
      std::printf("%s fwd_ms=%.3f fwd_tflops=%.3f step_ms=%.3f step_tflops=%.3f check=%s max_rel_err=%.2e\n", head.c_str(),
                  tm.fwd_s * 1e3, fwd_flops / tm.fwd_s / 1e12, tm.step_s * 1e3, step_flops / tm.step_s / 1e12, check, max_rel);
      std::fflush(stdout);
      if (std::string(check) == "FAIL")
        user_error("bench attention: the ", path, " output at S=", S, " on ", o.device,
                   " is wrong at some sampled rows (largest relative error ", max_rel, ")");
      (fused ? fused_step : matmul_step) = tm.step_s;
    }
    if (fused_step && matmul_step && !null_device)
      std::printf("ratio fused/matmul S=%lld step=%.2fx (speed of the fused path over the matmul path)\n",
                  static_cast<long long>(S), *matmul_step / *fused_step);
  }
}

}  // namespace lg::bench
