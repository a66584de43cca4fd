#include "nn/init.h"

#include <cmath>

#include "base/error.h"

namespace lg::nn::init {

static thread_local Deferred* deferring = nullptr;  // the innermost live scope on this thread

Deferred::Deferred() : outer_(deferring) { deferring = this; }
Deferred::~Deferred() { deferring = outer_; }

void Deferred::realize() {
  if (!pending_.empty()) Tensor::realize(pending_);
  pending_.clear();
}

// A copy of t in a buffer of its own (a constant's expand has no buffer to assign into), realized
// now. Only drawn tensors may be deferred (deferrable): the IR is hash-consed, so two unrealized
// ones() of one shape are one node, and realizing it would give both parameters one buffer; each
// draw is a graph of its own (its counter), and a constant's kernel is one compile for all.
static Tensor materialize(const Tensor& t, bool deferrable = false) {
  Tensor c = t.contiguous();
  if (!deferring || !deferrable) return c.realize();
  deferring->record(c);
  return c;
}

Tensor normal(const Shape& shape, double std, DType dtype, const std::string& device) {
  LG_USER_CHECK(std >= 0, "init::normal: std must be >= 0, got ", std);
  Tensor r = Tensor::randn(shape, dtypes::float32, device);
  return materialize((r * std).cast(dtype), true);
}

Tensor scaled_normal(const Shape& shape, double std, int64_t num_layers, DType dtype,
                     const std::string& device) {
  LG_USER_CHECK(num_layers > 0, "init::scaled_normal: num_layers must be positive, got ", num_layers);
  return normal(shape, std / std::sqrt(2.0 * static_cast<double>(num_layers)), dtype, device);
}

Tensor zeros(const Shape& shape, DType dtype, const std::string& device) {
  return materialize(Tensor::zeros(shape, dtype, device));
}
Tensor ones(const Shape& shape, DType dtype, const std::string& device) {
  return materialize(Tensor::ones(shape, dtype, device));
}

}  // namespace lg::nn::init
