#include "ir/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include <vector>

#include "base/error.h"

namespace lg {

int bitsize(Scalar s) {
  switch (s) {
    case Scalar::Bool: return 8;
    case Scalar::Int8:
    case Scalar::UInt8: return 8;
    case Scalar::Int16:
    case Scalar::UInt16:
    case Scalar::Float16:
    case Scalar::BFloat16: return 16;
    case Scalar::Int32:
    case Scalar::UInt32:
    case Scalar::Float32: return 32;
    case Scalar::Int64:
    case Scalar::UInt64:
    case Scalar::Float64: return 64;
    case Scalar::Void: return 0;
  }
  return 0;
}

int itemsize(DType t) { return t.ptr ? 8 : bitsize(t.scalar) / 8 * t.count; }

bool is_float(DType t) {
  return t.scalar == Scalar::Float16 || t.scalar == Scalar::BFloat16 || t.scalar == Scalar::Float32 ||
         t.scalar == Scalar::Float64;
}
bool is_unsigned(DType t) {
  return t.scalar == Scalar::UInt8 || t.scalar == Scalar::UInt16 || t.scalar == Scalar::UInt32 ||
         t.scalar == Scalar::UInt64;
}
bool is_int(DType t) { return !is_float(t) && t.scalar != Scalar::Bool && t.scalar != Scalar::Void; }
bool is_bool(DType t) { return t.scalar == Scalar::Bool; }

static const char* short_name(Scalar s) {
  switch (s) {
    case Scalar::Bool: return "bool";
    case Scalar::Int8: return "i8";
    case Scalar::UInt8: return "u8";
    case Scalar::Int16: return "i16";
    case Scalar::UInt16: return "u16";
    case Scalar::Int32: return "i32";
    case Scalar::UInt32: return "u32";
    case Scalar::Int64: return "i64";
    case Scalar::UInt64: return "u64";
    case Scalar::Float16: return "f16";
    case Scalar::BFloat16: return "bf16";
    case Scalar::Float32: return "f32";
    case Scalar::Float64: return "f64";
    case Scalar::Void: return "void";
  }
  return "?";
}

std::string name(DType t) {
  std::string s = short_name(t.scalar);
  if (t.count != 1) s += "x" + std::to_string(t.count);
  if (t.ptr) s += "*";
  return s;
}

std::optional<DType> dtype_from_name(const std::string& s) {
  static const std::pair<const char*, Scalar> long_names[] = {
      {"bool", Scalar::Bool},       {"int8", Scalar::Int8},     {"uint8", Scalar::UInt8},
      {"int16", Scalar::Int16},     {"uint16", Scalar::UInt16}, {"int32", Scalar::Int32},
      {"uint32", Scalar::UInt32},   {"int64", Scalar::Int64},   {"uint64", Scalar::UInt64},
      {"float16", Scalar::Float16}, {"half", Scalar::Float16},  {"bfloat16", Scalar::BFloat16},
      {"float32", Scalar::Float32}, {"float", Scalar::Float32}, {"float64", Scalar::Float64},
      {"double", Scalar::Float64}};
  for (auto& [n, sc] : long_names)
    if (s == n) return DType{sc};
  for (int i = 0; i < kNumScalars - 1; i++)
    if (s == short_name(static_cast<Scalar>(i))) return DType{static_cast<Scalar>(i)};
  return std::nullopt;
}

// Parents in the promotion lattice (each edge: every value of the child is a value of the parent,
// except the int64 -> 16-bit float edges, which exist so ints and floats meet at a float).
static std::vector<Scalar> parents(Scalar s) {
  switch (s) {
    case Scalar::Bool: return {Scalar::Int8, Scalar::UInt8};
    case Scalar::Int8: return {Scalar::Int16};
    case Scalar::UInt8: return {Scalar::Int16, Scalar::UInt16};
    case Scalar::Int16: return {Scalar::Int32};
    case Scalar::UInt16: return {Scalar::Int32, Scalar::UInt32};
    case Scalar::Int32: return {Scalar::Int64};
    case Scalar::UInt32: return {Scalar::Int64, Scalar::UInt64};
    case Scalar::Int64:
    case Scalar::UInt64: return {Scalar::Float16, Scalar::BFloat16};
    case Scalar::Float16:
    case Scalar::BFloat16: return {Scalar::Float32};
    case Scalar::Float32: return {Scalar::Float64};
    default: return {};
  }
}

static uint32_t ancestors(Scalar s) {  // bitmask including s itself
  uint32_t m = 1u << static_cast<int>(s);
  for (Scalar p : parents(s)) m |= ancestors(p);
  return m;
}

DType promote(DType a, DType b) {
  LG_CHECK(a.count == 1 && b.count == 1 && !a.ptr && !b.ptr, "promote of ", name(a), " and ", name(b));
  if (a == b) return a;
  uint32_t common = ancestors(a.scalar) & ancestors(b.scalar);
  LG_CHECK(common != 0, "no common dtype for ", name(a), " and ", name(b));
  // The least upper bound is the common ancestor none of whose strict descendants are common.
  for (int i = 0; i < kNumScalars; i++) {
    if (!(common & (1u << i))) continue;
    bool least = true;
    for (int j = 0; j < kNumScalars; j++)
      if (j != i && (common & (1u << j)) && (ancestors(static_cast<Scalar>(j)) & (1u << i))) least = false;
    if (least) return DType{static_cast<Scalar>(i)};
  }
  internal_error(__FILE__, __LINE__, "promotion lattice has no least element");
}

uint16_t float_to_bf16_bits(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);                                          // ties to even
  return static_cast<uint16_t>((u + rounding) >> 16);
}

float bf16_bits_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t float_to_f16_bits(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: infinity
  if (a < 0x38800000u) {                        // below the smallest normal half: subnormal or 0
    // value = a_float; half subnormal unit = 2^-24. Round a_float / 2^-24 to nearest even integer.
    float v = std::bit_cast<float>(a) * 16777216.0f;  // exact: scaling by a power of two
    float r = std::nearbyint(v);                      // default rounding mode: ties to even
    return sign | static_cast<uint16_t>(r);
  }
  // Normal: rebias exponent (127 -> 15) and round the 23-bit mantissa to 10 bits, ties to even.
  uint32_t rounded = a + 0xfffu + ((a >> 13) & 1u);
  return sign | static_cast<uint16_t>((rounded - 0x38000000u) >> 13);
}

float f16_bits_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: man * 2^-24
    float v = static_cast<float>(man) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (man << 13));
}

// double -> float rounding to odd: x itself when a float holds it, otherwise the neighbouring float
// whose last bit is 1. Rounding that to a 16-bit float (<= 11 significant bits; 24 >= 11 + 2) gives
// the correctly rounded result. Rounding to the nearest float first would round twice:
// 1 + 2^-11 + 2^-40 would become the half halfway point 1 + 2^-11, then 1 instead of 1 + 2^-10.
static float to_float_round_odd(double x) {
  float f = static_cast<float>(x);
  if (static_cast<double>(f) == x || !std::isfinite(f) || (std::bit_cast<uint32_t>(f) & 1u)) return f;
  return std::nextafter(
      f, x > f ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity());
}

double round_to_float_dtype(double x, DType t) {
  switch (t.scalar) {
    case Scalar::Float64: return x;
    case Scalar::Float32: return static_cast<float>(x);
    case Scalar::BFloat16: return bf16_bits_to_float(float_to_bf16_bits(to_float_round_odd(x)));
    case Scalar::Float16: return f16_bits_to_float(float_to_f16_bits(to_float_round_odd(x)));
    default: internal_error(__FILE__, __LINE__, "round_to_float_dtype of " + name(t));
  }
}

int64_t wrap_to_int_dtype(int64_t x, DType t) {
  uint64_t u = static_cast<uint64_t>(x);
  switch (t.scalar) {
    case Scalar::Bool: return x != 0;
    case Scalar::Int8: return static_cast<int8_t>(u);
    case Scalar::UInt8: return static_cast<uint8_t>(u);
    case Scalar::Int16: return static_cast<int16_t>(u);
    case Scalar::UInt16: return static_cast<uint16_t>(u);
    case Scalar::Int32: return static_cast<int32_t>(u);
    case Scalar::UInt32: return static_cast<uint32_t>(u);
    case Scalar::Int64:
    case Scalar::UInt64: return x;
    default: internal_error(__FILE__, __LINE__, "wrap_to_int_dtype of " + name(t));
  }
}

int64_t int_dtype_min(DType t) {
  if (is_unsigned(t) || is_bool(t)) return 0;
  int b = bitsize(t.scalar);
  return b == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (b - 1));
}

int64_t int_dtype_max(DType t) {
  if (is_bool(t)) return 1;
  int b = bitsize(t.scalar);
  if (b == 64) return std::numeric_limits<int64_t>::max();
  return is_unsigned(t) ? (int64_t{1} << b) - 1 : (int64_t{1} << (b - 1)) - 1;
}

}  // namespace lg
