// Tensors made from constants and index vectors: full, zeros, ones, arange, eye.
#include "tensor/internal.h"

namespace lg {

Tensor Tensor::full(const Shape& shape, double value, DType dtype, const std::string& device) {
  for (int64_t d : shape) LG_USER_CHECK(d >= 0, "full: negative size in shape ", detail::shape_str(shape));
  return detail::scalar(value, dtype, detail::device_of(device)).expand(shape);
}
Tensor Tensor::zeros(const Shape& shape, DType dtype, const std::string& device) {
  return full(shape, 0, dtype, device);
}
Tensor Tensor::ones(const Shape& shape, DType dtype, const std::string& device) {
  return full(shape, 1, dtype, device);
}

Tensor Tensor::arange(int64_t start, int64_t stop, int64_t step, DType dtype, const std::string& device) {
  LG_USER_CHECK(step != 0, "arange: step must not be 0");
  int64_t n = step > 0 ? (stop - start + step - 1) / step : (start - stop - step - 1) / -step;
  n = std::max<int64_t>(n, 0);
  NodeRef dev = detail::device_of(device);
  DType t = is_float(dtype) ? dtype : dtypes::int64;  // integers count in int64, then cast
  Tensor i(make(Op::IOTA, t, {dev}, n));
  return i.mul(i.scalar_like(static_cast<double>(step)))
      .add(i.scalar_like(static_cast<double>(start)))
      .cast(dtype);
}

Tensor Tensor::eye(int64_t n, int64_t m, DType dtype, const std::string& device) {
  if (m < 0) m = n;
  LG_USER_CHECK(n >= 0, "eye: negative size ", n);
  Tensor r = arange(0, n, 1, dtypes::int64, device).reshape({n, 1});
  Tensor c = arange(0, m, 1, dtypes::int64, device).reshape({1, m});
  return r.eq(c).cast(dtype);
}

}  // namespace lg
