#pragma once
// Optimizers and global-norm gradient clipping.
//
// step() builds the update of every parameter that has a gradient as lazy graphs, writes the new
// values with Tensor::assign (parameters and optimizer state keep their buffers), and realizes all
// of it, plus any tensors the caller passes (the loss, the gradient norm), in ONE Tensor::realize
// call: one schedule per step, which fuses into a few kernels instead of one per parameter and op.
// Per-step numbers (learning rate, bias corrections) enter as one small uploaded buffer, so the
// kernels of every step are the same and compile once.
#include "nn/params.h"

namespace lg::nn {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Updates the parameters (those without a gradient are left as they are) and realizes `also` in
  // the same schedule. Increments steps().
  void step(const std::vector<Tensor>& also = {});
  // The two halves of step(), for a step captured by the Jit (where host uploads inside the captured
  // function are frozen): upload_scalars() makes this step's per-step numbers (from lr() and
  // steps()) as a float32 tensor, to be passed into the Jit as an input; build_step(scalars) builds
  // the update lazily (parameter and state assigns, returned for the caller to realize together
  // with anything else) and increments steps(). A replay that does not call build_step must
  // advance steps() itself (set_steps).
  Tensor upload_scalars() const;
  std::vector<Tensor> build_step(const Tensor& scalars);
  // Clears the gradient of every parameter.
  void zero_grad();
  void set_lr(double lr) { lr_ = lr; }
  double lr() const { return lr_; }
  int64_t steps() const { return steps_; }
  void set_steps(int64_t s) { steps_ = s; }  // for resuming from a checkpoint
  const ParamList& params() const { return params_; }
  // The optimizer's state tensors, named "<state>.<param name>" (for checkpoints). Assigning into
  // them (Tensor::assign) restores a saved state.
  virtual ParamList state() const = 0;

 protected:
  Optimizer(ParamList params, double lr);
  // The per-step scalars (already in double precision), and the lazy new value of parameter i given
  // its gradient and those scalars; implementations assign their state tensors inside and list them
  // with stage() so step() realizes them in the same schedule.
  virtual std::vector<double> step_scalars() const = 0;
  virtual Tensor updated(size_t i, const Tensor& grad, const Tensor& scalars) = 0;
  void stage(Tensor& state, const Tensor& value) { staged_.push_back(state.assign(value)); }
  ParamList params_;
  std::vector<Tensor> staged_;  // state assigns of the step being built
  double lr_;
  int64_t steps_ = 0;  // completed steps; the step being built is steps_ + 1
};

// AdamW as PyTorch (torch.optim.AdamW, foreach=False) and the MLPerf reference run it, per parameter
// p with gradient g at step t (1-based), all in float32:
//   p <- p * (1 - lr*wd)                          decoupled weight decay
//   m <- m*b1 + (1-b1)*g
//   v <- v*b2 + (1-b2)*g*g
//   p <- p - (lr / (1-b1^t)) * m / (sqrt(v) / sqrt(1-b2^t) + eps)     eps outside the square root
struct AdamWConfig {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-5;
  double weight_decay = 0.1;
  // Parameters with fewer than 2 axes (norm gains, biases) get no weight decay, as in MLPerf.
  bool no_decay_1d = true;
};

class AdamW : public Optimizer {
 public:
  AdamW(ParamList params, AdamWConfig cfg);
  ParamList state() const override;  // "exp_avg.<name>", "exp_avg_sq.<name>" (float32)
  double weight_decay_of(size_t i) const { return decay_[i]; }

 private:
  std::vector<double> step_scalars() const override;
  Tensor updated(size_t i, const Tensor& grad, const Tensor& scalars) override;
  AdamWConfig cfg_;
  std::vector<double> decay_;  // per parameter
  std::vector<Tensor> m_, v_;
};

// SGD with momentum as torch.optim.SGD (dampening 0): d = g + wd*p; buf <- momentum*buf + d (the
// first step's buf is d, which is what a zero-initialized buf gives); p <- p - lr*(nesterov ?
// d + momentum*buf : buf).
struct SGDConfig {
  double lr = 1e-2, momentum = 0.9, weight_decay = 0;
  bool nesterov = false;
};

class SGD : public Optimizer {
 public:
  SGD(ParamList params, SGDConfig cfg);
  ParamList state() const override;  // "momentum_buffer.<name>" (none when momentum is 0)

 private:
  std::vector<double> step_scalars() const override;
  Tensor updated(size_t i, const Tensor& grad, const Tensor& scalars) override;
  SGDConfig cfg_;
  std::vector<Tensor> buf_;
};

// Global-norm clipping as torch.nn.utils.clip_grad_norm_: norm = sqrt(sum_p ||g_p||^2), each
// ||g_p|| computed in float32; every gradient is scaled by min(1, max_norm / (norm + 1e-6)). The
// gradients are replaced by lazy scaled ones (set_grad) and the norm is returned lazily (a float32
// scalar), so both realize with the optimizer step. Parameters without a gradient are skipped.
Tensor clip_grad_norm(const ParamList& params, double max_norm);

}  // namespace lg::nn
