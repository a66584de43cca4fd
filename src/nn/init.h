#pragma once
// Parameter initializers. Each returns a realized, contiguous tensor (its own buffer) so optimizers
// can assign() into it. Random ones draw from Tensor's counter-based generator, so they depend only
// on Tensor::manual_seed and the order of draws.
#include "tensor/tensor.h"

namespace lg::nn::init {

// N(0, std^2) elements.
Tensor normal(const Shape& shape, double std, DType dtype = dtypes::float32, const std::string& device = "");
// N(0, (std / sqrt(2 * num_layers))^2): the GPT-2/Megatron scaling for projections that write into
// the residual stream, so its variance does not grow with depth.
Tensor scaled_normal(const Shape& shape, double std, int64_t num_layers, DType dtype = dtypes::float32,
                     const std::string& device = "");
Tensor zeros(const Shape& shape, DType dtype = dtypes::float32, const std::string& device = "");
Tensor ones(const Shape& shape, DType dtype = dtypes::float32, const std::string& device = "");

}  // namespace lg::nn::init
