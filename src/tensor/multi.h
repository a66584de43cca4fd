#pragma once
// Values spread over several devices: the allreduce, and MultiTensor (one logical tensor as shards
// or replicas). Data-parallel training (llm/train_step.h) keeps one model replica per device and
// sums gradients with allreduce(); docs/distributed.md.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace lg {

// The sum of xs (one tensor per device, same shape and dtype) on each of their devices: result[i]
// lives on xs[i]'s device. Lazy: one ALLREDUCE node per device, which the scheduler lowers into
// copies and adds (schedule/allreduce.h: the algorithm, bitwise-equal replicas). Differentiable:
// the gradient of xs[j] is the sum of the results' gradients copied to its device.
std::vector<Tensor> allreduce(const std::vector<Tensor>& xs);

// One logical tensor over a list of devices: either sharded along an axis (shard k holds the rows
// [bounds[k], bounds[k+1]) of that axis, ceil(size/devices) each, the last ones shorter or empty),
// or replicated (every shard holds the whole value).
class MultiTensor {
 public:
  static MultiTensor shard(const Tensor& t, const std::vector<std::string>& devices, int64_t axis);
  static MultiTensor replicate(const Tensor& t, const std::vector<std::string>& devices);
  // From per-device tensors: sharded along axis (their sizes along it give the bounds), or
  // replicated when axis is nullopt (all of one shape).
  static MultiTensor from_shards(std::vector<Tensor> shards, std::optional<int64_t> axis);

  const std::vector<Tensor>& shards() const { return shards_; }
  std::optional<int64_t> axis() const { return axis_; }
  std::vector<std::string> devices() const;
  Shape shape() const;  // the logical shape
  DType dtype() const { return shards_[0].dtype(); }

  // Elementwise: f shard by shard. Operands must be on the same devices; a replicated operand meets
  // a sharded one as the matching slice of itself; two sharded operands must share axis and bounds.
  MultiTensor map(const std::function<Tensor(const Tensor&)>& f) const;
  static MultiTensor zip(const MultiTensor& a, const MultiTensor& b,
                         const std::function<Tensor(const Tensor&, const Tensor&)>& f);
  MultiTensor cast(DType t) const;
  // Sum over axes. Over the sharded axis: each device sums its shard, then an allreduce makes the
  // total on every device (the result is replicated).
  MultiTensor sum(const std::vector<int64_t>& axes, bool keepdim = false) const;
  // The logical value on one device (shards copied there and concatenated; a replica copied).
  Tensor to(const std::string& device) const;
  MultiTensor& realize();

 private:
  MultiTensor(std::vector<Tensor> shards, std::optional<int64_t> axis, std::vector<int64_t> bounds)
      : shards_(std::move(shards)), axis_(axis), bounds_(std::move(bounds)) {}
  // The shard of a replicated operand that meets shard k of a tensor sharded like `like`.
  Tensor piece(size_t k, const MultiTensor& like) const;
  std::vector<Tensor> shards_;
  std::optional<int64_t> axis_;
  std::vector<int64_t> bounds_;  // sharded: devices+1 row offsets along axis_; replicated: empty
};

MultiTensor operator+(const MultiTensor& a, const MultiTensor& b);
MultiTensor operator-(const MultiTensor& a, const MultiTensor& b);
MultiTensor operator*(const MultiTensor& a, const MultiTensor& b);

}  // namespace lg
