#include "runtime/beam_check.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>

#include "base/error.h"
#include "runtime/thread_pool.h"

namespace lg {
namespace {

// Element i of a float output as a double (exact for every float dtype).
double float_at(const uint8_t* p, size_t i, Scalar s) {
  switch (s) {
    case Scalar::Float16:
    case Scalar::BFloat16: {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      return s == Scalar::Float16 ? f16_bits_to_float(h) : bf16_bits_to_float(h);
    }
    case Scalar::Float32: {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      return f;
    }
    default: {
      double d;
      std::memcpy(&d, p + 8 * i, 8);
      return d;
    }
  }
}

// Both values agree within tol * (|r| + scale); NaN only with NaN, an infinity only with itself.
bool close(double r, double g, double tol, double scale) {
  if (std::isnan(r) || std::isnan(g)) return std::isnan(r) && std::isnan(g);
  if (std::isinf(r) || std::isinf(g)) return r == g;
  return std::fabs(g - r) <= tol * (std::fabs(r) + scale);
}

}  // namespace

void poison_output(Allocator& alloc, void* p, size_t bytes) {
  std::vector<uint8_t> ones(bytes, 0xFF);
  alloc.copy_in(p, ones.data(), bytes);
}

double output_tolerance(DType t) {
  switch (t.scalar) {
    case Scalar::Float16: return 1e-2;
    case Scalar::BFloat16: return 3e-2;
    case Scalar::Float32: return 1e-3;
    case Scalar::Float64: return 1e-9;
    default: return 0;
  }
}

std::string output_mismatch(const std::vector<uint8_t>& ref, const std::vector<uint8_t>& got, DType t) {
  LG_CHECK(ref.size() == got.size(), "outputs of ", ref.size(), " and ", got.size(), " bytes");
  const size_t size = static_cast<size_t>(itemsize(t.base()));
  const int64_t n = static_cast<int64_t>(ref.size() / size);
  const bool floats = is_float(t);
  // Both passes split over the thread pool (an 8192 x 8192 output is 67 M elements per candidate).
  std::mutex mu;
  double squares = 0, finite = 0;
  if (floats)
    parallel_for(n, [&](int64_t b, int64_t e) {
      double s = 0, f = 0;
      for (int64_t i = b; i < e; i++) {
        double r = float_at(ref.data(), static_cast<size_t>(i), t.scalar);
        if (std::isfinite(r)) s += r * r, f++;
      }
      std::lock_guard lock(mu);
      squares += s, finite += f;
    });
  const double rms = finite > 0 ? std::sqrt(squares / finite) : 0, tol = output_tolerance(t);
  std::atomic<int64_t> first{n};  // the lowest index that does not match
  parallel_for(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e && i < first.load(std::memory_order_relaxed); i++) {
      size_t k = static_cast<size_t>(i);
      bool same = floats
                      ? close(float_at(ref.data(), k, t.scalar), float_at(got.data(), k, t.scalar), tol, rms)
                      : std::memcmp(ref.data() + k * size, got.data() + k * size, size) == 0;
      if (same) continue;
      for (int64_t seen = first.load(); i < seen && !first.compare_exchange_weak(seen, i);) {
      }
      return;
    }
  });
  if (first == n) return "";
  size_t i = static_cast<size_t>(first.load());
  if (!floats) return str("element ", i, " differs in its bytes (", name(t.base()), ")");
  return str("element ", i, " is ", float_at(got.data(), i, t.scalar), " where the reference has ",
             float_at(ref.data(), i, t.scalar), " (", name(t.base()), ", tolerance ", tol,
             " x (|reference| + rms ", rms, "))");
}

}  // namespace lg
