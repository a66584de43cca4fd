// The Tensor side of autograd: requires_grad flags, accumulated gradients, backward(), gradients()
// and detach(). The rules themselves are in gradient.cpp.
#include <unordered_set>

#include "ir/graph.h"
#include "tensor/gradient.h"
#include "tensor/internal.h"

namespace lg {

Tensor& Tensor::requires_grad(bool on) {
  LG_USER_CHECK(!on || is_float(dtype()), "requires_grad: only float tensors have gradients, this one is ",
                name(dtype()));
  state_->requires_grad = on;
  return *this;
}
bool Tensor::requires_grad() const { return defined() && state_->requires_grad; }
Tensor Tensor::grad() const {
  node();
  return state_->grad;
}
void Tensor::set_grad(const Tensor& g) {
  node();
  if (g.defined())
    LG_USER_CHECK(g.shape() == shape(), "set_grad: gradient of shape ", detail::shape_str(g.shape()),
                  " for a tensor of shape ", detail::shape_str(shape()));
  state_->grad = g;
}

Tensor Tensor::detach() const { return Tensor(make(Op::DETACH, dtype(), {node()})); }

static void check_loss(const Tensor& loss, const char* op) {
  LG_USER_CHECK(loss.numel() == 1, op, ": the loss must have one element, got shape ",
                detail::shape_str(loss.shape()), "; reduce it first (e.g. .sum() or .mean())");
  LG_USER_CHECK(is_float(loss.dtype()), op, ": the loss must be a float tensor, got ", name(loss.dtype()));
}

// The gradient that starts the walk: ones of the loss's shape and dtype.
static NodeRef ones_like(const Tensor& loss) {
  return detail::scalar(1, loss.dtype(), NodeRef::share(loss.node()->device)).expand(loss.shape()).node();
}

void Tensor::backward() const {
  check_loss(*this, "backward");
  std::vector<const Node*> order = toposort(node());
  std::unordered_set<const Node*> in_graph(order.begin(), order.end());
  std::vector<std::shared_ptr<TensorState>> wanted;
  std::vector<NodeRef> targets;
  for (std::shared_ptr<TensorState>& s : detail::live_tensor_states())
    if (s->requires_grad && in_graph.count(s->node.get())) {
      targets.push_back(s->node);
      wanted.push_back(std::move(s));
    }
  LG_USER_CHECK(!targets.empty(),
                "backward: the loss depends on no tensor that requires grad (mark "
                "parameters with requires_grad(true); call backward() before realizing the loss)");
  std::vector<NodeRef> grads = compute_gradient(node(), ones_like(*this), targets);
  for (size_t i = 0; i < wanted.size(); i++) {
    if (!grads[i]) continue;  // reached only through non-differentiable ops
    Tensor g(grads[i]);
    wanted[i]->grad = wanted[i]->grad.defined() ? wanted[i]->grad + g : g;
  }
}

std::vector<Tensor> Tensor::gradients(const Tensor& loss, const std::vector<Tensor>& wrt) {
  check_loss(loss, "gradients");
  std::vector<NodeRef> targets;
  for (const Tensor& t : wrt) targets.push_back(t.node());
  std::vector<NodeRef> grads = compute_gradient(loss.node(), ones_like(loss), targets);
  std::vector<Tensor> out;
  for (size_t i = 0; i < grads.size(); i++) {
    LG_USER_CHECK(grads[i], "gradients: the loss does not depend on tensor ", i, " of shape ",
                  detail::shape_str(wrt[i].shape()), " through differentiable ops");
    out.emplace_back(grads[i]);
  }
  return out;
}

}  // namespace lg
