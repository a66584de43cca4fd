#pragma once
// Parameter initializers. Each returns a realized, contiguous tensor (its own buffer) so optimizers
// can assign() into it, or, inside a Deferred scope, one that the scope realizes. Random ones draw
// from Tensor's counter-based generator, so they depend only on Tensor::manual_seed and the order
// of draws (not on when they are realized).
#include <vector>

#include "tensor/tensor.h"

namespace lg::nn::init {

// While a Deferred lives, the random initializers called on its thread return their tensors
// unrealized and record them (zeros and ones are realized at once: they would be one node);
// realize() realizes them all as one schedule, so a model's parameters are a few
// kernels compiled together (runtime/c_batch.h) rather than one schedule and one compile each (the
// tiny model's cold start spent 3 s there). Scopes nest: the innermost records. A scope left
// without realize() (an exception while building the model) realizes nothing.
class Deferred {
 public:
  Deferred();
  ~Deferred();
  Deferred(const Deferred&) = delete;
  Deferred& operator=(const Deferred&) = delete;
  void realize();  // every tensor recorded so far, in one schedule; then the record is empty
  void record(const Tensor& t) { pending_.push_back(t); }

 private:
  std::vector<Tensor> pending_;
  Deferred* outer_;
};

// N(0, std^2) elements.
Tensor normal(const Shape& shape, double std, DType dtype = dtypes::float32, const std::string& device = "");
// N(0, (std / sqrt(2 * num_layers))^2): the GPT-2/Megatron scaling for projections that write into
// the residual stream, so its variance does not grow with depth.
Tensor scaled_normal(const Shape& shape, double std, int64_t num_layers, DType dtype = dtypes::float32,
                     const std::string& device = "");
Tensor zeros(const Shape& shape, DType dtype = dtypes::float32, const std::string& device = "");
Tensor ones(const Shape& shape, DType dtype = dtypes::float32, const std::string& device = "");

}  // namespace lg::nn::init
