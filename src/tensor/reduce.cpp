// Reductions and matmul.
#include <algorithm>

#include "runtime/device.h"
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

static Tensor reduce_widened(const Tensor& x, Op op, const std::vector<int64_t>& axes, bool keepdim,
                             const char* name) {
  DType acc = accumulate_dtype(x.dtype());
  Tensor r = reduce_raw(x.cast(acc), op, axes, keepdim, name);
  return is_float(x.dtype()) ? r.cast(x.dtype()) : r;
}

Tensor Tensor::sum(const std::vector<int64_t>& axes, bool keepdim) const {
  return reduce_widened(*this, Op::ADD, axes, keepdim, "sum");
}
Tensor Tensor::prod(const std::vector<int64_t>& axes, bool keepdim) const {
  return reduce_widened(*this, Op::MUL, axes, keepdim, "prod");
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

// Panel packing of the right operand. A matmul kernel walks a column panel of b (k rows of the
// tile's columns) once per output tile; read in place, each of its k rows is a different cache line
// (and, for wide b, a different page), and a transposed b (x @ W^T) has no contiguous column axis at
// all. A copy of b as (m/kPanel, k, kPanel) panels makes every panel one contiguous block, read with
// full vector loads, for O(k*m) copying against O(n*k*m) multiply-adds. The matmul then reads the
// panels through axes (n, m/kPanel, kPanel), whose strides the CPU heuristic sees as a contiguous
// panel axis (docs/cpu_backend.md). Only for a 2-D float b (a weight) and enough rows to reuse it,
// and not on GPUs (is_gpu_device): there the copy is a full extra pass over the weight, the caches
// it is made for are not there, and the panel axes split the reduction of the backward product.
// The product is realized on its own (an elementwise consumer does not fuse into it).
constexpr int64_t kPanel = 32;
static bool worth_packing(const Tensor& a, const Tensor& b) {
  if (b.ndim() != 2) return false;
  if (is_gpu_device(b.device())) return false;
  int64_t k = b.shape()[0], m = b.shape()[1], rows = a.numel() / std::max<int64_t>(1, k);
  return b.ndim() == 2 && is_float(b.dtype()) && m % kPanel == 0 && m >= 2 * kPanel && k >= 64 && rows >= 64;
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
  Tensor r;
  if (worth_packing(a, b)) {
    int64_t m = b.shape()[1];
    // panels: (m/P, k, P) in memory; x: (..., n, 1, 1, k) times y: (m/P, P, k), summed over k
    Tensor panels = b.reshape({k, m / kPanel, kPanel}).permute({1, 0, 2}).contiguous();
    Tensor x = a.cast(acc).unsqueeze(-2).unsqueeze(-2);
    Tensor y = panels.cast(acc).permute({0, 2, 1});
    Shape s = a.shape();
    s.back() = m;
    // realized as (..., n, m/P, P), so the kernel's loops keep the panel axis (a reshape to (n, m)
    // inside the kernel would index the panels with div/mod)
    r = x.mul(y).sum(-1).cast(is_bool(out) ? dtypes::int32 : out).contiguous().reshape(s);
  } else {
    // a: (..., n, 1, k) times b^T: (..., 1, m, k), summed over k
    Tensor x = a.cast(acc).unsqueeze(-2);
    Tensor y = b.cast(acc).transpose(-1, -2).unsqueeze(-3);
    r = x.mul(y).sum(-1).cast(is_bool(out) ? dtypes::int32 : out);
  }
  if (ndim() == 1) r = r.squeeze(-2);
  if (o.ndim() == 1) r = r.squeeze(-1);
  return r;
}

}  // namespace lg
