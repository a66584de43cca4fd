#pragma once
// Optimizers and global-norm gradient clipping.
//
// Storage (nn/flat_layout.h): an optimizer keeps its parameters, their float32 gradients and its
// state as runs of one flat buffer each. Constructing it moves the parameters there: every
// parameter handle (and so the model holding it) becomes a view of the flat parameter buffer
// (Tensor::replace), with the same values. Parameters are grouped (AdamW: by weight decay) and
// each group is one run, so the update of the whole set is a few kernels over the flat buffers
// (AdamW: m, v and p, one kernel of three outputs: schedule/multi_output.h), not several per
// parameter.
//
// step() first writes every parameter's lazy gradient into its run of the gradient buffer (in one
// schedule with anything passed in `also`, e.g. the loss: forward, backward and the gradient
// writes fuse), then builds and realizes the update in a second schedule. Callers that accumulate
// gradients in grads() themselves (llm::TrainStep) build the update directly with build_step().
// Per-step numbers (learning rate, bias corrections, per-group decay factors) enter as one small
// uploaded buffer, so the kernels of every step are the same and compile once.
#include "nn/flat_layout.h"
#include "nn/params.h"

namespace lg::nn {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Updates the parameters that have a gradient (p.grad(); the others are left as they are),
  // realizing `also` with the gradient writes. Clears the gradients. Increments steps().
  void step(const std::vector<Tensor>& also = {});
  // The halves of an update from grads(), for a step captured by the Jit (where host uploads
  // inside the captured function are frozen): upload_scalars() makes this step's per-step numbers
  // (from lr() and steps()) as a float32 tensor, to be passed into the Jit as an input;
  // build_step(scalars) builds the update of every parameter from grads() (scaled by a pending
  // clip_flat_grads()) lazily, returns the parameter and state assigns for the caller to realize
  // together with anything else, and increments steps(). A replay that does not call build_step
  // must advance steps() itself (set_steps). grads() is left as it was.
  Tensor upload_scalars() const;
  std::vector<Tensor> build_step(const Tensor& scalars);
  // Global-norm clipping of grads() (one reduction over the flat buffer, accumulated in float64):
  // returns the norm (lazy, float32 scalar); the next build_step() scales the gradients by
  // min(1, max_norm / (norm + 1e-6)) inside the update kernels.
  Tensor clip_flat_grads(double max_norm);
  // Clears the gradient (p.grad()) of every parameter.
  void zero_grad();
  void set_lr(double lr) { lr_ = lr; }
  double lr() const { return lr_; }
  int64_t steps() const { return steps_; }
  void set_steps(int64_t s) { steps_ = s; }  // for resuming from a checkpoint
  const ParamList& params() const { return params_; }

  // The flat buffers: layout(), the parameters (the buffer they view; float32 or their dtype) and
  // the float32 gradients (zero until written; grad_view(i) is parameter i's run).
  const FlatLayout& layout() const { return layout_; }
  const Tensor& flat_params() const { return flat_params_; }
  const Tensor& grads() const { return grads_; }
  Tensor grad_view(size_t i) const { return layout_.view(grads_, i); }
  // The optimizer's state tensors, named "<state>.<param name>" (for checkpoints): views of the
  // flat state buffers, so assigning into them (Tensor::assign) restores a saved state.
  virtual ParamList state() const = 0;
  // Zeroes the state buffers and the step count.
  void reset_state();

 protected:
  // group_of[i]: parameter i's group (0, 1, ...): the parameters of a group share the per-step
  // numbers that differ between groups (AdamW's weight decay).
  Optimizer(ParamList params, double lr, const std::vector<int>& group_of);
  // A float32 state buffer of the layout's size (zeros), registered for reset_state().
  Tensor& add_state(const std::string& prefix);
  ParamList state_views() const;
  // The per-step scalars (in double precision, rounded to float32 on upload).
  virtual std::vector<double> step_scalars() const = 0;
  // The new value of the flat elements [begin, end) (whole groups or whole parameters): p their
  // current float32 values, g their (clipped) float32 gradients. Implementations write their
  // state runs with stage() (an assign realized in the same schedule; returns its value).
  virtual Tensor updated(int64_t begin, int64_t end, const Tensor& p, const Tensor& g, const Tensor& scalars) = 0;
  Tensor stage(const Tensor& state, int64_t begin, int64_t end, const Tensor& value);
  // Scalar k of the per-step buffer, as a float32 0-d tensor.
  static Tensor scalar_at(const Tensor& scalars, int64_t k);
  // For the elements [begin, end): per_group[g] where the element is in group g (a 1-D tensor
  // selected by the element's index when the run spans several groups, else a 0-d one).
  Tensor by_group(int64_t begin, int64_t end, const std::vector<Tensor>& per_group) const;

  ParamList params_;
  FlatLayout layout_;
  Tensor flat_params_, grads_;
  std::vector<std::pair<std::string, Tensor>> state_;  // flat state buffers by name prefix
  std::vector<Tensor> staged_;                           // state assigns of the step being built
  double lr_;
  int64_t steps_ = 0;  // completed steps; the step being built is steps_ + 1

 private:
  // The update of the runs [begin, end) listed, from grads().
  std::vector<Tensor> build_update(const Tensor& scalars, const std::vector<std::pair<int64_t, int64_t>>& runs);
  Tensor clip_coef_;  // pending clip_flat_grads() scale (undefined: none)
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
  Tensor updated(int64_t begin, int64_t end, const Tensor& p, const Tensor& g, const Tensor& scalars) override;
  AdamWConfig cfg_;
  std::vector<double> decay_;        // per parameter
  std::vector<double> group_decay_;  // per group (groups: distinct decays, in order of appearance)
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
  Tensor updated(int64_t begin, int64_t end, const Tensor& p, const Tensor& g, const Tensor& scalars) override;
  SGDConfig cfg_;
};

// Global-norm clipping as torch.nn.utils.clip_grad_norm_: norm = sqrt(sum_p ||g_p||^2), each
// ||g_p|| computed in float32; every gradient is scaled by min(1, max_norm / (norm + 1e-6)). The
// gradients are replaced by lazy scaled ones (set_grad) and the norm is returned lazily (a float32
// scalar), so both realize with the optimizer step. Parameters without a gradient are skipped.
Tensor clip_grad_norm(const ParamList& params, double max_norm);

}  // namespace lg::nn
