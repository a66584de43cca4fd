#include "llm/train_step.h"

#include <algorithm>
#include <limits>

#include "base/config.h"
#include "base/error.h"
#include "nn/init.h"
#include "runtime/device.h"
#include "tensor/multi.h"

namespace lg::llm {

namespace {

// A copy of the model with its own weights on `device`, equal to `from`'s. The replica's own random
// initialization draws from a saved and restored generator position, so the run's random stream is
// that of a single-device run.
std::unique_ptr<Llama> replica_of(const Llama& from, const std::string& device) {
  RngPosition saved = Tensor::rng_position();
  std::string home = config().device;
  config().device = device;
  std::unique_ptr<Llama> m;
  try {
    m = std::make_unique<Llama>(from.config());
  } catch (...) {
    config().device = home;
    throw;
  }
  config().device = home;
  Tensor::set_rng_position(saved);
  nn::ParamList weights;
  std::vector<Tensor> all;
  for (const auto& [n, p] : from.params()) {
    Tensor c = p.to(device).contiguous();
    weights.add(n, c);
    all.push_back(c);
  }
  Tensor::realize(all);
  for (Tensor& c : all) c.requires_grad(true);
  m->bind(weights);
  return m;
}

}  // namespace

void check_train_step_options(const TrainStepOptions& o) {
  LG_USER_CHECK(o.micro_batch > 0 && o.seq_len > 0 && o.grad_accum > 0,
                "train: batch, sequence length and gradient accumulation must be positive (got ",
                o.micro_batch, ", ", o.seq_len, ", ", o.grad_accum, ")");
  LG_USER_CHECK(o.compute == dtypes::float32 || o.compute == dtypes::bfloat16,
                "train: compute dtype must be float32 or bfloat16, got ", name(o.compute));
  LG_USER_CHECK(o.optimizer == "adamw" || o.optimizer == "sgd" || o.optimizer == "none",
                "train: unknown optimizer \"", o.optimizer, "\"; use adamw, sgd or none");
  LG_USER_CHECK(o.clip >= 0, "train: --clip must be 0 (no clipping) or positive, got ", o.clip);
  LG_USER_CHECK(o.loss_chunk >= 0, "train: --loss-chunk must be 0 (one chunk) or positive, got ",
                o.loss_chunk);
  LG_USER_CHECK(o.sgd.momentum >= 0, "train: --momentum must be 0 or more, got ", o.sgd.momentum);
  LG_USER_CHECK(o.adamw.weight_decay >= 0 && o.sgd.weight_decay >= 0,
                "train: --weight-decay must be 0 or more, got ",
                std::min(o.adamw.weight_decay, o.sgd.weight_decay));
  LG_USER_CHECK(o.bucket_bytes > 0, "train: the allreduce bucket size (--bucket-mb) must be positive");
}

TrainStep::TrainStep(Llama& model, TrainStepOptions options) : model_(model), o_(std::move(options)) {
  check_train_step_options(o_);
  LG_USER_CHECK(o_.seq_len <= model.config().max_seq_len, "train: sequence length ", o_.seq_len,
                " exceeds the model's max_seq_len ", model.config().max_seq_len);
  std::string home = model.params().items().front().second.device();
  std::vector<std::string> global;
  for (const std::string& d : o_.devices) {
    std::string c = canonical_device(d);
    LG_USER_CHECK(std::find(global.begin(), global.end(), c) == global.end(), "train: device ", d, " is listed twice");
    global.push_back(c);
  }
  if (global.empty()) global = {home};
  int64_t n = static_cast<int64_t>(global.size());
  LG_USER_CHECK(o_.micro_batch % n == 0, "train: a batch of ", o_.micro_batch, " sequences does not split over ", n,
                " devices; use a multiple of ", n);
  LG_USER_CHECK(n == 1 || o_.optimizer != "none",
                "train: data-parallel training needs an optimizer (--optimizer adamw or sgd)");
  replicas_.resize(static_cast<size_t>(n));
  for (int64_t g = 0; g < n; g++) {
    Replica& r = replicas_[g];
    r.device = global[g];
    r.remote = get_device(r.device).remote_rank() >= 0;
    r.rows_begin = g * (o_.micro_batch / n);
    if (!r.remote) local_.push_back(static_cast<size_t>(g));
  }
  LG_USER_CHECK(!local_.empty(), "train: none of the devices belongs to this process");
  LG_USER_CHECK(first().device == home, "train: the model lives on ", home, " but this process's first device is ",
                first().device, "; create the model there");
  first().model = &model;
  for (size_t k = 1; k < local_.size(); k++) {
    Replica& r = replicas_[local_[k]];
    r.owned = replica_of(model, r.device);
    r.model = r.owned.get();
  }
  for (size_t k : local_) init_replica(replicas_[k]);
  for (Replica& r : replicas_)
    if (r.remote) init_remote_replica(r);

  if (parallel()) {  // runs of the flat gradient buffer of at most bucket_bytes (aligned)
    int64_t total = first().opt->layout().numel(), align = nn::FlatLayout::kAlign;
    int64_t per = std::max<int64_t>(align, o_.bucket_bytes / 4 / align * align);
    for (int64_t b = 0; b < total; b += per) buckets_.emplace_back(b, std::min(total, b + per));
  }
  if (o_.jit) {
    micro_jit_ = std::make_unique<Jit>([this](const std::vector<Tensor>& in) { return micro_fn(in); });
    update_jit_ = std::make_unique<Jit>([this](const std::vector<Tensor>& in) { return update_fn(in); });
    eval_jit_ = std::make_unique<Jit>([this](const std::vector<Tensor>& in) { return eval_fn(in); });
  }
}

// Stand-ins of the first local replica's tensors on another process's device: no memory here; the
// kernels that would write them run on that process (the optimizer's flat buffers included).
void TrainStep::init_remote_replica(Replica& r) {
  const Replica& like = first();
  for (const auto& [n, p] : like.masters) {
    Tensor m = Tensor::empty(p.shape(), dtypes::float32, r.device);
    m.requires_grad(true);
    r.masters.add(n, m);
  }
  make_optimizer(r);
  r.scalars = Tensor::empty({like.opt->upload_scalars().numel()}, dtypes::float32, r.device);
  r.loss_acc = Tensor::empty({1}, dtypes::float32, r.device);
  r.eval_loss = Tensor::empty({1}, dtypes::float32, r.device);
  make_compute(r);
}

void TrainStep::init_replica(Replica& r) {
  r.masters = r.model->params();
  for (const auto& [n, p] : r.masters)
    LG_USER_CHECK(p.dtype() == dtypes::float32, "train: master weight \"", n, "\" is ", name(p.dtype()),
                  "; master weights must be float32");
  make_optimizer(r);
  if (parallel()) r.loss_acc = nn::init::zeros({1}, dtypes::float32, r.device);
  make_compute(r);
  if (o_.compute != dtypes::float32) r.model->bind(r.compute);
}

// The optimizer moves the masters into its flat buffer (the model's parameters become views of it)
// and holds the flat gradient sums. "none": no optimizer, no gradient buffers.
void TrainStep::make_optimizer(Replica& r) {
  if (o_.optimizer == "adamw")
    r.opt = std::make_unique<nn::AdamW>(r.masters, o_.adamw);
  else if (o_.optimizer == "sgd")
    r.opt = std::make_unique<nn::SGD>(r.masters, o_.sgd);
}

// The compute copies: views of one bfloat16 buffer in the optimizer's layout (recast by one kernel
// per update), or, with no optimizer, one copy per master; float32 compute uses the masters.
void TrainStep::make_compute(Replica& r) {
  if (o_.compute == dtypes::float32) {
    r.compute = r.masters;
    return;
  }
  std::vector<Tensor> copies;
  if (r.opt) {
    r.compute_flat = r.opt->flat_params().cast(o_.compute).contiguous().realize();
    for (size_t i = 0; i < r.masters.size(); i++) copies.push_back(r.opt->layout().view(r.compute_flat, i));
  } else {
    for (const auto& [n, p] : r.masters) copies.push_back(p.cast(o_.compute).contiguous());
    Tensor::realize(copies);
  }
  for (size_t i = 0; i < copies.size(); i++) r.compute.add(r.masters.items()[i].first, copies[i].requires_grad(true));
}

// The caller's model goes back to its float32 masters (bound to the compute copies while training).
TrainStep::~TrainStep() {
  if (o_.compute != dtypes::float32) model_.bind(first().masters);
}

nn::Optimizer& TrainStep::optimizer() {
  LG_USER_CHECK(first().opt != nullptr, "train: this step has no optimizer (--optimizer none): nothing to save or resume");
  return *first().opt;
}

Tensor TrainStep::upload(const int32_t* data, const Replica& r) const {
  int64_t n = rows() * o_.seq_len;
  return Tensor::from_bytes(data + r.rows_begin * o_.seq_len, static_cast<size_t>(n) * sizeof(int32_t),
                            {rows(), o_.seq_len}, dtypes::int32, r.device);
}

std::vector<Tensor> TrainStep::inputs(const HostBatch& b) const {
  std::vector<Tensor> in;
  for (size_t k : local_) {
    in.push_back(upload(b.tokens, replicas_[k]));
    in.push_back(upload(b.labels, replicas_[k]));
  }
  return in;
}

std::vector<std::vector<Tensor>> TrainStep::sum_over_devices(const std::vector<std::vector<Tensor>>& xs) {
  std::vector<Tensor> flat;
  for (const std::vector<Tensor>& list : xs) {
    std::vector<Tensor> parts;
    for (const Tensor& x : list) parts.push_back(x.cast(dtypes::float32).reshape({x.numel()}));
    flat.push_back(parts.size() == 1 ? parts[0] : Tensor::cat(parts));
  }
  std::vector<Tensor> sums = allreduce(flat);
  std::vector<std::vector<Tensor>> out(xs.size());
  for (size_t r = 0; r < xs.size(); r++) {
    int64_t at = 0;
    for (const Tensor& x : xs[r]) {
      out[r].push_back(sums[r].slice(0, at, at + x.numel()).reshape(x.shape()));
      at += x.numel();
    }
  }
  return out;
}

// in: tokens and labels of each local replica. Forward and backward of each replica's rows' share
// of the step's mean loss; gradients (and, data parallel, the loss) are added into the replica's
// sums. Returns the first replica's share (a float32 scalar). Nothing crosses devices here.
std::vector<Tensor> TrainStep::micro_fn(const std::vector<Tensor>& in) {
  double tokens_per_step = static_cast<double>(o_.micro_batch * o_.seq_len * o_.grad_accum);
  std::vector<Tensor> outs, losses;
  for (size_t k = 0; k < local_.size(); k++) {
    Replica& r = replicas_[local_[k]];
    Tensor loss = r.model->loss_sum(in[2 * k], in[2 * k + 1], o_.loss_chunk) * (1.0 / tokens_per_step);
    loss.backward();
    losses.push_back(loss);
    outs.push_back(loss);
    if (parallel())
      outs.push_back(r.loss_acc.assign(assign_sums() ? loss.reshape({1}) : r.loss_acc + loss.reshape({1})));
    for (size_t i = 0; i < r.compute.size(); i++) {
      Tensor c = r.compute.items()[i].second;
      Tensor g = c.grad();
      if (!g.defined()) continue;
      if (r.opt) {
        // a float32 view of the flat buffer: an embedding's gradient is scattered straight into it
        outs.push_back(r.opt->grad_view(i).accumulate(g, assign_sums()));
      } else {
        outs.push_back(g);
      }
      c.set_grad(Tensor());
    }
  }
  Tensor::realize(outs);
  return {losses[0]};
}

// in: each local replica's optimizer scalars. Data parallel: first sums the flat gradient buffers
// over all devices, bucket by bucket, writing each sum back into its run (one schedule; the update
// must read the buffers after those writes, so it is a second schedule). Then for every replica
// (stand-ins included, so every process builds the same graph): clip, update, recast the compute
// copies, zero the sums (with accumulation). Returns the first local replica's gradient norm before clipping
// and, data parallel, the step's loss over all devices.
std::vector<Tensor> TrainStep::update_fn(const std::vector<Tensor>& in) {
  size_t n = replicas_.size();
  std::vector<Tensor> outs, loss_total(n);
  if (parallel()) {
    for (const auto& [begin, end] : buckets_) {
      std::vector<std::vector<Tensor>> xs(n);
      for (size_t r = 0; r < n; r++) xs[r].push_back(replicas_[r].opt->grads().slice(0, begin, end));
      std::vector<std::vector<Tensor>> sums = sum_over_devices(xs);
      for (size_t r = 0; r < n; r++) {
        Tensor run = replicas_[r].opt->grads().slice(0, begin, end);
        outs.push_back(run.assign(sums[r][0]));
      }
    }
    std::vector<std::vector<Tensor>> xs;
    for (const Replica& r : replicas_) xs.push_back({r.loss_acc});
    std::vector<std::vector<Tensor>> sums = sum_over_devices(xs);
    for (size_t r = 0; r < n; r++) outs.push_back(loss_total[r] = sums[r][0].reshape({}));
    Tensor::realize(outs);
    outs.clear();
  }
  std::vector<Tensor> norms(n);
  size_t next_input = 0;
  for (size_t k = 0; k < n; k++) {
    Replica& r = replicas_[k];
    norms[k] = r.opt->clip_flat_grads(o_.clip > 0 ? o_.clip : std::numeric_limits<double>::infinity());
    std::vector<Tensor> update = r.opt->build_step(r.remote ? r.scalars : in[next_input++]);
    outs.insert(outs.end(), update.begin(), update.end());
    outs.push_back(norms[k]);
    if (o_.compute != dtypes::float32)  // flat_params(): the updated value
      outs.push_back(r.compute_flat.assign(r.opt->flat_params().cast(o_.compute)));
    if (!assign_sums()) {  // the next step's first micro-batch adds to zeros
      Tensor grads = r.opt->grads();
      outs.push_back(grads.assign(Tensor::zeros(grads.shape(), dtypes::float32, r.device)));
      if (parallel()) outs.push_back(r.loss_acc.assign(Tensor::zeros({1}, dtypes::float32, r.device)));
    }
  }
  Tensor::realize(outs);
  size_t f = local_[0];
  if (parallel()) return {norms[f], loss_total[f]};
  return {norms[f]};
}

// in: tokens and labels of each local replica. The batch's loss sum (over all devices, data
// parallel). The local forward passes are realized first, so the allreduce's inputs are buffers on
// every process alike (the same graph everywhere).
std::vector<Tensor> TrainStep::eval_fn(const std::vector<Tensor>& in) {
  std::vector<Tensor> local;
  for (size_t k = 0; k < local_.size(); k++)
    local.push_back(replicas_[local_[k]].model->loss_sum(in[2 * k], in[2 * k + 1], o_.loss_chunk).reshape({1}));
  Tensor::realize(local);
  if (!parallel()) return {local[0].reshape({})};
  std::vector<std::vector<Tensor>> xs;
  size_t next = 0;
  for (const Replica& r : replicas_) xs.push_back({r.remote ? r.eval_loss : local[next++]});
  std::vector<std::vector<Tensor>> sums = sum_over_devices(xs);
  std::vector<Tensor> all;
  for (const auto& v : sums) all.push_back(v[0]);
  Tensor::realize(all);
  return {all[local_[0]].reshape({})};
}

StepResult TrainStep::step(const std::vector<HostBatch>& micro, double lr) {
  LG_USER_CHECK(static_cast<int64_t>(micro.size()) == o_.grad_accum, "train: a step takes ", o_.grad_accum,
                " micro-batches, got ", micro.size());
  StepResult res;
  for (const HostBatch& b : micro) {
    std::vector<Tensor> in = inputs(b);
    std::vector<Tensor> out = micro_jit_ ? (*micro_jit_)(in) : micro_fn(in);
    if (!parallel()) res.loss += out[0].to_doubles()[0];
  }
  if (!first().opt) return res;  // forward and backward only
  std::vector<Tensor> in;
  int64_t before = first().opt->steps();
  for (Replica& r : replicas_) {
    r.opt->set_lr(lr);
    if (!r.remote) in.push_back(r.opt->upload_scalars());
  }
  std::vector<Tensor> out = update_jit_ ? (*update_jit_)(in) : update_fn(in);
  for (Replica& r : replicas_)
    if (r.opt->steps() == before) r.opt->set_steps(before + 1);  // a replay does not run build_step
  res.grad_norm = out[0].to_doubles()[0];
  if (parallel()) res.loss = out[1].to_doubles()[0];
  return res;
}

double TrainStep::eval_loss_sum(const HostBatch& b) {
  std::vector<Tensor> in = inputs(b);
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
  for (Replica& r : replicas_) {
    if (!r.opt) continue;
    if (r.remote)
      r.opt->set_steps(0);
    else
      r.opt->reset_state();
  }
}

void TrainStep::refresh_compute() {
  std::vector<Tensor> outs;
  const Replica& from = first();
  for (size_t k = 1; k < local_.size(); k++) {  // the first replica's masters and optimizer state, copied
    Replica& r = replicas_[local_[k]];
    if (!r.opt) {
      for (size_t i = 0; i < r.masters.size(); i++) {
        Tensor p = r.masters.items()[i].second;
        outs.push_back(p.assign(from.masters.items()[i].second.to(r.device)));
      }
      continue;
    }
    Tensor flat = r.opt->flat_params();
    outs.push_back(flat.assign(from.opt->flat_params().to(r.device)));
    nn::ParamList src = from.opt->state(), dst = r.opt->state();
    for (size_t i = 0; i < dst.size(); i++) {
      Tensor s = dst.items()[i].second;
      outs.push_back(s.assign(src.items()[i].second.to(r.device)));
    }
  }
  for (Replica& r : replicas_)
    if (r.opt) r.opt->set_steps(from.opt->steps());
  Tensor::realize(outs);
  outs.clear();
  if (o_.compute == dtypes::float32) return;
  for (size_t k : local_) {
    Replica& r = replicas_[k];
    if (r.opt) {
      outs.push_back(r.compute_flat.assign(r.opt->flat_params().cast(o_.compute)));
      continue;
    }
    for (size_t i = 0; i < r.compute.size(); i++) {
      Tensor c = r.compute.items()[i].second;
      outs.push_back(c.assign(r.masters.items()[i].second.cast(o_.compute)));
    }
  }
  Tensor::realize(outs);
}

}  // namespace lg::llm
