// Elementwise operations: broadcasting, dtype promotion, and the composites built from ALU ops.
#include <cmath>
#include <numbers>

#include "base/config.h"
#include "runtime/device.h"
#include "tensor/internal.h"

namespace lg {
namespace detail {

int64_t norm_axis(int64_t axis, int64_t ndim, const char* op) {
  int64_t n = std::max<int64_t>(ndim, 1);
  LG_USER_CHECK(axis >= -n && axis < n, op, ": axis ", axis, " is out of range for a tensor of rank ", ndim,
                " (valid: ", -n, "..", n - 1, ")");
  return axis < 0 ? axis + n : axis;
}

std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

NodeRef device_of(const std::string& device) {
  std::string name = canonical_device(device.empty() ? config().device : device);
  get_device(name);  // an unknown name is a user error here, where the tensor is made
  return device_node(name);
}

Tensor scalar(double v, DType t, const NodeRef& device) { return Tensor(cnst(t, v, device)); }

Shape broadcast_shape(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; i++) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    LG_USER_CHECK(x == y || x == 1 || y == 1, op, ": shapes ", shape_str(a), " and ", shape_str(b),
                  " do not broadcast (axis ", i, ": ", x, " vs ", y, ")");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

Tensor broadcast_to(const Tensor& x, const Shape& shape, const char* op) {
  if (x.shape() == shape) return x;
  Shape s = broadcast_shape(x.shape(), shape, op);
  LG_USER_CHECK(s == shape, op, ": cannot broadcast ", shape_str(x.shape()), " to ", shape_str(shape));
  Shape padded(shape.size() - x.shape().size(), 1);
  padded.insert(padded.end(), x.shape().begin(), x.shape().end());
  return x.reshape(padded).expand(shape);
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  if (a.node()->device == b.node()->device || !a.node()->device || !b.node()->device) return;
  user_error(op, ": tensors are on different devices (", a.device(), " and ", b.device(),
             "); move one with .to()");
}

Tensor binary(Op op, const Tensor& a, const Tensor& b, const char* name) {
  check_same_device(a, b, name);
  DType t = promote(a.dtype(), b.dtype());
  Shape s = broadcast_shape(a.shape(), b.shape(), name);
  Tensor x = broadcast_to(a.cast(t), s, name), y = broadcast_to(b.cast(t), s, name);
  return Tensor(alu(op, x.node(), y.node()));
}

Tensor unary(Op op, const Tensor& x) { return Tensor(alu(op, x.node())); }

}  // namespace detail

using detail::binary;
using detail::unary;

static DType float_of(DType t) { return is_float(t) ? t : dtypes::default_float; }

// A number operand is weak: it adopts the tensor's dtype unless that would lose it (a fraction with
// an integer tensor gives float32; a number with a bool tensor gives int32).
Tensor Tensor::scalar_like(double v) const {
  DType t = dtype();
  if (is_bool(t) && v != 0 && v != 1) t = dtypes::default_int;
  if (!is_float(t) && (v != std::trunc(v) || std::isinf(v) || std::isnan(v))) t = dtypes::default_float;
  return detail::scalar(v, t, NodeRef::share(node()->device));
}

Tensor Tensor::add(const Tensor& o) const { return binary(Op::ADD, *this, o, "add"); }
Tensor Tensor::mul(const Tensor& o) const { return binary(Op::MUL, *this, o, "mul"); }
Tensor Tensor::sub(const Tensor& o) const {
  DType t = promote(dtype(), o.dtype());
  return add(is_float(t) ? o.cast(t).neg() : o.cast(t).mul(o.cast(t).scalar_like(-1)));
}
Tensor Tensor::div(const Tensor& o) const {
  DType t = float_of(promote(dtype(), o.dtype()));
  return cast(t).mul(o.cast(t).reciprocal());
}
Tensor Tensor::idiv(const Tensor& o) const {
  LG_USER_CHECK(is_int(promote(dtype(), o.dtype())), "idiv: needs integer tensors, got ", name(dtype()),
                " and ", name(o.dtype()));
  return binary(Op::IDIV, *this, o, "idiv");
}
Tensor Tensor::mod(const Tensor& o) const {
  LG_USER_CHECK(is_int(promote(dtype(), o.dtype())), "mod: needs integer tensors, got ", name(dtype()),
                " and ", name(o.dtype()));
  return binary(Op::MOD, *this, o, "mod");
}
Tensor Tensor::maximum(const Tensor& o) const { return binary(Op::MAX, *this, o, "maximum"); }
Tensor Tensor::minimum(const Tensor& o) const {
  DType t = promote(dtype(), o.dtype());
  if (is_float(t)) return neg().maximum(o.neg()).neg();  // MAX propagates NaN
  return cast(t).lt(o.cast(t)).where(cast(t), o.cast(t));
}

Tensor Tensor::neg() const {
  if (is_bool(dtype())) return logical_not();
  return is_float(dtype()) ? unary(Op::NEG, *this) : mul(scalar_like(-1));
}
Tensor Tensor::reciprocal() const { return unary(Op::RECIPROCAL, cast(float_of(dtype()))); }
Tensor Tensor::sqrt() const { return unary(Op::SQRT, cast(float_of(dtype()))); }
Tensor Tensor::rsqrt() const { return sqrt().reciprocal(); }
Tensor Tensor::exp2() const { return unary(Op::EXP2, cast(float_of(dtype()))); }
Tensor Tensor::log2() const { return unary(Op::LOG2, cast(float_of(dtype()))); }
Tensor Tensor::sin() const { return unary(Op::SIN, cast(float_of(dtype()))); }
Tensor Tensor::exp() const {
  Tensor x = cast(float_of(dtype()));
  return x.mul(x.scalar_like(1.0 / std::numbers::ln2)).exp2();
}
Tensor Tensor::log() const {
  Tensor l = log2();
  return l.mul(l.scalar_like(std::numbers::ln2));
}
Tensor Tensor::cos() const {
  Tensor x = cast(float_of(dtype()));
  return x.scalar_like(std::numbers::pi / 2).sub(x).sin();
}
Tensor Tensor::sigmoid() const {
  Tensor x = cast(float_of(dtype()));
  return x.neg().exp().add(x.scalar_like(1)).reciprocal();
}
Tensor Tensor::tanh() const {
  Tensor x = cast(float_of(dtype()));
  return x.mul(x.scalar_like(2)).sigmoid().mul(x.scalar_like(2)).sub(x.scalar_like(1));
}
Tensor Tensor::relu() const { return maximum(scalar_like(0)); }
Tensor Tensor::silu() const { return cast(float_of(dtype())).mul(sigmoid()); }
Tensor Tensor::gelu() const {
  Tensor x = cast(float_of(dtype()));
  Tensor inner = x.add(x.mul(x).mul(x).mul(x.scalar_like(0.044715)))
                     .mul(x.scalar_like(std::sqrt(2.0 / std::numbers::pi)));
  return x.mul(x.scalar_like(0.5)).mul(inner.tanh().add(x.scalar_like(1)));
}
Tensor Tensor::abs() const {
  if (is_bool(dtype()) || is_unsigned(dtype())) return *this;
  return lt(scalar_like(0)).where(neg(), *this);
}

// x^y = 2^(y*log2|x|), with the sign of x for odd integer y, 1 for y == 0, and NaN for a negative x
// with a fractional y (as std::pow).
Tensor Tensor::pow(const Tensor& o) const {
  DType t = float_of(promote(dtype(), o.dtype()));
  Tensor x = cast(t), y = o.cast(t);
  Tensor mag = y.mul(x.abs().log2()).exp2();
  Tensor y_int = y.eq(Tensor(unary(Op::TRUNC, y)));
  Tensor y_odd =
      y_int.logical_and(Tensor(unary(Op::TRUNC, y.mul(y.scalar_like(0.5)))).mul(y.scalar_like(2)).ne(y));
  Tensor neg_x = x.lt(x.scalar_like(0));
  Tensor signed_mag = neg_x.logical_and(y_odd).where(mag.neg(), mag);
  Tensor nan = x.scalar_like(std::numeric_limits<double>::quiet_NaN());
  Tensor r = neg_x.logical_and(y_int.logical_not()).where(nan, signed_mag);
  return y.eq(y.scalar_like(0)).where(x.scalar_like(1), r);
}
Tensor Tensor::pow(double e) const { return pow(scalar_like(e)); }

Tensor Tensor::where(const Tensor& a, const Tensor& b) const {
  LG_USER_CHECK(is_bool(dtype()), "where: the condition must be bool, got ", name(dtype()),
                "; compare first (e.g. x.gt(0))");
  detail::check_same_device(*this, a, "where");
  detail::check_same_device(*this, b, "where");
  DType t = promote(a.dtype(), b.dtype());
  Shape s = detail::broadcast_shape(detail::broadcast_shape(shape(), a.shape(), "where"), b.shape(), "where");
  Tensor c = detail::broadcast_to(*this, s, "where");
  Tensor x = detail::broadcast_to(a.cast(t), s, "where"), y = detail::broadcast_to(b.cast(t), s, "where");
  return Tensor(lg::where(c.node(), x.node(), y.node()));
}
Tensor Tensor::where(double a, double b) const {
  Tensor x = detail::scalar(a, dtypes::default_float, NodeRef::share(node()->device));
  return where(x, detail::scalar(b, dtypes::default_float, NodeRef::share(node()->device)));
}

Tensor Tensor::lt(const Tensor& o) const { return binary(Op::CMPLT, *this, o, "lt"); }
Tensor Tensor::gt(const Tensor& o) const { return binary(Op::CMPLT, o, *this, "gt"); }
Tensor Tensor::eq(const Tensor& o) const { return binary(Op::CMPEQ, *this, o, "eq"); }
Tensor Tensor::ne(const Tensor& o) const { return binary(Op::CMPNE, *this, o, "ne"); }
Tensor Tensor::le(const Tensor& o) const { return lt(o).logical_or(eq(o)); }
Tensor Tensor::ge(const Tensor& o) const { return gt(o).logical_or(eq(o)); }

static Tensor as_bool(const Tensor& t) { return t.cast(dtypes::boolean); }
Tensor Tensor::logical_and(const Tensor& o) const {
  return binary(Op::AND, as_bool(*this), as_bool(o), "logical_and");
}
Tensor Tensor::logical_or(const Tensor& o) const {
  return binary(Op::OR, as_bool(*this), as_bool(o), "logical_or");
}
Tensor Tensor::logical_xor(const Tensor& o) const {
  return binary(Op::XOR, as_bool(*this), as_bool(o), "logical_xor");
}
Tensor Tensor::logical_not() const {
  Tensor b = as_bool(*this);
  return binary(Op::XOR, b, b.scalar_like(1), "logical_not");
}
static void check_bitwise(const Tensor& a, const Tensor& b, const char* op) {
  LG_USER_CHECK(!is_float(a.dtype()) && !is_float(b.dtype()), op, ": needs integer or bool tensors, got ",
                name(a.dtype()), " and ", name(b.dtype()));
}
Tensor Tensor::bitwise_and(const Tensor& o) const {
  return check_bitwise(*this, o, "bitwise_and"), binary(Op::AND, *this, o, "bitwise_and");
}
Tensor Tensor::bitwise_or(const Tensor& o) const {
  return check_bitwise(*this, o, "bitwise_or"), binary(Op::OR, *this, o, "bitwise_or");
}
Tensor Tensor::bitwise_xor(const Tensor& o) const {
  return check_bitwise(*this, o, "bitwise_xor"), binary(Op::XOR, *this, o, "bitwise_xor");
}

Tensor Tensor::cast(DType t) const {
  LG_USER_CHECK(t.count == 1 && !t.ptr && t.scalar != Scalar::Void, "cast: ", name(t),
                " is not a tensor dtype");
  return t == dtype() ? *this : Tensor(make(Op::CAST, t, {node()}));
}
Tensor Tensor::bitcast(DType t) const {
  LG_USER_CHECK(itemsize(t) == itemsize(dtype()), "bitcast: ", name(dtype()), " and ", name(t),
                " differ in size");
  return t == dtype() ? *this : Tensor(make(Op::BITCAST, t, {node()}));
}

Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
Tensor operator-(const Tensor& a) { return a.neg(); }
Tensor operator+(const Tensor& a, double b) { return a.add(a.scalar_like(b)); }
Tensor operator-(const Tensor& a, double b) { return a.sub(a.scalar_like(b)); }
Tensor operator*(const Tensor& a, double b) { return a.mul(a.scalar_like(b)); }
Tensor operator/(const Tensor& a, double b) { return a.div(a.scalar_like(b)); }
Tensor operator+(double a, const Tensor& b) { return b.scalar_like(a).add(b); }
Tensor operator-(double a, const Tensor& b) { return b.scalar_like(a).sub(b); }
Tensor operator*(double a, const Tensor& b) { return b.scalar_like(a).mul(b); }
Tensor operator/(double a, const Tensor& b) { return b.scalar_like(a).div(b); }

}  // namespace lg
