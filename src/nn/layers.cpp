#include "nn/layers.h"

#include "base/error.h"
#include "nn/init.h"

namespace lg::nn {

static std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

// p.at(name) after checking it has want's shape.
static Tensor bound(const ParamList& p, const std::string& name, const Tensor& want) {
  const Tensor& t = p.at(name);
  LG_USER_CHECK(t.shape() == want.shape(), "bind: \"", name, "\" has shape ", shape_str(t.shape()),
                ", the layer needs ", shape_str(want.shape()));
  return t;
}

Linear::Linear(int64_t in, int64_t out, bool has_bias, double init_std) {
  LG_USER_CHECK(in > 0 && out > 0, "Linear: sizes must be positive, got in=", in, " out=", out);
  weight = init::normal({out, in}, init_std).requires_grad(true);
  if (has_bias) bias = init::zeros({out}).requires_grad(true);
}

Tensor Linear::operator()(const Tensor& x) const {
  LG_USER_CHECK(x.ndim() >= 1 && x.shape().back() == weight.shape()[1], "Linear: input ",
                shape_str(x.shape()), " does not end in the layer's input size ", weight.shape()[1]);
  Tensor y = x.matmul(weight.cast(x.dtype()).transpose());
  return bias.defined() ? y + bias.cast(y.dtype()) : y;
}

ParamList Linear::params() const {
  ParamList p;
  p.add("weight", weight);
  if (bias.defined()) p.add("bias", bias);
  return p;
}

void Linear::bind(const ParamList& p) {
  weight = bound(p, "weight", weight);
  if (bias.defined()) bias = bound(p, "bias", bias);
}

Embedding::Embedding(int64_t num, int64_t dim, double init_std) {
  LG_USER_CHECK(num > 0 && dim > 0, "Embedding: sizes must be positive, got num=", num, " dim=", dim);
  weight = init::normal({num, dim}, init_std).requires_grad(true);
}

// gather along axis 0 of the table with the ids broadcast over the embedding axis:
// ids (n) -> index (n, dim) -> rows (n, dim); out-of-range ids give zero rows.
Tensor Embedding::operator()(const Tensor& ids) const {
  LG_USER_CHECK(is_int(ids.dtype()), "Embedding: ids must be integers, got ", name(ids.dtype()));
  int64_t n = ids.numel(), dim = weight.shape()[1];
  Tensor index = ids.reshape({n, 1}).expand({n, dim});
  Shape out = ids.shape();
  out.push_back(dim);
  return weight.gather(0, index).reshape(out);
}

ParamList Embedding::params() const {
  ParamList p;
  p.add("weight", weight);
  return p;
}

void Embedding::bind(const ParamList& p) { weight = bound(p, "weight", weight); }

RMSNorm::RMSNorm(int64_t dim, double eps_) : weight(init::ones({dim}).requires_grad(true)), eps(eps_) {
  LG_USER_CHECK(dim > 0, "RMSNorm: dim must be positive, got ", dim);
}

Tensor RMSNorm::operator()(const Tensor& x) const {
  LG_USER_CHECK(x.ndim() >= 1 && x.shape().back() == weight.shape()[0], "RMSNorm: input ",
                shape_str(x.shape()), " does not end in the layer's size ", weight.shape()[0]);
  Tensor y = x.cast(dtypes::float32).rms_norm(-1, eps) * weight;
  return y.cast(x.dtype());
}

ParamList RMSNorm::params() const {
  ParamList p;
  p.add("weight", weight);
  return p;
}

void RMSNorm::bind(const ParamList& p) { weight = bound(p, "weight", weight); }

}  // namespace lg::nn
