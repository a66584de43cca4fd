#pragma once
// Helpers shared by the Tensor implementation files (not part of the public API).
#include <memory>
#include <string>
#include <vector>

#include "ir/build.h"
#include "tensor/tensor.h"

namespace lg {

// What a Tensor handle points to. realize() swaps `node` for the buffer view of its value, for every
// live tensor whose node was realized, so no later graph recomputes it. Autograd (autograd.cpp) keeps
// the requires-grad flag and the accumulated gradient here, so every copy of a handle shares them.
struct TensorState {
  NodeRef node;
  bool requires_grad = false;
  Tensor grad;  // undefined until backward() reaches this tensor
};

}  // namespace lg

namespace lg::detail {

// Every live tensor's state (the registry realize() updates), in creation order.
std::vector<std::shared_ptr<TensorState>> live_tensor_states();

// Axis in [-ndim, ndim) to [0, ndim); a user error naming op otherwise.
int64_t norm_axis(int64_t axis, int64_t ndim, const char* op);
std::string shape_str(const Shape& s);
// The DEVICE node for a device name ("" = default device).
NodeRef device_of(const std::string& device);
// A scalar CONST tensor (shape ()) of dtype t on device.
Tensor scalar(double v, DType t, const NodeRef& device);
// x broadcast (numpy rules) to shape; a user error naming op when impossible.
Tensor broadcast_to(const Tensor& x, const Shape& shape, const char* op);
Shape broadcast_shape(const Shape& a, const Shape& b, const char* op);
// Applies ALU op to a and b after broadcasting and promoting them to one dtype.
Tensor binary(Op op, const Tensor& a, const Tensor& b, const char* name);
Tensor unary(Op op, const Tensor& x);
void check_same_device(const Tensor& a, const Tensor& b, const char* op);
// A reduction with `op` over axes in the tensor's own dtype (no accumulation-dtype rules).
Tensor reduce_raw(const Tensor& x, Op op, const std::vector<int64_t>& axes, bool keepdim, const char* name);
// Sorted, unique, normalized axes (all axes when empty).
std::vector<int64_t> norm_axes(const std::vector<int64_t>& axes, int64_t ndim, const char* op);

}  // namespace lg::detail
