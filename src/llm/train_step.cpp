#include "llm/train_step.h"

#include <limits>

#include "base/error.h"
#include "nn/init.h"

namespace lg::llm {

TrainStep::TrainStep(Llama& model, TrainStepOptions options) : model_(model), o_(std::move(options)) {
  LG_USER_CHECK(o_.micro_batch > 0 && o_.seq_len > 0 && o_.grad_accum > 0,
                "train: batch, sequence length and gradient accumulation must be positive (got ", o_.micro_batch,
                ", ", o_.seq_len, ", ", o_.grad_accum, ")");
  LG_USER_CHECK(o_.compute == dtypes::float32 || o_.compute == dtypes::bfloat16,
                "train: compute dtype must be float32 or bfloat16, got ", name(o_.compute));
  LG_USER_CHECK(o_.seq_len <= model.config().max_seq_len, "train: sequence length ", o_.seq_len,
                " exceeds the model's max_seq_len ", model.config().max_seq_len);
  masters_ = model.params();
  for (const auto& [n, p] : masters_)
    LG_USER_CHECK(p.dtype() == dtypes::float32, "train: master weight \"", n, "\" is ", name(p.dtype()),
                  "; master weights must be float32");
  if (o_.optimizer == "adamw")
    opt_ = std::make_unique<nn::AdamW>(masters_, o_.adamw);
  else if (o_.optimizer == "sgd")
    opt_ = std::make_unique<nn::SGD>(masters_, o_.sgd);
  else
    LG_USER_CHECK(o_.optimizer == "none", "train: unknown optimizer \"", o_.optimizer, "\"; use adamw, sgd or none");
  if (opt_)  // "none": forward and backward only, no gradient buffers
    for (const auto& [n, p] : masters_) grad_acc_.push_back(nn::init::zeros(p.shape(), dtypes::float32, p.device()));
  if (o_.compute == dtypes::float32) {
    compute_ = masters_;
  } else {
    std::vector<Tensor> copies;
    for (const auto& [n, p] : masters_) {
      Tensor c = p.cast(o_.compute).contiguous();
      copies.push_back(c);
      compute_.add(n, c);
    }
    Tensor::realize(copies);
    for (Tensor& c : copies) c.requires_grad(true);
    model_.bind(compute_);
  }
  if (o_.jit) {
    micro_jit_ = std::make_unique<Jit>([this](const std::vector<Tensor>& in) { return micro_fn(in); });
    update_jit_ = std::make_unique<Jit>([this](const std::vector<Tensor>& in) { return update_fn(in); });
    eval_jit_ = std::make_unique<Jit>([this](const std::vector<Tensor>& in) { return eval_fn(in); });
  }
}

// The model goes back to its float32 masters (bound to the compute copies while training).
TrainStep::~TrainStep() {
  if (o_.compute != dtypes::float32) model_.bind(masters_);
}

nn::Optimizer& TrainStep::optimizer() {
  LG_USER_CHECK(opt_ != nullptr, "train: this step has no optimizer (--optimizer none): nothing to save or resume");
  return *opt_;
}

Tensor TrainStep::upload(const int32_t* data) const {
  int64_t n = o_.micro_batch * o_.seq_len;
  std::string device = masters_.items().front().second.device();
  return Tensor::from_bytes(data, static_cast<size_t>(n) * sizeof(int32_t), {o_.micro_batch, o_.seq_len},
                            dtypes::int32, device);
}

// in: tokens, labels. Forward and backward of this micro-batch's share of the step's mean loss;
// gradients are added into grad_acc. Returns that share (a float32 scalar).
std::vector<Tensor> TrainStep::micro_fn(const std::vector<Tensor>& in) {
  double tokens_per_step = static_cast<double>(o_.micro_batch * o_.seq_len * o_.grad_accum);
  Tensor loss = model_.loss_sum(in[0], in[1], o_.loss_chunk) * (1.0 / tokens_per_step);
  loss.backward();
  std::vector<Tensor> outs = {loss};
  for (size_t i = 0; i < compute_.size(); i++) {
    Tensor c = compute_.items()[i].second;
    Tensor g = c.grad();
    if (!g.defined()) continue;
    outs.push_back(opt_ ? grad_acc_[i].assign(grad_acc_[i] + g.cast(dtypes::float32)) : g);
    c.set_grad(Tensor());
  }
  Tensor::realize(outs);
  return {loss};
}

// in: the optimizer's per-step scalars. Clip, AdamW, recast the compute copies, zero grad_acc.
// Returns the gradient norm before clipping.
std::vector<Tensor> TrainStep::update_fn(const std::vector<Tensor>& in) {
  for (size_t i = 0; i < grad_acc_.size(); i++) Tensor(masters_.items()[i].second).set_grad(grad_acc_[i]);
  double bound = o_.clip > 0 ? o_.clip : std::numeric_limits<double>::infinity();
  Tensor norm = nn::clip_grad_norm(masters_, bound);
  std::vector<Tensor> outs = opt_->build_step(in[0]);
  outs.push_back(norm);
  for (size_t i = 0; i < grad_acc_.size(); i++) {
    Tensor master = masters_.items()[i].second;  // after build_step: the updated value
    if (o_.compute != dtypes::float32) {
      Tensor c = compute_.items()[i].second;
      outs.push_back(c.assign(master.cast(o_.compute)));
    }
    outs.push_back(grad_acc_[i].assign(Tensor::zeros(grad_acc_[i].shape(), dtypes::float32, master.device())));
    master.set_grad(Tensor());
  }
  Tensor::realize(outs);
  return {norm};
}

std::vector<Tensor> TrainStep::eval_fn(const std::vector<Tensor>& in) {
  Tensor loss = model_.loss_sum(in[0], in[1], o_.loss_chunk);
  loss.realize();
  return {loss};
}

StepResult TrainStep::step(const std::vector<HostBatch>& micro, double lr) {
  LG_USER_CHECK(static_cast<int64_t>(micro.size()) == o_.grad_accum, "train: a step takes ", o_.grad_accum,
                " micro-batches, got ", micro.size());
  StepResult r;
  for (const HostBatch& b : micro) {
    std::vector<Tensor> in = {upload(b.tokens), upload(b.labels)};
    std::vector<Tensor> out = micro_jit_ ? (*micro_jit_)(in) : micro_fn(in);
    r.loss += out[0].to_doubles()[0];
  }
  if (!opt_) return r;  // forward and backward only
  opt_->set_lr(lr);
  int64_t before = opt_->steps();
  std::vector<Tensor> in = {opt_->upload_scalars()};
  std::vector<Tensor> out = update_jit_ ? (*update_jit_)(in) : update_fn(in);
  if (opt_->steps() == before) opt_->set_steps(before + 1);  // a replay does not run build_step
  r.grad_norm = out[0].to_doubles()[0];
  return r;
}

double TrainStep::eval_loss_sum(const HostBatch& b) {
  std::vector<Tensor> in = {upload(b.tokens), upload(b.labels)};
  std::vector<Tensor> out = eval_jit_ ? (*eval_jit_)(in) : eval_fn(in);
  return out[0].to_doubles()[0];
}

size_t TrainStep::planned_bytes() const {
  size_t total = 0;
  for (const Jit* j : {micro_jit_.get(), update_jit_.get(), eval_jit_.get()})
    if (j && j->captured()) total += j->planned_bytes();
  return total;
}

void TrainStep::reset_optimizer() {
  if (!opt_) return;
  std::vector<Tensor> outs;
  for (auto& [name, t] : opt_->state()) {
    Tensor s = t;
    outs.push_back(s.assign(Tensor::zeros(s.shape(), s.dtype(), s.device())));
  }
  Tensor::realize(outs);
  opt_->set_steps(0);
}

void TrainStep::refresh_compute() {
  if (o_.compute == dtypes::float32) return;
  std::vector<Tensor> outs;
  for (size_t i = 0; i < compute_.size(); i++) {
    Tensor c = compute_.items()[i].second;
    outs.push_back(c.assign(masters_.items()[i].second.cast(o_.compute)));
  }
  Tensor::realize(outs);
}

}  // namespace lg::llm
