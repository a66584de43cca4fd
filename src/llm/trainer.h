#pragma once
// The training loop of `lazygrad train`: data (a Megatron dataset or synthetic), the LR schedule,
// TrainStep, periodic evaluation, checkpoints with exact resume, and per-step measurements. It
// reports through a callback of JSON records (the command prints them and writes the metrics file):
//   {"event":"step", "step", "loss", "lr", "grad_norm", "step_s", "tokens_per_s", "mfu"}
//   {"event":"eval", "step", "loss", "samples"}
//   {"event":"checkpoint", "step", "path"}
//   {"event":"resume", "step", "path"}
//   {"event":"summary", "steps", "status", "first_loss", "last_loss", "eval_loss", "median_step_s",
//    "tokens_per_s", "mfu", "peak_buffer_bytes", "planned_bytes"}
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "llm/train_step.h"

namespace lg::llm {

struct TrainerOptions {
  TrainStepOptions step;
  int64_t steps = 100;  // optimizer steps to reach (a resumed run continues up to it)
  // LR: "cosine" (MLPerf warmup + cosine to end_lr), "constant", "wsd" (warmup-stable-decay, decaying
  // over the last decay_fraction of the steps).
  std::string schedule = "cosine";
  double lr = 1e-3;
  double end_lr = -1;  // < 0: 0.1 * lr (the MLPerf rule)
  int64_t warmup = 0;
  int64_t schedule_steps = 0;  // the schedule's total length; 0: steps
  double decay_fraction = 0.2;
  // Data: synthetic, or Megatron prefixes (PREFIX.bin/.idx) for training and evaluation.
  bool synthetic = false;
  std::string train_prefix, eval_prefix;
  uint64_t seed = 1;
  int64_t eval_every = 0;     // steps between evaluations (0: only at the end when eval data exists)
  int64_t eval_samples = 64;  // sequences per evaluation (whole micro-batches of them are used; 0: none)
  // Checkpoints: saved every save_every steps and at the end when checkpoint_dir is set.
  std::string checkpoint_dir;
  int64_t save_every = 0;
  int keep = 3;
  bool resume = false;  // continue from the newest checkpoint in checkpoint_dir, if there is one
  double peak_flops = 0;  // MFU denominator per device; 0: default_peak_flops(device, compute dtype)
  // Data parallel across processes: only the writer (rank 0) saves checkpoints; every process
  // reads them to resume.
  bool writer = true;
};

using TrainEvent = std::function<void(const nlohmann::json&)>;

// A user error, naming the command-line flag, when the options are unusable: no training data
// (neither synthetic nor a dataset) or both, a dataset prefix without its .idx and .bin files,
// steps or the LR out of range, an unknown schedule, a warmup not inside it, negative intervals,
// fewer than one checkpoint kept, --resume without a checkpoint directory, a checkpoint directory
// that cannot be created (it is created here), or TrainStepOptions out of range
// (check_train_step_options). Callers check before building a model, which may take minutes;
// train() checks too.
void check_trainer_options(const TrainerOptions& options);

// Runs the loop; returns the summary record (also reported). User errors (bad data, bad options)
// throw lg::Error. A NaN or infinite loss stops the run with status "diverged".
nlohmann::json train(Llama& model, const TrainerOptions& options, const TrainEvent& report);

}  // namespace lg::llm
