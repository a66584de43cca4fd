// Reductions and matmul.
#include <algorithm>

#include "tensor/internal.h"

namespace lg {
namespace detail {

std::vector<int64_t> norm_axes(const std::vector<int64_t>& axes, int64_t ndim, const char* op) {
  std::vector<int64_t> out;
  if (axes.empty()) {
    for (int64_t i = 0; i < ndim; i++) out.push_back(i);
    return out;
  }
  for (int64_t a : axes) out.push_back(norm_axis(a, ndim, op));
  std::sort(out.begin(), out.end());
  LG_USER_CHECK(std::adjacent_find(out.begin(), out.end()) == out.end(), op, ": an axis appears twice");
  return out;
}

Tensor reduce_raw(const Tensor& x, Op op, const std::vector<int64_t>& axes, bool keepdim, const char* name) {
  std::vector<int64_t> ax = norm_axes(axes, x.ndim(), name);
  Tensor r = ax.empty() ? x : Tensor(make(Op::REDUCE_AXIS, x.dtype(), {x.node()}, ReduceArg{op, ax}));
  if (keepdim) return r;
  Shape s;
  for (int64_t i = 0; i < x.ndim(); i++)
    if (std::find(ax.begin(), ax.end(), i) == ax.end()) s.push_back(x.shape()[i]);
  return r.reshape(s);
}

}  // namespace detail

using detail::reduce_raw;

// Sums and products accumulate small integers in 32 bits and 16-bit floats in float32 (and cast
// the result back to the 16-bit float).
static DType accumulate_dtype(DType t) {
  if (is_bool(t) || (is_int(t) && !is_unsigned(t) && bitsize(t.scalar) < 32)) return dtypes::int32;
  if (is_unsigned(t) && bitsize(t.scalar) < 32) return dtypes::uint32;
  if (t == dtypes::float16 || t == dtypes::bfloat16) return dtypes::float32;
  return t;
}

static Tensor accumulate(const Tensor& x, Op op, const std::vector<int64_t>& axes, bool keepdim,
                         const char* name) {
  DType acc = accumulate_dtype(x.dtype());
  Tensor r = reduce_raw(x.cast(acc), op, axes, keepdim, name);
  return is_float(x.dtype()) ? r.cast(x.dtype()) : r;
}

Tensor Tensor::sum(const std::vector<int64_t>& axes, bool keepdim) const {
  return accumulate(*this, Op::ADD, axes, keepdim, "sum");
}
Tensor Tensor::prod(const std::vector<int64_t>& axes, bool keepdim) const {
  return accumulate(*this, Op::MUL, axes, keepdim, "prod");
}
Tensor Tensor::max(const std::vector<int64_t>& axes, bool keepdim) const {
  return reduce_raw(*this, Op::MAX, axes, keepdim, "max");
}

// min(x) = -max(-x) for floats (NaN propagates); ~max(~x) for integers (~ reverses the order of
// signed and unsigned values alike); and(x) for bool.
Tensor Tensor::min(const std::vector<int64_t>& axes, bool keepdim) const {
  if (is_float(dtype())) return neg().max(axes, keepdim).neg();
  Tensor ones = scalar_like(-1).cast(dtype());
  if (is_bool(dtype())) return logical_not().max(axes, keepdim).logical_not();
  return bitwise_xor(ones).max(axes, keepdim).bitwise_xor(ones);
}

Tensor Tensor::mean(const std::vector<int64_t>& axes, bool keepdim) const {
  std::vector<int64_t> ax = detail::norm_axes(axes, ndim(), "mean");
  int64_t n = 1;
  for (int64_t a : ax) n *= shape()[a];
  DType out = is_float(dtype()) ? dtype() : dtypes::default_float;
  Tensor s = cast(accumulate_dtype(out)).sum(ax, keepdim);
  return s.div(s.scalar_like(static_cast<double>(n))).cast(out);
}

Tensor Tensor::var(const std::vector<int64_t>& axes, bool keepdim, int64_t correction) const {
  std::vector<int64_t> ax = detail::norm_axes(axes, ndim(), "var");
  int64_t n = 1;
  for (int64_t a : ax) n *= shape()[a];
  DType out = is_float(dtype()) ? dtype() : dtypes::default_float;
  Tensor x = cast(accumulate_dtype(out));
  Tensor d = x.sub(x.mean(ax, true));
  Tensor s = d.mul(d).sum(ax, keepdim);
  return s.div(s.scalar_like(static_cast<double>(std::max<int64_t>(n - correction, 0)))).cast(out);
}

// The first index of the maximum: among positions equal to the max, the one with the largest
// reversed index n - i.
Tensor Tensor::argmax(int64_t axis, bool keepdim) const {
  int64_t a = detail::norm_axis(axis, ndim(), "argmax");
  int64_t n = ndim() == 0 ? 1 : shape()[a];
  Tensor x = ndim() == 0 ? reshape({1}) : *this;
  Tensor m = x.max(std::vector<int64_t>{a}, true);
  Shape s(x.ndim(), 1);
  s[a] = n;
  Tensor rev = Tensor::arange(n, 0, -1, dtypes::int32, device()).reshape(s);
  Tensor hit = x.eq(m).where(rev, rev.scalar_like(0));
  Tensor idx = hit.max(std::vector<int64_t>{a}, keepdim);
  return idx.scalar_like(static_cast<double>(n)).sub(idx);
}

Tensor Tensor::matmul(const Tensor& o) const {
  LG_USER_CHECK(ndim() >= 1 && o.ndim() >= 1, "matmul: operands must have at least one axis, got ",
                detail::shape_str(shape()), " and ", detail::shape_str(o.shape()));
  Tensor a = ndim() == 1 ? unsqueeze(0) : *this;
  Tensor b = o.ndim() == 1 ? o.unsqueeze(-1) : o;
  int64_t k = a.shape().back();
  LG_USER_CHECK(b.shape()[b.ndim() - 2] == k, "matmul: inner dimensions differ (", k, " vs ",
                b.shape()[b.ndim() - 2], ") for shapes ", detail::shape_str(shape()), " and ",
                detail::shape_str(o.shape()));
  DType out = promote(a.dtype(), b.dtype());
  DType acc = accumulate_dtype(out);
  // a: (..., n, 1, k) times b^T: (..., 1, m, k), summed over k
  Tensor x = a.cast(acc).unsqueeze(-2);
  Tensor y = b.cast(acc).transpose(-1, -2).unsqueeze(-3);
  Tensor r = x.mul(y).sum(-1).cast(is_bool(out) ? dtypes::int32 : out);
  if (ndim() == 1) r = r.squeeze(-2);
  if (o.ndim() == 1) r = r.squeeze(-1);
  return r;
}

}  // namespace lg
