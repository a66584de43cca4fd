#include "ir/scalar.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/error.h"

namespace lg {

static double fround(double x, DType t) { return round_to_float_dtype(x, t); }

// Float arithmetic in the dtype's own precision: float64 in double, every other float in float.
template <class F>
static double fapply(DType t, F f, double a, double b = 0, double c = 0) {
  if (t.scalar == Scalar::Float64) return f(a, b, c);
  float r = f(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c));
  return fround(r, t);
}

static int64_t wrap(uint64_t u, DType t) { return wrap_to_int_dtype(static_cast<int64_t>(u), t); }

static bool less(Value a, Value b, DType t) {
  if (is_float(t)) return a.f < b.f;
  if (t.scalar == Scalar::UInt64) return static_cast<uint64_t>(a.i) < static_cast<uint64_t>(b.i);
  return a.i < b.i;
}

static Value int_div(Op op, Value a, Value b, DType t) {
  if (b.i == 0) return Value::of_int(0);
  if (t.scalar == Scalar::UInt64) {
    uint64_t x = a.i, y = b.i;
    return Value::of_int(static_cast<int64_t>(op == Op::IDIV ? x / y : x % y));
  }
  if (a.i == std::numeric_limits<int64_t>::min() && b.i == -1) return Value::of_int(op == Op::IDIV ? a.i : 0);
  return Value::of_int(wrap_to_int_dtype(op == Op::IDIV ? a.i / b.i : a.i % b.i, t));
}

static Value shift(Op op, Value a, Value b, DType t) {
  int bits = bitsize(t.scalar);
  int s = static_cast<int>(b.i & (bits - 1));
  if (op == Op::SHL) return Value::of_int(wrap(static_cast<uint64_t>(a.i) << s, t));
  if (is_unsigned(t)) {
    uint64_t u = static_cast<uint64_t>(a.i);
    return Value::of_int(static_cast<int64_t>(u >> s));
  }
  return Value::of_int(a.i >> s);  // values are sign-extended, so this is an arithmetic shift
}

Value cast_value(Value v, DType from, DType to) {
  if (from == to) return v;
  if (is_float(from)) {
    double x = v.f;
    if (is_float(to)) return Value::of_float(fround(x, to));
    if (is_bool(to)) return Value::of_int(x != 0.0);
    if (std::isnan(x)) return Value::of_int(0);
    double t = std::trunc(x);
    if (to.scalar == Scalar::UInt64) {
      if (t <= 0) return Value::of_int(0);
      if (t >= 18446744073709551615.0) return Value::of_int(-1);
      return Value::of_int(static_cast<int64_t>(static_cast<uint64_t>(t)));
    }
    double lo = static_cast<double>(int_dtype_min(to)), hi = static_cast<double>(int_dtype_max(to));
    if (t <= lo) return Value::of_int(int_dtype_min(to));
    if (t >= hi) return Value::of_int(int_dtype_max(to));
    return Value::of_int(static_cast<int64_t>(t));
  }
  // integer or bool source
  if (is_float(to)) {
    double x = from.scalar == Scalar::UInt64 ? static_cast<double>(static_cast<uint64_t>(v.i))
                                             : static_cast<double>(v.i);
    // float32: one rounding from the integer. 16-bit floats: from the double (exact below 2^53), which
    // rounds once; going through the nearest float would round twice (2^24 + 2^16 + 1 -> bf16 2^24).
    if (to.scalar == Scalar::Float32)
      x = static_cast<float>(from.scalar == Scalar::UInt64 ? static_cast<float>(static_cast<uint64_t>(v.i))
                                                           : static_cast<float>(v.i));
    return Value::of_float(fround(x, to));
  }
  if (is_bool(to)) return Value::of_int(v.i != 0);
  return Value::of_int(wrap_to_int_dtype(v.i, to));
}

static uint64_t bits_of(Value v, DType t) {
  switch (t.scalar) {
    case Scalar::Float64: return std::bit_cast<uint64_t>(v.f);
    case Scalar::Float32: return std::bit_cast<uint32_t>(static_cast<float>(v.f));
    case Scalar::BFloat16: return float_to_bf16_bits(static_cast<float>(v.f));
    case Scalar::Float16: return float_to_f16_bits(static_cast<float>(v.f));
    default: {
      int b = bitsize(t.scalar);
      uint64_t u = static_cast<uint64_t>(v.i);
      return b == 64 ? u : (u & ((uint64_t{1} << b) - 1));
    }
  }
}

static Value from_bits(uint64_t u, DType t) {
  switch (t.scalar) {
    case Scalar::Float64: return Value::of_float(std::bit_cast<double>(u));
    case Scalar::Float32: return Value::of_float(std::bit_cast<float>(static_cast<uint32_t>(u)));
    case Scalar::BFloat16: return Value::of_float(bf16_bits_to_float(static_cast<uint16_t>(u)));
    case Scalar::Float16: return Value::of_float(f16_bits_to_float(static_cast<uint16_t>(u)));
    default: return Value::of_int(wrap(u, t));
  }
}

Value eval_alu(Op op, DType out, DType in, const Value* a, int n) {
  LG_CHECK(n == op_info(op).nsrc, "eval_alu arity");
  bool fl = is_float(in);
  switch (op) {
    case Op::NEG:
      return fl ? Value::of_float(-a[0].f) : Value::of_int(wrap(0 - static_cast<uint64_t>(a[0].i), out));
    case Op::RECIPROCAL:
      return Value::of_float(fapply(
          out, [](auto x, auto, auto) { return decltype(x)(1) / x; }, a[0].f));
    case Op::SQRT:
      return Value::of_float(fapply(
          out, [](auto x, auto, auto) { return std::sqrt(x); }, a[0].f));
    case Op::EXP2:
      return Value::of_float(fapply(
          out, [](auto x, auto, auto) { return std::exp2(x); }, a[0].f));
    case Op::LOG2:
      return Value::of_float(fapply(
          out, [](auto x, auto, auto) { return std::log2(x); }, a[0].f));
    case Op::SIN:
      return Value::of_float(fapply(
          out, [](auto x, auto, auto) { return std::sin(x); }, a[0].f));
    case Op::TRUNC:
      return Value::of_float(fapply(
          out, [](auto x, auto, auto) { return std::trunc(x); }, a[0].f));
    case Op::CAST: return cast_value(a[0], in, out);
    case Op::BITCAST: return from_bits(bits_of(a[0], in), out);
    case Op::ADD:
      if (fl)
        return Value::of_float(fapply(
            out, [](auto x, auto y, auto) { return x + y; }, a[0].f, a[1].f));
      return Value::of_int(wrap(static_cast<uint64_t>(a[0].i) + static_cast<uint64_t>(a[1].i), out));
    case Op::MUL:
      if (fl)
        return Value::of_float(fapply(
            out, [](auto x, auto y, auto) { return x * y; }, a[0].f, a[1].f));
      return Value::of_int(wrap(static_cast<uint64_t>(a[0].i) * static_cast<uint64_t>(a[1].i), out));
    case Op::IDIV:
    case Op::MOD: return int_div(op, a[0], a[1], out);
    case Op::MAX:
      if (fl && (std::isnan(a[0].f) || std::isnan(a[1].f)))
        return Value::of_float(std::numeric_limits<double>::quiet_NaN());
      return less(a[0], a[1], in) ? a[1] : a[0];
    case Op::CMPLT: return Value::of_int(less(a[0], a[1], in));
    case Op::CMPEQ: return Value::of_int(fl ? a[0].f == a[1].f : a[0].i == a[1].i);
    case Op::CMPNE: return Value::of_int(fl ? a[0].f != a[1].f : a[0].i != a[1].i);
    case Op::AND: return Value::of_int(wrap(static_cast<uint64_t>(a[0].i & a[1].i), out));
    case Op::OR: return Value::of_int(wrap(static_cast<uint64_t>(a[0].i | a[1].i), out));
    case Op::XOR: return Value::of_int(wrap(static_cast<uint64_t>(a[0].i ^ a[1].i), out));
    case Op::SHL:
    case Op::SHR: return shift(op, a[0], a[1], out);
    case Op::WHERE: return a[0].i ? a[1] : a[2];
    case Op::MULACC: {
      if (fl) return Value::of_float(fapply(out, [](auto x, auto y, auto z) { return std::fma(x, y, z); }, a[0].f, a[1].f, a[2].f));
      Value prod = eval_alu(Op::MUL, out, in, a, 2);
      Value s[2] = {prod, a[2]};
      return eval_alu(Op::ADD, out, in, s, 2);
    }
    default: internal_error(__FILE__, __LINE__, str("eval_alu of non-ALU op ", op_name(op)));
  }
}

Value load_value(const void* p, DType t) {
  uint64_t u = 0;
  std::memcpy(&u, p, static_cast<size_t>(itemsize(t.base())));
  if (t.scalar == Scalar::Bool) return Value::of_int(u != 0);
  return from_bits(u, t.base());
}

void store_value(void* p, DType t, Value v) {
  uint64_t u = bits_of(v, t.base());
  if (t.scalar == Scalar::Bool) u = v.i != 0;
  std::memcpy(p, &u, static_cast<size_t>(itemsize(t.base())));
}

Value reduce_identity(Op op, DType t) {
  switch (op) {
    case Op::ADD: return is_float(t) ? Value::of_float(0) : Value::of_int(0);
    case Op::MUL: return is_float(t) ? Value::of_float(1) : Value::of_int(1);
    case Op::MAX:
      if (is_float(t)) return Value::of_float(-std::numeric_limits<double>::infinity());
      return Value::of_int(t.scalar == Scalar::UInt64 ? 0 : int_dtype_min(t));
    default: internal_error(__FILE__, __LINE__, str("no identity for ", op_name(op)));
  }
}

double value_as_double(Value v, DType t) {
  if (is_float(t)) return v.f;
  if (t.scalar == Scalar::UInt64) return static_cast<double>(static_cast<uint64_t>(v.i));
  return static_cast<double>(v.i);
}

}  // namespace lg
