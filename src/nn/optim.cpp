#include "nn/optim.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "nn/init.h"

namespace lg::nn {

namespace {

// [begin, end) of a flat buffer: the buffer itself (a new handle) when that is all of it.
Tensor run_of(const Tensor& flat, int64_t begin, int64_t end) {
  if (begin == 0 && end == flat.numel()) return Tensor(flat.node());
  return flat.slice(0, begin, end);
}

}  // namespace

Optimizer::Optimizer(ParamList params, double lr, const std::vector<int>& group_of)
    : params_(std::move(params)), lr_(lr) {
  LG_USER_CHECK(params_.size() > 0, "optimizer: no parameters to optimize");
  const auto& [first_name, first] = params_.items().front();
  std::vector<Shape> shapes;
  std::vector<Tensor> values;
  for (const auto& [name, p] : params_) {
    LG_USER_CHECK(is_float(p.dtype()), "optimizer: parameter \"", name, "\" is ", lg::name(p.dtype()),
                  "; only float parameters can be optimized");
    LG_USER_CHECK(p.dtype() == first.dtype() && p.device() == first.device(), "optimizer: parameter \"", name,
                  "\" is ", lg::name(p.dtype()), " on ", p.device(), " but \"", first_name, "\" is ",
                  lg::name(first.dtype()), " on ", first.device(),
                  "; the parameters of one optimizer share a dtype and a device (use one optimizer per set)");
    for (const Tensor& v : values)
      LG_USER_CHECK(v.node() != p.node(), "optimizer: parameter \"", name,
                    "\" is the same tensor as an earlier one; list each parameter once");
    shapes.push_back(p.shape());
    values.push_back(p);
  }
  layout_ = FlatLayout(shapes, group_of);
  flat_params_ = layout_.pack(values, first.dtype(), first.device());
  for (size_t i = 0; i < params_.size(); i++) Tensor(params_.items()[i].second).replace(layout_.view(flat_params_, i));
  grads_ = layout_.zeros(dtypes::float32, first.device());
}

Tensor& Optimizer::add_state(const std::string& prefix) {
  state_.emplace_back(prefix, layout_.zeros(dtypes::float32, flat_params_.device()));
  return state_.back().second;
}

ParamList Optimizer::state_views() const {
  ParamList s;
  for (const auto& [prefix, flat] : state_)
    for (size_t i = 0; i < params_.size(); i++) s.add(prefix + "." + params_.items()[i].first, layout_.view(flat, i));
  return s;
}

void Optimizer::reset_state() {
  std::vector<Tensor> outs;
  for (auto& [prefix, flat] : state_) outs.push_back(flat.assign(Tensor::zeros(flat.shape(), flat.dtype(), flat.device())));
  Tensor::realize(outs);
  steps_ = 0;
}

void Optimizer::zero_grad() {
  for (const auto& [name, p] : params_) Tensor(p).set_grad(Tensor());
}

Tensor Optimizer::scalar_at(const Tensor& scalars, int64_t k) { return scalars.slice(0, k, k + 1).reshape({}); }

Tensor Optimizer::by_group(int64_t begin, int64_t end, const std::vector<Tensor>& per_group) const {
  std::vector<int> in;
  for (int g = 0; g < layout_.groups(); g++)
    if (layout_.group_begin(g) < end && layout_.group_end(g) > begin) in.push_back(g);
  Tensor out = per_group.at(in.back());
  if (in.size() == 1) return out;
  DType idx = end > (int64_t{1} << 31) ? dtypes::int64 : dtypes::int32;
  Tensor at = Tensor::arange(begin, end, 1, idx, flat_params_.device());
  for (size_t k = in.size() - 1; k-- > 0;)
    out = at.lt(at.scalar_like(static_cast<double>(layout_.group_end(in[k])))).where(per_group[in[k]], out);
  return out;
}

Tensor Optimizer::stage(const Tensor& state, int64_t begin, int64_t end, const Tensor& value) {
  Tensor run = run_of(state, begin, end);
  staged_.push_back(run.assign(value));
  return staged_.back();
}

Tensor Optimizer::upload_scalars() const {
  std::vector<double> host = step_scalars();
  // Uploaded as float64 and rounded to float32 in the graph, as torch rounds its Python scalars.
  return Tensor::from_doubles(host, {static_cast<int64_t>(host.size())}, dtypes::float32, flat_params_.device());
}

std::vector<Tensor> Optimizer::build_update(const Tensor& scalars,
                                            const std::vector<std::pair<int64_t, int64_t>>& runs) {
  std::vector<Tensor> outs;
  for (const auto& [begin, end] : runs) {
    Tensor g = run_of(grads_, begin, end);
    if (clip_coef_.defined()) g = g * clip_coef_;
    Tensor next = updated(begin, end, run_of(flat_params_, begin, end).cast(dtypes::float32), g, scalars);
    // The whole buffer is assigned through the member handle, so flat_params() is the new value
    // until it is realized (TrainStep recasts its compute copies from it in the same schedule).
    if (begin == 0 && end == layout_.numel()) {
      outs.push_back(flat_params_.assign(next));
    } else {
      Tensor run = flat_params_.slice(0, begin, end);
      outs.push_back(run.assign(next));
    }
  }
  outs.insert(outs.end(), staged_.begin(), staged_.end());
  staged_.clear();
  clip_coef_ = Tensor();
  steps_++;
  return outs;
}

std::vector<Tensor> Optimizer::build_step(const Tensor& scalars) { return build_update(scalars, {{0, layout_.numel()}}); }

Tensor Optimizer::clip_flat_grads(double max_norm) {
  LG_USER_CHECK(max_norm > 0, "clip_flat_grads: max_norm must be positive, got ", max_norm);
  // One reduction over every gradient: accumulated in float64 (a float32 sum over millions of
  // elements in one order loses digits; torch sums per parameter), then rounded to float32.
  Tensor norm = Tensor(grads_.node()).cast(dtypes::float64).square().sum().sqrt().cast(dtypes::float32);
  clip_coef_ = (max_norm / (norm + 1e-6)).minimum(norm.scalar_like(1));
  return norm;
}

// Two schedules: the gradient writes (with `also`), then the update, which reads the gradient
// buffer (a reader of a buffer in the schedule that writes it would see the old values).
void Optimizer::step(const std::vector<Tensor>& also) {
  std::vector<Tensor> writes = also;
  std::vector<size_t> order(params_.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return layout_.offset(a) < layout_.offset(b); });
  std::vector<std::pair<int64_t, int64_t>> runs;  // maximal runs of parameters with a gradient
  for (size_t i : order) {
    Tensor p = params_.items()[i].second;
    Tensor g = p.grad();
    if (!g.defined()) continue;
    LG_USER_CHECK(g.shape() == p.shape(), "optimizer: gradient of \"", params_.items()[i].first,
                  "\" has the wrong shape");
    Tensor run = grad_view(i);
    writes.push_back(run.assign(g.cast(dtypes::float32)));
    p.set_grad(Tensor());
    int64_t begin = layout_.offset(i), end = begin + layout_.padded_numel(i);
    if (!runs.empty() && runs.back().second == begin)
      runs.back().second = end;
    else
      runs.emplace_back(begin, end);
  }
  Tensor::realize(writes);
  Tensor::realize(build_update(upload_scalars(), runs));
}

// ---- AdamW ----

namespace {

double decay_of(const Tensor& p, const AdamWConfig& cfg) { return cfg.no_decay_1d && p.ndim() < 2 ? 0.0 : cfg.weight_decay; }

// The distinct weight decays, in order of first appearance: group k has decay decays[k].
std::vector<double> group_decays(const ParamList& params, const AdamWConfig& cfg) {
  std::vector<double> decays;
  for (const auto& [name, p] : params)
    if (std::find(decays.begin(), decays.end(), decay_of(p, cfg)) == decays.end()) decays.push_back(decay_of(p, cfg));
  return decays;
}

std::vector<int> decay_groups(const ParamList& params, const AdamWConfig& cfg) {
  std::vector<double> decays = group_decays(params, cfg);
  std::vector<int> g;
  for (const auto& [name, p] : params)
    g.push_back(static_cast<int>(std::find(decays.begin(), decays.end(), decay_of(p, cfg)) - decays.begin()));
  return g;
}

}  // namespace

AdamW::AdamW(ParamList params, AdamWConfig cfg)
    : Optimizer(params, cfg.lr, decay_groups(params, cfg)), cfg_(cfg), group_decay_(group_decays(params_, cfg)) {
  for (const auto& [name, p] : params_) decay_.push_back(decay_of(p, cfg));
  add_state("exp_avg");
  add_state("exp_avg_sq");
}

ParamList AdamW::state() const { return state_views(); }

// [step_size = lr / (1 - b1^t), sqrt(1 - b2^t), then 1 - lr*wd per group], in double as torch.
std::vector<double> AdamW::step_scalars() const {
  double t = static_cast<double>(steps_ + 1);
  std::vector<double> s = {lr_ / (1 - std::pow(cfg_.beta1, t)), std::sqrt(1 - std::pow(cfg_.beta2, t))};
  for (double wd : group_decay_) s.push_back(1 - lr_ * wd);
  return s;
}

Tensor AdamW::updated(int64_t begin, int64_t end, const Tensor& p, const Tensor& g, const Tensor& scalars) {
  // p's value reads the assigns of m and v: the scheduler makes the three one kernel of three outputs
  // (schedule/multi_output.h), p computed from m's and v's new values in the same thread.
  Tensor m = stage(state_[0].second, begin, end, run_of(state_[0].second, begin, end) * cfg_.beta1 + (1 - cfg_.beta1) * g);
  Tensor v =
      stage(state_[1].second, begin, end, run_of(state_[1].second, begin, end) * cfg_.beta2 + (1 - cfg_.beta2) * g * g);
  std::vector<Tensor> factor;
  bool decays = false;
  for (int k = 0; k < layout_.groups(); k++) {
    factor.push_back(scalar_at(scalars, 2 + k));
    decays |= group_decay_[k] != 0 && layout_.group_begin(k) < end && layout_.group_end(k) > begin;
  }
  Tensor decayed = decays ? p * by_group(begin, end, factor) : p;  // a factor of exactly 1 where wd is 0
  Tensor denom = v.sqrt() / scalar_at(scalars, 1) + cfg_.eps;
  return decayed - scalar_at(scalars, 0) * (m / denom);
}

// ---- SGD ----

// Without momentum there is no state (no buffers).
SGD::SGD(ParamList params, SGDConfig cfg)
    : Optimizer(params, cfg.lr, std::vector<int>(params.size(), 0)), cfg_(cfg) {
  if (cfg_.momentum != 0) add_state("momentum_buffer");
}

ParamList SGD::state() const { return state_views(); }

std::vector<double> SGD::step_scalars() const { return {lr_}; }

Tensor SGD::updated(int64_t begin, int64_t end, const Tensor& p, const Tensor& g, const Tensor& scalars) {
  Tensor d = cfg_.weight_decay == 0 ? g : g + p * cfg_.weight_decay;
  Tensor step = d;
  if (cfg_.momentum != 0) {
    Tensor buf = stage(state_[0].second, begin, end, run_of(state_[0].second, begin, end) * cfg_.momentum + d);
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
