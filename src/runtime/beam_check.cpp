#include "runtime/beam_check.h"

#include <cmath>
#include <cstring>

#include "base/error.h"

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
  size_t size = static_cast<size_t>(itemsize(t.base()));
  size_t n = ref.size() / size;
  if (!is_float(t)) {
    for (size_t i = 0; i < n; i++)
      if (std::memcmp(ref.data() + i * size, got.data() + i * size, size) != 0)
        return str("element ", i, " differs in its bytes (", name(t.base()), ")");
    return "";
  }
  double squares = 0;
  size_t finite = 0;
  for (size_t i = 0; i < n; i++) {
    double r = float_at(ref.data(), i, t.scalar);
    if (std::isfinite(r)) squares += r * r, finite++;
  }
  double rms = finite ? std::sqrt(squares / static_cast<double>(finite)) : 0;
  double tol = output_tolerance(t);
  for (size_t i = 0; i < n; i++) {
    double r = float_at(ref.data(), i, t.scalar), g = float_at(got.data(), i, t.scalar);
    if (!close(r, g, tol, rms))
      return str("element ", i, " is ", g, " where the reference has ", r, " (", name(t.base()),
                 ", tolerance ", tol, " x (|reference| + rms ", rms, "))");
  }
  return "";
}

}  // namespace lg
