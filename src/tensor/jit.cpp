#include "tensor/jit.h"

#include "rewrite/rules/movement.h"
#include "runtime/capture.h"
#include "runtime/replay.h"
#include "schedule/schedule.h"
#include "tensor/internal.h"

namespace lg {
namespace {

// The inputs as realized, contiguous buffer views: captured kernels index their buffers row-major,
// so every call must bind buffers laid out that way. Already-realized inputs schedule nothing.
std::vector<Tensor> realized_inputs(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out;
  bool pending = false;
  for (size_t i = 0; i < inputs.size(); i++) {
    LG_USER_CHECK(inputs[i].defined(), "Jit: input ", i, " is an empty (default-constructed) Tensor");
    Tensor t = inputs[i];
    if (!is_contiguous_buffer_view(t.node().get())) {
      t = is_buffer_view(t.node().get()) ? t.contiguous() : t;
      pending = true;
    }
    out.push_back(t);
  }
  if (pending) Tensor::realize(out);
  for (Tensor& t : out)  // a realized value may still be a strided view (a transposed buffer)
    if (!is_contiguous_buffer_view(t.node().get())) t = t.contiguous().realize();
  return out;
}

std::vector<NodeRef> base_buffers(const std::vector<Tensor>& ts) {
  std::vector<NodeRef> out;
  for (const Tensor& t : ts) {
    const Node* b = view_base(t.node().get());
    LG_CHECK(b != nullptr, "realized tensor is not a buffer view");
    out.push_back(NodeRef::share(b));
  }
  return out;
}

// Realizes every live tensor whose value is an assign() not realized yet, together with extra.
// Before a capture this settles assigns left pending by earlier calls (so they are not recorded);
// inside it, it records the function's own assigns even when no output depends on them.
void realize_with_pending_assigns(std::vector<Tensor> extra) {
  for (const std::shared_ptr<TensorState>& s : detail::live_tensor_states())
    if (s->node->op == Op::ASSIGN) extra.emplace_back(s->node);  // realizing it updates every holder
  if (!extra.empty()) Tensor::realize(extra);
}

// view with its BUFFER replaced by base (same dtype and size).
NodeRef rebase_view(const NodeRef& view, const NodeRef& base) {
  if (view->op == Op::BUFFER) return base;
  LG_CHECK(is_movement(view->op), "output view contains ", op_name(view->op));
  std::vector<NodeRef> src = view->src;
  src[0] = rebase_view(src[0], base);
  return make(view->op, view->dtype, src, view->arg);
}

}  // namespace

Jit::Jit(Fn fn) : fn_(std::move(fn)) {}

Jit::~Jit() = default;

// A call that throws does not count: after a failed capture the next call captures again.
std::vector<Tensor> Jit::operator()(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out = calls_ == 0 ? fn_(inputs) : plan_ ? replay(inputs) : capture(inputs);
  calls_++;
  return out;
}

std::vector<Tensor> Jit::capture(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> ins = realized_inputs(inputs);
  std::vector<NodeRef> in_bufs = base_buffers(ins);
  for (size_t i = 0; i < in_bufs.size(); i++)
    for (size_t j = 0; j < i; j++)
      LG_USER_CHECK(in_bufs[i] != in_bufs[j], "Jit: inputs ", j, " and ", i,
                    " share one buffer; the captured call needs distinct input tensors");
  realize_with_pending_assigns({});
  std::vector<Tensor> outs;
  Capture recorded;
  {
    CaptureSession session;
    outs = fn_(ins);
    for (size_t i = 0; i < outs.size(); i++)
      LG_USER_CHECK(outs[i].defined(), "Jit: output ", i, " of the function is an empty Tensor");
    realize_with_pending_assigns(outs);
    recorded = session.take();
  }
  std::vector<NodeRef> out_bufs = base_buffers(outs);
  std::vector<Output> outputs;
  for (size_t i = 0; i < outs.size(); i++) {
    Output o{outs[i].node()};
    for (size_t k = 0; k < in_bufs.size(); k++)
      if (out_bufs[i] == in_bufs[k]) o.input = static_cast<int>(k);
    outputs.push_back(o);
  }
  plan_ = std::make_unique<ReplayPlan>(std::move(recorded), in_bufs, out_bufs);
  outputs_ = std::move(outputs);
  signature_.clear();
  for (const Tensor& t : ins) signature_.push_back({t.shape(), t.dtype(), t.device()});
  return outs;
}

void Jit::check_inputs(const std::vector<Tensor>& inputs) const {
  LG_USER_CHECK(inputs.size() == signature_.size(), "Jit: called with ", inputs.size(),
                " inputs; the captured call had ", signature_.size());
  for (size_t i = 0; i < inputs.size(); i++) {
    const InputSig& want = signature_[i];
    const Tensor& t = inputs[i];
    LG_USER_CHECK(t.defined(), "Jit: input ", i, " is an empty (default-constructed) Tensor");
    LG_USER_CHECK(t.shape() == want.shape, "Jit: input ", i, " has shape ", detail::shape_str(t.shape()),
                  "; the captured call had ", detail::shape_str(want.shape),
                  " (a captured function replays fixed shapes: use another Jit for other shapes)");
    LG_USER_CHECK(t.dtype() == want.dtype, "Jit: input ", i, " has dtype ", name(t.dtype()),
                  "; the captured call had ", name(want.dtype));
    LG_USER_CHECK(t.device() == want.device, "Jit: input ", i, " is on ", t.device(),
                  "; the captured call had it on ", want.device);
  }
}

std::vector<Tensor> Jit::replay(const std::vector<Tensor>& inputs) {
  check_inputs(inputs);
  std::vector<NodeRef> in_bufs = base_buffers(realized_inputs(inputs));
  plan_->run(in_bufs);
  std::vector<Tensor> outs;
  for (const Output& o : outputs_)
    outs.emplace_back(o.input < 0 ? o.view : rebase_view(o.view, in_bufs[static_cast<size_t>(o.input)]));
  return outs;
}

size_t Jit::captured_items() const {
  LG_USER_CHECK(plan_ != nullptr, "Jit: nothing captured yet (the capture is the second call)");
  return plan_->item_count();
}

size_t Jit::intermediate_bytes() const {
  LG_USER_CHECK(plan_ != nullptr, "Jit: nothing captured yet (the capture is the second call)");
  return plan_->intermediate_bytes();
}

size_t Jit::planned_bytes() const {
  LG_USER_CHECK(plan_ != nullptr, "Jit: nothing captured yet (the capture is the second call)");
  return plan_->arena_bytes();
}

}  // namespace lg
