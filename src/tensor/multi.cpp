#include "tensor/multi.h"

#include <algorithm>

#include "base/error.h"
#include "runtime/device.h"
#include "tensor/internal.h"

namespace lg {

std::vector<Tensor> allreduce(const std::vector<Tensor>& xs) {
  LG_USER_CHECK(!xs.empty(), "allreduce: no tensors given");
  std::vector<NodeRef> src(1);
  for (const Tensor& x : xs) {
    LG_USER_CHECK(x.shape() == xs[0].shape() && x.dtype() == xs[0].dtype(), "allreduce: tensors of shapes ",
                  detail::shape_str(xs[0].shape()), " ", name(xs[0].dtype()), " and ", detail::shape_str(x.shape()),
                  " ", name(x.dtype()), "; all must match");
    src.push_back(x.node());
  }
  std::vector<Tensor> out;
  for (const Tensor& x : xs) {
    src[0] = NodeRef::share(x.node()->device);
    out.emplace_back(make(Op::ALLREDUCE, x.dtype(), src));
  }
  return out;
}

namespace {
int64_t norm_axis(int64_t axis, int64_t nd) {
  LG_USER_CHECK(axis >= -nd && axis < nd, "shard: axis ", axis, " out of range for a tensor of rank ", nd);
  return axis < 0 ? axis + nd : axis;
}
}  // namespace

MultiTensor MultiTensor::shard(const Tensor& t, const std::vector<std::string>& devices, int64_t axis) {
  LG_USER_CHECK(!devices.empty(), "shard: no devices given");
  int64_t a = norm_axis(axis, t.ndim());
  int64_t n = t.shape()[a], k = static_cast<int64_t>(devices.size());
  int64_t each = (n + k - 1) / k;
  std::vector<Tensor> shards;
  std::vector<int64_t> bounds{0};
  for (int64_t i = 0; i < k; i++) {
    int64_t b = std::min(n, i * each), e = std::min(n, (i + 1) * each);
    shards.push_back(t.slice(a, b, e).to(devices[i]));
    bounds.push_back(e);
  }
  return MultiTensor(std::move(shards), a, std::move(bounds));
}

MultiTensor MultiTensor::replicate(const Tensor& t, const std::vector<std::string>& devices) {
  LG_USER_CHECK(!devices.empty(), "replicate: no devices given");
  std::vector<Tensor> shards;
  for (const std::string& d : devices) shards.push_back(t.to(d));
  return MultiTensor(std::move(shards), std::nullopt, {});
}

MultiTensor MultiTensor::from_shards(std::vector<Tensor> shards, std::optional<int64_t> axis) {
  LG_USER_CHECK(!shards.empty(), "MultiTensor: no shards given");
  std::vector<int64_t> bounds;
  if (axis) {
    *axis = norm_axis(*axis, shards[0].ndim());
    bounds.push_back(0);
  }
  for (const Tensor& s : shards) {
    LG_USER_CHECK(s.ndim() == shards[0].ndim() && s.dtype() == shards[0].dtype(),
                  "MultiTensor: shards differ in rank or dtype");
    for (int64_t i = 0; i < s.ndim(); i++)
      LG_USER_CHECK((axis && i == *axis) || s.shape()[i] == shards[0].shape()[i], "MultiTensor: shards of shapes ",
                    detail::shape_str(shards[0].shape()), " and ", detail::shape_str(s.shape()),
                    axis ? " differ outside the sharded axis" : " in a replicated tensor");
    if (axis) bounds.push_back(bounds.back() + s.shape()[*axis]);
  }
  return MultiTensor(std::move(shards), axis, std::move(bounds));
}

std::vector<std::string> MultiTensor::devices() const {
  std::vector<std::string> out;
  for (const Tensor& s : shards_) out.push_back(s.device());
  return out;
}

Shape MultiTensor::shape() const {
  Shape s = shards_[0].shape();
  if (axis_) s[*axis_] = bounds_.back();
  return s;
}

MultiTensor MultiTensor::map(const std::function<Tensor(const Tensor&)>& f) const {
  std::vector<Tensor> out;
  for (const Tensor& s : shards_) out.push_back(f(s));
  return MultiTensor(std::move(out), axis_, bounds_);
}

Tensor MultiTensor::piece(size_t k, const MultiTensor& like) const {
  if (axis_ || !like.axis_) return shards_[k];
  int64_t a = *like.axis_;
  if (shards_[k].ndim() <= a || shards_[k].shape()[a] == 1) return shards_[k];  // broadcasts against it
  return shards_[k].slice(a, like.bounds_[k], like.bounds_[k + 1]);
}

MultiTensor MultiTensor::zip(const MultiTensor& a, const MultiTensor& b,
                             const std::function<Tensor(const Tensor&, const Tensor&)>& f) {
  LG_USER_CHECK(a.devices() == b.devices(), "MultiTensor: operands on different device lists");
  LG_USER_CHECK(!a.axis_ || !b.axis_ || (a.axis_ == b.axis_ && a.bounds_ == b.bounds_),
                "MultiTensor: operands sharded differently (reshard one first)");
  const MultiTensor& like = a.axis_ ? a : b;
  std::vector<Tensor> out;
  for (size_t k = 0; k < a.shards_.size(); k++) out.push_back(f(a.piece(k, like), b.piece(k, like)));
  return MultiTensor(std::move(out), like.axis_, like.bounds_);
}

MultiTensor MultiTensor::cast(DType t) const {
  return map([t](const Tensor& s) { return s.cast(t); });
}

MultiTensor MultiTensor::sum(const std::vector<int64_t>& axes, bool keepdim) const {
  int64_t nd = shards_[0].ndim();
  std::vector<int64_t> norm;
  for (int64_t a : axes) norm.push_back(norm_axis(a, nd));
  if (axes.empty())
    for (int64_t a = 0; a < nd; a++) norm.push_back(a);
  bool over_shards = axis_ && std::find(norm.begin(), norm.end(), *axis_) != norm.end();
  std::vector<Tensor> partial;
  for (const Tensor& s : shards_) partial.push_back(s.sum(norm, keepdim));
  if (over_shards) return MultiTensor(allreduce(partial), std::nullopt, {});
  std::optional<int64_t> axis = axis_;
  if (axis && !keepdim) {  // the sharded axis moves left past the removed ones
    int64_t removed = 0;
    for (int64_t a : norm) removed += a < *axis;
    *axis -= removed;
  }
  return MultiTensor(std::move(partial), axis, bounds_);
}

Tensor MultiTensor::to(const std::string& device) const {
  if (!axis_) {
    for (const Tensor& s : shards_)
      if (s.device() == canonical_device(device)) return s;
    return shards_[0].to(device);
  }
  std::vector<Tensor> parts;
  for (const Tensor& s : shards_)
    if (s.shape()[*axis_] > 0) parts.push_back(s.to(device));
  return Tensor::cat(parts, *axis_);
}

MultiTensor& MultiTensor::realize() {
  Tensor::realize(shards_);
  return *this;
}

MultiTensor operator+(const MultiTensor& a, const MultiTensor& b) {
  return MultiTensor::zip(a, b, [](const Tensor& x, const Tensor& y) { return x + y; });
}
MultiTensor operator-(const MultiTensor& a, const MultiTensor& b) {
  return MultiTensor::zip(a, b, [](const Tensor& x, const Tensor& y) { return x - y; });
}
MultiTensor operator*(const MultiTensor& a, const MultiTensor& b) {
  return MultiTensor::zip(a, b, [](const Tensor& x, const Tensor& y) { return x * y; });
}

}  // namespace lg
