#include "llm/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "base/error.h"
#include "llm/batch_iterator.h"
#include "llm/indexed_dataset.h"
#include "llm/metrics.h"
#include "llm/synthetic.h"
#include "nn/checkpoint.h"
#include "nn/file_io.h"
#include "nn/lr_schedule.h"
#include "runtime/buffer.h"

namespace lg::llm {

using json = nlohmann::json;

namespace {

// The schedule of the options (a user error when it is unknown or its warmup is not inside it).
nn::LRSchedule make_schedule(const TrainerOptions& o) {
  double end = o.end_lr >= 0 ? o.end_lr : 0.1 * o.lr;
  int64_t total = o.schedule_steps > 0 ? o.schedule_steps : o.steps;
  LG_USER_CHECK(o.warmup >= 0, "train: --warmup must be 0 or more steps, got ", o.warmup);
  LG_USER_CHECK(o.warmup < std::max<int64_t>(total, 1), "train: --warmup (", o.warmup,
                ") must be below the schedule's length (", total, " steps)");
  if (o.schedule == "cosine") return nn::warmup_cosine(o.lr, end, o.warmup, total);
  if (o.schedule == "constant") return nn::constant_lr(o.lr);
  if (o.schedule == "wsd") {
    int64_t decay = std::max<int64_t>(1, static_cast<int64_t>(std::llround(o.decay_fraction * static_cast<double>(total))));
    return nn::warmup_stable_decay(o.lr, end, o.warmup, std::max(o.warmup, total - decay), decay);
  }
  user_error("train: unknown --schedule \"", o.schedule, "\"; use cosine, constant or wsd");
}

}  // namespace

void check_trainer_options(const TrainerOptions& o) {
  LG_USER_CHECK(o.synthetic || !o.train_prefix.empty(),
                "train: give --train-data PREFIX (a Megatron dataset) or --synthetic");
  LG_USER_CHECK(
      !o.synthetic || (o.train_prefix.empty() && o.eval_prefix.empty()),
      "train: --synthetic trains and evaluates on synthetic tokens; drop it to use --train-data/--eval-data");
  for (const auto& [flag, prefix] :
       {std::pair{"--train-data", o.train_prefix}, std::pair{"--eval-data", o.eval_prefix}}) {
    if (!prefix.empty()) require_dataset_files(std::string("train: ") + flag, prefix);
  }
  LG_USER_CHECK(o.steps > 0, "train: --steps must be positive, got ", o.steps);
  LG_USER_CHECK(std::isfinite(o.lr) && o.lr > 0, "train: --lr must be positive, got ", o.lr);
  LG_USER_CHECK(o.schedule_steps >= 0, "train: --schedule-steps must be 0 (--steps) or positive, got ",
                o.schedule_steps);
  make_schedule(o);
  LG_USER_CHECK(o.eval_every >= 0, "train: --eval-every must be 0 (at the end only) or positive, got ",
                o.eval_every);
  LG_USER_CHECK(o.eval_samples >= 0, "train: --eval-samples must be 0 (no evaluation) or positive, got ",
                o.eval_samples);
  LG_USER_CHECK(o.save_every >= 0, "train: --save-every must be 0 (at the end only) or positive, got ",
                o.save_every);
  LG_USER_CHECK(o.keep >= 1, "train: --keep must be at least 1 checkpoint, got ", o.keep);
  LG_USER_CHECK(o.peak_flops >= 0, "train: --peak-tflops must be positive, got ", o.peak_flops / 1e12);
  LG_USER_CHECK(!o.resume || !o.checkpoint_dir.empty(), "train: --resume needs --checkpoint-dir");
  check_train_step_options(o.step);
  if (!o.checkpoint_dir.empty() && o.writer) nn::make_directories(o.checkpoint_dir, "--checkpoint-dir");
}

namespace {

std::shared_ptr<const WindowSource> train_source(const Llama& m, const TrainerOptions& o) {
  int64_t seq = o.step.seq_len;
  if (o.synthetic) return std::make_shared<SyntheticSource>(m.config().vocab_size, seq, o.seed);
  return std::make_shared<TrainSampler>(std::make_shared<IndexedDataset>(o.train_prefix), seq, o.seed);
}

std::shared_ptr<const WindowSource> eval_source(const Llama& m, const TrainerOptions& o) {
  int64_t seq = o.step.seq_len;
  if (o.eval_samples == 0) return nullptr;
  if (o.synthetic)  // other samples of the training cycle
    return std::make_shared<SyntheticSource>(m.config().vocab_size, seq, o.seed, 4096, uint64_t{1} << 40);
  if (o.eval_prefix.empty()) return nullptr;
  return std::make_shared<ValidationSampler>(std::make_shared<IndexedDataset>(o.eval_prefix), seq,
                                             static_cast<uint64_t>(o.eval_samples));
}

// The whole micro-batches of the first eval_samples sequences of the eval source: at least one, else
// a user error (checked before training starts, so a run does not fail at its first evaluation).
int64_t eval_batches(const WindowSource& source, const TrainerOptions& o) {
  int64_t mb = o.step.micro_batch;
  uint64_t available = std::min<uint64_t>(source.num_samples(), static_cast<uint64_t>(o.eval_samples));
  int64_t batches = static_cast<int64_t>(available) / mb;
  LG_USER_CHECK(batches > 0, "train: the evaluation has ", available, " sequences of ", o.step.seq_len + 1,
                " tokens (--eval-samples ", o.eval_samples, "), fewer than one micro-batch (--batch ", mb,
                "); use more eval data, a larger --eval-samples, a smaller --batch, or --eval-samples 0 for none");
  return batches;
}

// Mean token loss over the first eval_samples sequences (whole micro-batches) of the eval source.
json evaluate(TrainStep& ts, const std::shared_ptr<const WindowSource>& source, const TrainerOptions& o) {
  int64_t mb = o.step.micro_batch;
  int64_t batches = eval_batches(*source, o);
  BatchIterator it(source, mb, 0);
  double sum = 0;
  for (int64_t b = 0; b < batches; b++) {
    std::optional<Batch> batch = it.next();
    LG_CHECK(batch.has_value(), "eval batch ", b, " missing");
    sum += ts.eval_loss_sum({batch->inputs.data(), batch->labels.data()});
  }
  double tokens = static_cast<double>(batches * mb * o.step.seq_len);
  return {{"loss", sum / tokens}, {"samples", batches * mb}};
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

json train(Llama& model, const TrainerOptions& o, const TrainEvent& report) {
  check_trainer_options(o);
  nn::LRSchedule lr_at = make_schedule(o);
  std::shared_ptr<const WindowSource> train_data = train_source(model, o);
  std::shared_ptr<const WindowSource> eval_data = eval_source(model, o);
  if (eval_data) eval_batches(*eval_data, o);
  reset_buffer_peak();
  TrainStep ts(model, o.step);

  std::optional<nn::CheckpointManager> ckpt;
  if (!o.checkpoint_dir.empty()) ckpt.emplace(o.checkpoint_dir, o.keep);
  int64_t step = 0;
  uint64_t data_position = 0;
  if (o.resume) {
    if (std::optional<std::string> dir = ckpt->latest()) {
      nn::ParamList masters = ts.masters();
      nn::TrainProgress p;
      try {
        p = nn::CheckpointManager::load(*dir, masters, ts.optimizer());
      } catch (const Error& e) {  // a damaged newest checkpoint: say which older one a resume could use
        std::vector<std::string> all = ckpt->list();
        user_error("train: --resume: cannot load the newest checkpoint ", *dir, ": ", e.what(), "; ",
                   all.size() > 1 ? "move it out of --checkpoint-dir to resume from " + all[all.size() - 2]
                                  : std::string("it is the only one: train without --resume to start over"));
      }
      ts.refresh_compute();
      step = p.step;
      data_position = static_cast<uint64_t>(p.data_position);
      report({{"event", "resume"}, {"step", step}, {"path", *dir}});
    }
  }

  const int64_t tokens_per_step = o.step.micro_batch * o.step.seq_len * o.step.grad_accum;
  const double flops_per_token = model.config().train_flops_per_token(o.step.seq_len);
  const double devices = static_cast<double>(std::max<size_t>(1, o.step.devices.size()));
  const double peak = devices * (o.peak_flops > 0 ? o.peak_flops
                                                  : default_peak_flops(model.params().items().front().second.device(),
                                                                       o.step.compute));
  BatchIterator batches(train_data, o.step.micro_batch, data_position);
  std::vector<double> step_times;
  double first_loss = NAN, last_loss = NAN, eval_loss = NAN;
  std::string status = "completed";
  const int64_t first_step = step;

  auto save = [&](int64_t s) {
    nn::TrainProgress p;
    p.step = s;
    p.data_position = static_cast<int64_t>(batches.position());
    p.rng = Tensor::rng_position();
    if (!o.writer) return;
    std::string path = ckpt->save(ts.masters(), ts.optimizer(), p);
    report({{"event", "checkpoint"}, {"step", s}, {"path", path}});
  };
  auto run_eval = [&](int64_t s) {
    json e = evaluate(ts, eval_data, o);
    eval_loss = e["loss"].get<double>();
    e["event"] = "eval";
    e["step"] = s;
    report(e);
  };

  while (step < o.steps) {
    std::vector<Batch> micro;
    for (int64_t a = 0; a < o.step.grad_accum; a++) {
      std::optional<Batch> b = batches.next();
      LG_USER_CHECK(b.has_value(), "train: the training data ran out");
      micro.push_back(std::move(*b));
    }
    std::vector<HostBatch> host;
    for (const Batch& b : micro) host.push_back({b.inputs.data(), b.labels.data()});
    double lr = lr_at(step);
    auto t0 = std::chrono::steady_clock::now();
    StepResult r = ts.step(host, lr);
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    step++;
    step_times.push_back(dt);
    if (std::isnan(first_loss)) first_loss = r.loss;
    last_loss = r.loss;
    double tps = static_cast<double>(tokens_per_step) / dt;
    report({{"event", "step"},
            {"step", step},
            {"loss", r.loss},
            {"lr", lr},
            {"grad_norm", r.grad_norm},
            {"step_s", dt},
            {"tokens_per_s", tps},
            {"mfu", flops_per_token * tps / peak}});
    if (!std::isfinite(r.loss)) {
      status = "diverged";
      break;
    }
    if (eval_data && o.eval_every > 0 && step % o.eval_every == 0) run_eval(step);
    if (ckpt && o.save_every > 0 && step % o.save_every == 0) save(step);
  }
  if (status == "completed") {
    if (eval_data && (o.eval_every <= 0 || step % o.eval_every != 0)) run_eval(step);
    if (ckpt && (o.save_every <= 0 || step % o.save_every != 0) && step > first_step) save(step);
  }

  // Steady state: the first two steps compile and capture (Jit); leave them out when there are more.
  std::vector<double> steady(step_times.begin() + (step_times.size() > 4 ? 2 : 0), step_times.end());
  double med = median(steady);
  double tps = med > 0 ? static_cast<double>(tokens_per_step) / med : 0;
  json summary = {{"event", "summary"},
                  {"steps", step},
                  {"steps_run", step - first_step},  // 0: resumed at or past --steps, nothing trained
                  {"status", status},
                  {"first_loss", first_loss},
                  {"last_loss", last_loss},
                  {"eval_loss", std::isnan(eval_loss) ? json(nullptr) : json(eval_loss)},
                  {"median_step_s", med},
                  {"tokens_per_s", tps},
                  {"mfu", flops_per_token * tps / peak},
                  {"peak_flops", peak},
                  {"peak_buffer_bytes", buffer_peak_bytes()},
                  {"planned_bytes", ts.planned_bytes()}};
  report(summary);
  return summary;
}

}  // namespace lg::llm
