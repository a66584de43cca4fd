#include "nn/optim.h"

#include <cmath>

#include "base/error.h"
#include "nn/init.h"

namespace lg::nn {

Optimizer::Optimizer(ParamList params, double lr) : params_(std::move(params)), lr_(lr) {
  for (const auto& [name, p] : params_)
    LG_USER_CHECK(is_float(p.dtype()), "optimizer: parameter \"", name, "\" is ", lg::name(p.dtype()),
                  "; only float parameters can be optimized");
}

void Optimizer::zero_grad() {
  for (const auto& [name, p] : params_) Tensor(p).set_grad(Tensor());
}

// Scalar k of the per-step buffer, as a float32 0-d tensor.
static Tensor scalar_at(const Tensor& scalars, int64_t k) { return scalars.slice(0, k, k + 1).reshape({}); }

Tensor Optimizer::upload_scalars() const {
  std::vector<double> host = step_scalars();
  // Uploaded as float64 and rounded to float32 in the graph, as torch rounds its Python scalars.
  std::string device = params_.size() ? params_.items()[0].second.device() : "";
  return Tensor::from_doubles(host, {static_cast<int64_t>(host.size())}, dtypes::float32, device);
}

std::vector<Tensor> Optimizer::build_step(const Tensor& scalars) {
  std::vector<Tensor> outs;
  for (size_t i = 0; i < params_.size(); i++) {
    Tensor p = params_.items()[i].second;
    Tensor g = p.grad();
    if (!g.defined()) continue;
    LG_USER_CHECK(g.shape() == p.shape(), "optimizer: gradient of \"", params_.items()[i].first,
                  "\" has the wrong shape");
    Tensor next = updated(i, g.cast(dtypes::float32), scalars);
    outs.push_back(p.assign(next));
  }
  outs.insert(outs.end(), staged_.begin(), staged_.end());
  staged_.clear();
  steps_++;
  return outs;
}

void Optimizer::step(const std::vector<Tensor>& also) {
  std::vector<Tensor> outs = also;
  std::vector<Tensor> update = build_step(upload_scalars());
  outs.insert(outs.end(), update.begin(), update.end());
  Tensor::realize(outs);
}

// ---- AdamW ----

AdamW::AdamW(ParamList params, AdamWConfig cfg) : Optimizer(std::move(params), cfg.lr), cfg_(cfg) {
  for (const auto& [name, p] : params_) {
    decay_.push_back(cfg.no_decay_1d && p.ndim() < 2 ? 0.0 : cfg.weight_decay);
    m_.push_back(init::zeros(p.shape(), dtypes::float32, p.device()));
    v_.push_back(init::zeros(p.shape(), dtypes::float32, p.device()));
  }
}

ParamList AdamW::state() const {
  ParamList s;
  for (size_t i = 0; i < params_.size(); i++) s.add("exp_avg." + params_.items()[i].first, m_[i]);
  for (size_t i = 0; i < params_.size(); i++) s.add("exp_avg_sq." + params_.items()[i].first, v_[i]);
  return s;
}

// [step_size = lr / (1 - b1^t), sqrt(1 - b2^t), then 1 - lr*wd per parameter], in double as torch.
std::vector<double> AdamW::step_scalars() const {
  double t = static_cast<double>(steps_ + 1);
  std::vector<double> s = {lr_ / (1 - std::pow(cfg_.beta1, t)), std::sqrt(1 - std::pow(cfg_.beta2, t))};
  for (double wd : decay_) s.push_back(1 - lr_ * wd);
  return s;
}

Tensor AdamW::updated(size_t i, const Tensor& g, const Tensor& scalars) {
  Tensor p = params_.items()[i].second.cast(dtypes::float32);
  Tensor m = m_[i] * cfg_.beta1 + (1 - cfg_.beta1) * g;
  Tensor v = v_[i] * cfg_.beta2 + (1 - cfg_.beta2) * g * g;
  stage(m_[i], m);
  stage(v_[i], v);
  Tensor decayed = decay_[i] == 0 ? p : p * scalar_at(scalars, 2 + static_cast<int64_t>(i));
  Tensor denom = v.sqrt() / scalar_at(scalars, 1) + cfg_.eps;
  return decayed - scalar_at(scalars, 0) * (m / denom);
}

// ---- SGD ----

// Without momentum there is no state (no buffers).
SGD::SGD(ParamList params, SGDConfig cfg) : Optimizer(std::move(params), cfg.lr), cfg_(cfg) {
  if (cfg_.momentum != 0)
    for (const auto& [name, p] : params_) buf_.push_back(init::zeros(p.shape(), dtypes::float32, p.device()));
}

ParamList SGD::state() const {
  ParamList s;
  for (size_t i = 0; i < buf_.size(); i++) s.add("momentum_buffer." + params_.items()[i].first, buf_[i]);
  return s;
}

std::vector<double> SGD::step_scalars() const { return {lr_}; }

Tensor SGD::updated(size_t i, const Tensor& g, const Tensor& scalars) {
  Tensor p = params_.items()[i].second.cast(dtypes::float32);
  Tensor d = cfg_.weight_decay == 0 ? g : g + p * cfg_.weight_decay;
  Tensor step = d;
  if (cfg_.momentum != 0) {
    Tensor buf = buf_[i] * cfg_.momentum + d;
    stage(buf_[i], buf);
    step = cfg_.nesterov ? d + buf * cfg_.momentum : buf;
  }
  return p - scalar_at(scalars, 0) * step;
}

// ---- clipping ----

Tensor clip_grad_norm(const ParamList& params, double max_norm) {
  LG_USER_CHECK(max_norm > 0, "clip_grad_norm: max_norm must be positive, got ", max_norm);
  std::vector<Tensor> norms;
  for (const auto& [name, p] : params)
    if (p.grad().defined())
      norms.push_back(p.grad().cast(dtypes::float32).square().sum().sqrt().reshape({1}));
  LG_USER_CHECK(!norms.empty(), "clip_grad_norm: no parameter has a gradient; call backward() first");
  Tensor norm = Tensor::cat(norms).square().sum().sqrt();
  Tensor coef = (max_norm / (norm + 1e-6)).minimum(norm.scalar_like(1));
  for (const auto& [name, p] : params)
    if (p.grad().defined())
      Tensor(p).set_grad((p.grad().cast(dtypes::float32) * coef).cast(p.grad().dtype()));
  return norm;
}

}  // namespace lg::nn
