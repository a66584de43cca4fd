#include "codegen/scalar_expr.h"

#include <cstdint>
#include <cstdio>

#include "base/error.h"

namespace lg {

const char* scalar_c_type(DType t) {
  LG_CHECK(t.count == 1, "scalar_c_type of a vector (", name(t), ")");
  switch (t.scalar) {
    case Scalar::Bool: return "bool_t";
    case Scalar::Int8: return "int8_t";
    case Scalar::UInt8: return "uint8_t";
    case Scalar::Int16: return "int16_t";
    case Scalar::UInt16: return "uint16_t";
    case Scalar::Int32: return "int32_t";
    case Scalar::UInt32: return "uint32_t";
    case Scalar::Int64: return "int64_t";
    case Scalar::UInt64: return "uint64_t";
    case Scalar::Float16: case Scalar::BFloat16: case Scalar::Float32: return "float";
    case Scalar::Float64: return "double";
    case Scalar::Void: break;
  }
  internal_error(__FILE__, __LINE__, "no C type for " + name(t));
}

std::string hex_float_literal(double v, DType t) {
  bool dbl = t.scalar == Scalar::Float64;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a%s", v, dbl ? "" : "f");  // hexadecimal: exact
  return buf;
}

std::string rounded(DType t, const std::string& e) {
  if (t.scalar == Scalar::BFloat16) return "lg_round_bf16(" + e + ")";
  if (t.scalar == Scalar::Float16) return "lg_round_f16(" + e + ")";
  return e;
}

std::string from_memory(DType t, const std::string& e) {
  if (t.scalar == Scalar::BFloat16) return "lg_bf16_to_f(" + e + ")";
  if (t.scalar == Scalar::Float16) return "lg_f16_to_f(" + e + ")";
  return e;
}

std::string to_memory(DType t, const std::string& e) {
  if (t.scalar == Scalar::BFloat16) return "lg_f_to_bf16(" + e + ")";
  if (t.scalar == Scalar::Float16) return "lg_f_to_f16(" + e + ")";
  return e;
}

std::string scalar_cast_expr(DType from, DType to, const std::string& x) {
  if (is_bool(to)) return str("(", x, " != 0)");
  if (is_float(from) && is_float(to)) {
    if (to.scalar == Scalar::Float64) return str("(double)", x);
    if (to.scalar == Scalar::Float32) return str("(float)", x);
    return rounded(to, from.scalar == Scalar::Float64 ? str("lg_d_to_f_odd(", x, ")") : x);
  }
  if (is_float(from)) {
    if (to.scalar == Scalar::UInt64) return str("lg_d_to_u64(", x, ")");
    int64_t lo = int_dtype_min(to), hi = int_dtype_max(to);
    return str("(", scalar_c_type(to), ")lg_d_to_i(", x, ", ", hex_float_literal(static_cast<double>(lo), dtypes::float64),
               ", ", hex_float_literal(static_cast<double>(hi), dtypes::float64), ", ",
               lo == INT64_MIN ? "INT64_MIN" : str(lo, "ll"), ", ", hi, "ll)");
  }
  if (is_float(to)) {  // integer or bool source
    if (to.scalar == Scalar::Float64) return str("(double)", x);
    if (to.scalar == Scalar::Float32) return str("(float)", x);
    return rounded(to, str("lg_d_to_f_odd((double)", x, ")"));
  }
  return str("(", scalar_c_type(to), ")", x);
}

std::string scalar_alu_expr(const Node& n, const std::vector<std::string>& src, const std::string& T,
                            const ScalarDialect& dialect) {
  DType t = n.dtype, in = n.src[0]->dtype;
  bool dbl = t.scalar == Scalar::Float64;
  auto s = [&](int i) -> const std::string& { return src.at(i); };
  auto fn = [&](const char* f) { return rounded(t, str(f, dbl ? "" : "f", "(", s(0), ")")); };
  int bits = bitsize(in.scalar);
  switch (n.op) {
    case Op::NEG: return is_float(t) ? str("-", s(0)) : str("(", T, ")(-", s(0), ")");
    case Op::RECIPROCAL: return rounded(t, str(dbl ? "1.0" : "1.0f", " / ", s(0)));
    case Op::SQRT: return fn("sqrt");
    case Op::EXP2: return dbl ? fn("exp2") : rounded(t, str(dialect.exp2_f32, "(", s(0), ")"));
    case Op::LOG2: return fn("log2");
    case Op::SIN: return fn("sin");
    case Op::TRUNC: return fn("trunc");
    case Op::CAST: return scalar_cast_expr(in, t, s(0));
    case Op::ADD: return is_float(t) ? rounded(t, str(s(0), " + ", s(1))) : str("(", T, ")(", s(0), " + ", s(1), ")");
    case Op::MUL: return is_float(t) ? rounded(t, str(s(0), " * ", s(1))) : str("(", T, ")(", s(0), " * ", s(1), ")");
    case Op::IDIV: case Op::MOD: {
      const Node& d = *n.src[1];
      bool plain = d.is_const() && d.const_as_int() != 0 && (is_unsigned(t) || d.const_as_int() != -1);
      const char* op = n.op == Op::IDIV ? "/" : "%";
      if (plain) return str("(", T, ")(", s(0), " ", op, " ", s(1), ")");
      return str("(", T, ")", n.op == Op::IDIV ? "LG_IDIV" : "LG_MOD", is_unsigned(t) ? "U(" : "S(", s(0), ", ", s(1), ")");
    }
    case Op::MAX:
      if (is_float(t)) return str(dbl ? "lg_maxd(" : "lg_maxf(", s(0), ", ", s(1), ")");
      return str("(", s(0), " < ", s(1), " ? ", s(1), " : ", s(0), ")");
    case Op::CMPLT: return str("(", s(0), " < ", s(1), ")");
    case Op::CMPNE: return str("(", s(0), " != ", s(1), ")");
    case Op::CMPEQ: return str("(", s(0), " == ", s(1), ")");
    case Op::AND: return str("(", T, ")(", s(0), " & ", s(1), ")");
    case Op::OR: return str("(", T, ")(", s(0), " | ", s(1), ")");
    case Op::XOR: return str("(", T, ")(", s(0), " ^ ", s(1), ")");
    // unsigned left shifts: a signed one that overflows is undefined in C and C++; the right shift
    // of the operand in its own type (arithmetic for signed)
    case Op::SHL: return str("(", T, ")((uint64_t)", s(0), " << (", s(1), " & ", bits - 1, "))");
    case Op::SHR: return str("(", T, ")((", scalar_c_type(in), ")", s(0), " >> (", s(1), " & ", bits - 1, "))");
    case Op::WHERE: return str("(", s(0), " ? ", s(1), " : ", s(2), ")");
    case Op::MULACC:
      if (is_float(t)) return rounded(t, str(dbl ? "fma(" : "fmaf(", s(0), ", ", s(1), ", ", s(2), ")"));
      return str("(", T, ")((", scalar_c_type(t), ")", s(0), " * ", s(1), " + ", s(2), ")");  // a*b may not fit T
    default: break;
  }
  internal_error(__FILE__, __LINE__, str("no scalar C expression for ", op_name(n.op)));
}

}  // namespace lg
