#pragma once
// Data types: scalar kinds, their sizes and names, promotion rules, and the exact conversions
// for the 16-bit floats (round to nearest, ties to even).
#include <cstdint>
#include <optional>
#include <string>

namespace lg {

enum class Scalar : uint8_t {
  Bool,
  Int8,
  UInt8,
  Int16,
  UInt16,
  Int32,
  UInt32,
  Int64,
  UInt64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Void,  // no value (STORE, SINK)
};
inline constexpr int kNumScalars = static_cast<int>(Scalar::Void) + 1;

// A dtype is a scalar kind, a vector width (1 for scalars; codegen widens for vector registers) and
// whether it is a pointer to such elements (buffers in kernels).
struct DType {
  Scalar scalar = Scalar::Void;
  uint8_t count = 1;
  bool ptr = false;

  constexpr bool operator==(const DType&) const = default;
  constexpr DType base() const { return DType{scalar, 1, false}; }
  constexpr DType as_ptr() const { return DType{scalar, count, true}; }
  constexpr DType vec(int n) const { return DType{scalar, static_cast<uint8_t>(n), ptr}; }
};

namespace dtypes {
inline constexpr DType boolean{Scalar::Bool};
inline constexpr DType int8{Scalar::Int8};
inline constexpr DType uint8{Scalar::UInt8};
inline constexpr DType int16{Scalar::Int16};
inline constexpr DType uint16{Scalar::UInt16};
inline constexpr DType int32{Scalar::Int32};
inline constexpr DType uint32{Scalar::UInt32};
inline constexpr DType int64{Scalar::Int64};
inline constexpr DType uint64{Scalar::UInt64};
inline constexpr DType float16{Scalar::Float16};
inline constexpr DType bfloat16{Scalar::BFloat16};
inline constexpr DType float32{Scalar::Float32};
inline constexpr DType float64{Scalar::Float64};
inline constexpr DType void_{Scalar::Void};
// Index arithmetic in kernels is int64: the largest Llama tensors exceed 2^31 elements.
inline constexpr DType index = int64;
inline constexpr DType default_float = float32;
inline constexpr DType default_int = int32;
}  // namespace dtypes

int itemsize(DType t);  // bytes of one element (vector: all lanes); pointers: 8
int bitsize(Scalar s);
bool is_float(DType t);
bool is_int(DType t);  // signed or unsigned integer, not bool
bool is_unsigned(DType t);
bool is_bool(DType t);
std::string name(DType t);                                   // "f32", "bf16", "i64", "bool", "f32*", "f32x4"
std::optional<DType> dtype_from_name(const std::string& s);  // accepts "float32" and "f32"

// The smallest dtype both a and b convert to without losing range: the least upper bound in the
// lattice bool < {i8,u8} < ... < i64/u64 < {f16,bf16} < f32 < f64 (the same lattice as tinygrad).
DType promote(DType a, DType b);

// Exact 16-bit float conversions. float -> 16 bit rounds to nearest, ties to even; NaN stays NaN.
uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(uint16_t b);
uint16_t float_to_f16_bits(float f);
float f16_bits_to_float(uint16_t h);

// Rounds a value to what dtype t can hold (floats) or wraps it (integers, two's complement).
double round_to_float_dtype(double x, DType t);
int64_t wrap_to_int_dtype(int64_t x, DType t);
// Integer min/max representable by t (as int64; uint64 max saturates to INT64_MAX).
int64_t int_dtype_min(DType t);
int64_t int_dtype_max(DType t);

}  // namespace lg
