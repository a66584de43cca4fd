// Tensor state, creation from data, and realization.
#include "tensor/tensor.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "base/config.h"
#include "rewrite/rules/movement.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/realize.h"
#include "schedule/schedule.h"
#include "tensor/internal.h"

namespace lg {

namespace {
struct LiveTensors {
  std::mutex mu;
  std::vector<std::weak_ptr<TensorState>> all;
};
LiveTensors& live_tensors() {
  static LiveTensors* l = new LiveTensors();
  return *l;
}
}  // namespace

std::vector<std::shared_ptr<TensorState>> detail::live_tensor_states() {
  LiveTensors& l = live_tensors();
  std::lock_guard lock(l.mu);
  std::vector<std::shared_ptr<TensorState>> out;
  for (const std::weak_ptr<TensorState>& w : l.all)
    if (std::shared_ptr<TensorState> s = w.lock()) out.push_back(std::move(s));
  return out;
}

Tensor::Tensor(NodeRef node) : state_(std::make_shared<TensorState>(TensorState{std::move(node)})) {
  LiveTensors& l = live_tensors();
  std::lock_guard lock(l.mu);
  if (l.all.size() > 1024 && l.all.size() % 1024 == 0)  // drop dead entries now and then
    std::erase_if(l.all, [](const std::weak_ptr<TensorState>& w) { return w.expired(); });
  l.all.push_back(state_);
}

const NodeRef& Tensor::node() const {
  LG_USER_CHECK(state_ != nullptr, "use of an empty (default-constructed) Tensor");
  return state_->node;
}

int64_t Tensor::size(int64_t axis) const { return shape()[detail::norm_axis(axis, ndim(), "size")]; }

std::string Tensor::device() const { return node()->device_name(); }

Tensor Tensor::empty(const Shape& shape, DType dtype, const std::string& device) {
  int64_t n = 1;
  for (int64_t d : shape) {
    LG_USER_CHECK(d >= 0, "empty: negative size in shape ", detail::shape_str(shape));
    n *= d;
  }
  NodeRef buf = new_buffer(detail::device_of(device), dtype, n);
  return Tensor(buf).reshape(shape);
}

Tensor Tensor::from_bytes(const void* data, size_t nbytes, const Shape& shape, DType dtype,
                          const std::string& device) {
  Tensor t = empty(shape, dtype, device);
  size_t want = static_cast<size_t>(t.numel()) * itemsize(dtype);
  LG_USER_CHECK(nbytes == want, "from_bytes: ", nbytes, " bytes given for shape ", detail::shape_str(shape),
                " of ", name(dtype), ", which needs ", want);
  const Node* buf = view_base(t.node().get());
  buffer_copy_in(*buf, data, nbytes);
  return t;
}

// The host data goes to the device as float64; the conversion to dtype is a CAST in the graph.
Tensor Tensor::from_doubles(const std::vector<double>& v, const Shape& shape, DType dtype,
                            const std::string& device) {
  return from_bytes(v.data(), v.size() * sizeof(double), shape, dtypes::float64, device).cast(dtype);
}

void Tensor::realize(const std::vector<Tensor>& ts) {
  std::vector<NodeRef> roots;
  for (const Tensor& t : ts) roots.push_back(t.node());
  std::vector<NodeRef> out = lg::realize(make(Op::SINK, dtypes::void_, roots));
  // Every live tensor holding a realized node now holds its buffer view instead.
  std::vector<std::pair<const Node*, NodeRef>> becomes;
  for (size_t i = 0; i < roots.size(); i++)
    if (roots[i] != out[i]) becomes.emplace_back(roots[i].get(), out[i]);
  LiveTensors& l = live_tensors();
  std::lock_guard lock(l.mu);
  std::erase_if(l.all, [&](const std::weak_ptr<TensorState>& w) {
    std::shared_ptr<TensorState> s = w.lock();
    if (!s) return true;
    for (auto& [from, to] : becomes)
      if (s->node.get() == from) s->node = to;
    return false;
  });
}

Tensor& Tensor::realize() {
  realize(std::vector<Tensor>{*this});
  return *this;
}

Tensor Tensor::contiguous() const { return Tensor(make(Op::CONTIGUOUS, dtype(), {node()})); }

Tensor Tensor::to(const std::string& device) const {
  NodeRef d = detail::device_of(device);
  if (d.get() == node()->device) return *this;
  return Tensor(make(Op::COPY, dtype(), {node(), d}));
}

Tensor& Tensor::assign(const Tensor& value) {
  LG_USER_CHECK(value.shape() == shape() || value.numel() == 1, "assign: value of shape ",
                detail::shape_str(value.shape()), " into a tensor of shape ", detail::shape_str(shape()));
  detail::check_same_device(*this, value, "assign");
  Tensor v = detail::broadcast_to(value.cast(dtype()), shape(), "assign");
  // The target is this tensor's buffer: a pending ASSIGN writes the same buffer again (the value may
  // read the pending one, which then runs first in the same schedule); a lazy value gets a buffer now.
  NodeRef target = node();
  if (target->op == Op::ASSIGN) {
    target = target->src[0];
  } else if (element_range(target.get()).base->op != Op::BUFFER) {  // not a run of a buffer's elements
    Tensor t = contiguous();
    t.realize();
    target = t.node();
  }
  state_->node = make(Op::ASSIGN, dtype(), {target, v.node()});
  return *this;
}

namespace {
// Whether n's value is all zeros: a CONST 0 under movement ops (which move or pad with zeros).
bool is_zeros(const Node* n) {
  while (is_movement(n->op)) n = n->src[0].get();
  return n->is_const_value(0);
}
// The form of a GATHER's gradient (tensor/gradient.cpp): SCATTER_ADD(ASSIGN(buffer, zeros), index,
// values), maybe under a CAST (16-bit values are summed in float32); null when n is not one.
const Node* scatter_into_zeros(const Node* n) {
  if (n->op == Op::CAST) n = n->src[0].get();
  if (n->op != Op::SCATTER_ADD) return nullptr;
  const Node* t = n->src[0].get();
  bool zeroed = t->op == Op::ASSIGN && is_zeros(t->src[1].get());
  return zeroed ? n : nullptr;
}
}  // namespace

Tensor& Tensor::accumulate(const Tensor& value, bool overwrite) {
  LG_USER_CHECK(value.shape() == shape(), "accumulate: value of shape ", detail::shape_str(value.shape()),
                " into a tensor of shape ", detail::shape_str(shape()));
  detail::check_same_device(*this, value, "accumulate");
  const Node* s = scatter_into_zeros(value.node().get());
  // the scatter needs this tensor's own buffer (a pending ASSIGN, or a run of a buffer's elements)
  bool in_place = node()->op == Op::ASSIGN || element_range(node().get()).base->op == Op::BUFFER;
  if (s == nullptr || !in_place) return assign(overwrite ? value : *this + value.cast(dtype()));
  if (overwrite) assign(zeros(shape(), dtype(), device()));
  Tensor values = Tensor(s->src[2]).cast(dtype());
  state_->node = make(Op::SCATTER_ADD, dtype(), {node(), s->src[1], values.node()}, s->get_arg<int64_t>());
  return *this;
}

Tensor& Tensor::replace(const Tensor& value) {
  LG_USER_CHECK(value.shape() == shape() && value.dtype() == dtype(), "replace: value of shape ",
                detail::shape_str(value.shape()), " ", name(value.dtype()), " for a tensor of shape ",
                detail::shape_str(shape()), " ", name(dtype()), "; they must match");
  detail::check_same_device(*this, value, "replace");
  state_->node = value.node();  // the same values: requires_grad and grad still hold
  return *this;
}

std::vector<uint8_t> Tensor::to_host() const {
  Tensor t = *this;  // shares this tensor's state: realizing it realizes this one
  t.realize();
  if (!is_contiguous_buffer_view(t.node().get())) t = t.contiguous().realize();
  const Node* buf = view_base(t.node().get());
  LG_CHECK(buf != nullptr && is_contiguous_buffer_view(t.node().get()),
           "realized tensor is not a contiguous buffer");
  std::vector<uint8_t> out(static_cast<size_t>(t.numel()) * itemsize(dtype()));
  buffer_copy_out(*buf, out.data(), out.size());
  return out;
}

std::vector<double> Tensor::to_doubles() const {
  std::vector<uint8_t> bytes = cast(dtypes::float64).to_host();  // converted by a CAST kernel
  std::vector<double> out(static_cast<size_t>(numel()));
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

}  // namespace lg
