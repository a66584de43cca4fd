#pragma once
// Layers: each owns its weights (realized float32 tensors that require grad) and exposes them by
// name through params(). Weights are handles, so an optimizer updating params() updates the layer.
// bind(p) makes the layer use other tensors of the same names and shapes (e.g. the bfloat16 compute
// copies of mixed precision); a user error names a missing or mis-shaped entry.
#include "nn/params.h"

namespace lg::nn {

// y = x W^T (+ b). x: (..., in) -> (..., out); W: (out, in) as in PyTorch and Hugging Face files.
class Linear {
 public:
  Linear(int64_t in, int64_t out, bool bias = false, double init_std = 0.02);
  Tensor operator()(const Tensor& x) const;
  ParamList params() const;  // "weight" (and "bias")
  void bind(const ParamList& p);
  Tensor weight, bias;  // bias undefined without one
};

// Rows of a (num, dim) table. ids: integer (...) -> (..., dim).
class Embedding {
 public:
  Embedding(int64_t num, int64_t dim, double init_std = 0.02);
  Tensor operator()(const Tensor& ids) const;
  ParamList params() const;  // "weight"
  void bind(const ParamList& p);
  Tensor weight;
};

// y = rms_norm(x) * weight over the last axis, computed in float32 and returned in x's dtype
// (as Llama does). weight: (dim), initialized to ones.
class RMSNorm {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-5);
  Tensor operator()(const Tensor& x) const;
  ParamList params() const;  // "weight"
  void bind(const ParamList& p);
  Tensor weight;
  double eps;
};

}  // namespace lg::nn
