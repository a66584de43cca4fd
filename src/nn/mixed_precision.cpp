#include "nn/mixed_precision.h"

#include "base/error.h"

namespace lg::nn {

MixedPrecision::MixedPrecision(ParamList master, DType compute)
    : master_(std::move(master)), dtype_(compute) {
  LG_USER_CHECK(is_float(compute), "MixedPrecision: the compute dtype must be a float, got ", name(compute));
  for (const auto& [n, p] : master_)
    LG_USER_CHECK(p.dtype() == dtypes::float32, "MixedPrecision: master \"", n, "\" is ", name(p.dtype()),
                  "; master weights must be float32");
}

const ParamList& MixedPrecision::begin_step() {
  compute_ = ParamList();
  std::vector<Tensor> copies;
  for (const auto& [n, p] : master_) {
    Tensor c = p.cast(dtype_).contiguous();
    copies.push_back(c);
    compute_.add(n, c);
  }
  Tensor::realize(copies);
  for (Tensor& c : copies) c.requires_grad(true);
  return compute_;
}

void MixedPrecision::accumulate_grads() {
  LG_USER_CHECK(compute_.size() == master_.size(), "MixedPrecision: accumulate_grads before begin_step");
  std::vector<Tensor> sums;
  for (size_t i = 0; i < master_.size(); i++) {
    Tensor c = compute_.items()[i].second, m = master_.items()[i].second;
    if (!c.grad().defined()) continue;
    Tensor g = c.grad().cast(dtypes::float32);
    Tensor sum = m.grad().defined() ? m.grad() + g : g;
    m.set_grad(sum);
    c.set_grad(Tensor());
    sums.push_back(sum);
  }
  Tensor::realize(sums);
}

}  // namespace lg::nn
