#include "bench/matmul_probe.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

#include "base/error.h"
#include "bench/device_dtype.h"
#include "runtime/device.h"
#include "tensor/tensor.h"

namespace lg::bench {
namespace {

constexpr int64_t kBands = 8;   // the map's bands per side
constexpr int64_t kSplit = 32;  // enc(x): x / 32 and x % 32

// The commonest (key, entries) of a tally, at most 4, ties by key.
std::vector<std::pair<int64_t, int64_t>> commonest(const std::map<int64_t, int64_t>& tally) {
  std::vector<std::pair<int64_t, int64_t>> v(tally.begin(), tally.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  if (v.size() > 4) v.resize(4);
  return v;
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

// Walks the n x n output: read(e) gives entry e's index (nullopt: unreadable) and raw(e) its
// values as text; want(i, j) what it should be. xor_too: the values are indices (not k_sum's sums).
template <class Read, class Raw, class Want, class IsNan>
ProbeOutcome analyze(int64_t n, Read read, Raw raw, Want want, IsNan is_nan, bool xor_too) {
  LG_CHECK(n >= kBands && n % kBands == 0, "a probe's size is a multiple of ", kBands, ", got ", n);
  ProbeOutcome r;
  r.n = n;
  const int64_t band = n / kBands;
  std::vector<int64_t> cell(kBands * kBands, 0);
  std::map<int64_t, int64_t> offsets, xors;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      const int64_t e = i * n + j, w = want(i, j);
      const std::optional<int64_t> got = read(e);
      if (is_nan(e)) r.nan++;
      if (got && *got == w) continue;
      r.wrong++;
      cell[(i / band) * kBands + j / band]++;
      if (!got) r.unreadable++;
      if (got) {
        offsets[*got - w]++;
        if (xor_too) xors[*got ^ w]++;
      }
      if (r.first.size() < 4)
        r.first.push_back(str("(", i, ",", j, "):got", got ? std::to_string(*got) : raw(e), "/want", w));
    }
  for (int64_t b = 0; b < kBands * kBands; b++) {
    if (b > 0 && b % kBands == 0) r.map += '/';
    r.map += cell[b] == 0 ? '.' : cell[b] == band * band ? '#' : 'x';
  }
  r.offsets = commonest(offsets);
  r.xors = commonest(xors);
  return r;
}

std::string pairs(const std::vector<std::pair<int64_t, int64_t>>& v) {
  std::string s;
  for (const auto& [key, count] : v) s += str(s.empty() ? "" : ",", key, ":", count);
  return s;
}

}  // namespace

std::string ProbeOutcome::text() const {
  if (ok()) return "ok";
  std::string s =
      str("FAIL wrong=", wrong, "/", n * n, " nan=", nan, " unreadable=", unreadable, " map=", map);
  if (!offsets.empty()) s += " offsets=" + pairs(offsets);
  if (!xors.empty()) s += " xors=" + pairs(xors);
  s += " first=";
  for (size_t k = 0; k < first.size(); k++) s += (k ? ";" : "") + first[k];
  return s;
}

ProbeOutcome analyze_index_probe(const std::vector<double>& hi, const std::vector<double>& lo, int64_t n,
                                 bool want_row) {
  LG_CHECK(hi.size() == static_cast<size_t>(n * n) && lo.size() == hi.size(), "a probe's products are ", n,
           " x ", n);
  auto read = [&](int64_t e) -> std::optional<int64_t> {
    const double h = hi[e], l = lo[e];
    if (!std::isfinite(h) || !std::isfinite(l) || h != std::floor(h) || l != std::floor(l))
      return std::nullopt;
    if (h < 0 || l < 0 || l >= kSplit || h * kSplit + l >= static_cast<double>(n)) return std::nullopt;
    return static_cast<int64_t>(h) * kSplit + static_cast<int64_t>(l);
  };
  auto raw = [&](int64_t e) { return str("?", number(hi[e]), ",", number(lo[e])); };
  auto want = [&](int64_t i, int64_t j) { return want_row ? i : j; };
  auto is_nan = [&](int64_t e) { return std::isnan(hi[e]) || std::isnan(lo[e]); };
  return analyze(n, read, raw, want, is_nan, true);
}

ProbeOutcome analyze_sum_probe(const std::vector<double>& got, int64_t n) {
  LG_CHECK(got.size() == static_cast<size_t>(n * n), "a probe's product is ", n, " x ", n);
  auto read = [&](int64_t e) -> std::optional<int64_t> {
    const double v = got[e];
    if (!std::isfinite(v) || v != std::floor(v) || std::abs(v) > 1e15) return std::nullopt;
    return static_cast<int64_t>(v);
  };
  auto raw = [&](int64_t e) { return "?" + number(got[e]); };
  auto want = [&](int64_t, int64_t) { return n; };
  auto is_nan = [&](int64_t e) { return std::isnan(got[e]); };
  return analyze(n, read, raw, want, is_nan, false);
}

void run_matmul_probe(const DeviceMatmulOptions& o) {
  const DType t = device_bench_dtype(o.dtype, "matmul");
  // CUDANULL runs no kernel (runtime/compile_check.h): the products compile, nothing is read.
  const bool null_device = canonical_device(o.device).rfind("CUDANULL", 0) == 0;
  int failed = 0;
  for (int64_t n : o.sizes) {
    LG_USER_CHECK(
        n >= kBands && n <= 8192 && n % kBands == 0,
        "bench matmul --probe: sizes must be multiples of 8 from 8 to 8192 (the map has 8 x 8 bands; "
        "the encoded indices stay exact in bf16 up to 8192), got ",
        n);
    // The logical n x n operand f(row, col), stored transposed (and read through a transpose) when
    // the layout asks for it, as bench matmul's operands are.
    auto operand = [&](auto f, bool transposed) {
      std::vector<double> v(static_cast<size_t>(n * n));
      for (int64_t r = 0; r < n; r++)
        for (int64_t c = 0; c < n; c++) v[transposed ? c * n + r : r * n + c] = f(r, c);
      Tensor x = Tensor::from_doubles(v, {n, n}, t, o.device).realize();
      return transposed ? x.transpose() : x;
    };
    auto a_of = [&](auto f) { return operand(f, o.a_transposed); };
    auto b_of = [&](auto f) { return operand(f, o.b_transposed); };
    auto product = [&](const Tensor& a, const Tensor& b) {
      Tensor c = a.matmul(b).realize();
      return null_device ? std::vector<double>{} : c.to_doubles();
    };
    auto eye = [](int64_t r, int64_t c) { return r == c ? 1.0 : 0.0; };
    auto hi = [](int64_t x) { return static_cast<double>(x / kSplit); };
    auto lo = [](int64_t x) { return static_cast<double>(x % kSplit); };
    const Tensor a_eye = a_of(eye), b_eye = b_of(eye);
    const char* kind = tensor_core_kind(a_eye.matmul(b_eye));  // every probe's product is this kernel
    auto report = [&](const char* probe, const std::function<ProbeOutcome()>& outcome) {
      std::string text = null_device ? "none (CUDANULL runs no kernel)" : outcome().text();
      failed += text.rfind("FAIL", 0) == 0;
      std::printf("probe %s %s N=%lld%s%s kernel=%s %s: %s\n", o.device.c_str(), o.dtype.c_str(),
                  static_cast<long long>(n), o.a_transposed ? " a=X^T" : "", o.b_transposed ? " b=W^T" : "",
                  kind, probe, text.c_str());
      std::fflush(stdout);
    };
    {
      std::vector<double> h = product(a_of([&](int64_t i, int64_t) { return hi(i); }), b_eye),
                          l = product(a_of([&](int64_t i, int64_t) { return lo(i); }), b_eye);
      report("a_rows", [&] { return analyze_index_probe(h, l, n, true); });
    }
    {
      std::vector<double> h = product(a_of([&](int64_t, int64_t k) { return hi(k); }), b_eye),
                          l = product(a_of([&](int64_t, int64_t k) { return lo(k); }), b_eye);
      report("a_k", [&] { return analyze_index_probe(h, l, n, false); });
    }
    {
      std::vector<double> h = product(a_eye, b_of([&](int64_t, int64_t j) { return hi(j); })),
                          l = product(a_eye, b_of([&](int64_t, int64_t j) { return lo(j); }));
      report("b_cols", [&] { return analyze_index_probe(h, l, n, false); });
    }
    {
      std::vector<double> h = product(a_eye, b_of([&](int64_t k, int64_t) { return hi(k); })),
                          l = product(a_eye, b_of([&](int64_t k, int64_t) { return lo(k); }));
      report("b_k", [&] { return analyze_index_probe(h, l, n, true); });
    }
    {
      auto one = [](int64_t, int64_t) { return 1.0; };
      std::vector<double> s = product(a_of(one), b_of(one));
      report("k_sum", [&] { return analyze_sum_probe(s, n); });
    }
  }
  if (failed > 0)
    user_error("bench matmul --probe: ", failed, " probe", failed == 1 ? "" : "s", " found a wrong ", o.dtype,
               " product on ", o.device,
               " (the FAIL lines above say where; docs/gpu.md \"Probing a wrong matmul\")");
}

}  // namespace lg::bench
