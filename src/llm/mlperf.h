#pragma once
// One MLPerf llama31_8b benchmark run (../shared/spec/MLPERF_LLAMA31_8B.md), logged in mllog format:
//   init_start .. init_stop   untimed: model, compile and warm the training and eval steps on synthetic
//                             data (learning rate 0, then the optimizer state is reset), sample indices
//                             from the .idx files
//   run_start                 the clock starts, before the first data read
//   blocks                    train eval_every sequences (whole global batches), then evaluate on
//                             eval_samples sequences: eval_accuracy = mean token cross-entropy (nats)
//   run_stop                  status "success" at loss <= target; "aborted" on a NaN/inf loss, the
//                             sample budget, or SIGINT/SIGTERM (the log is closed properly)
// Presets: "llama31_8b" (the real benchmark) and "mini" (the same rules at the scale of a 2-core
// machine on the bundled Brown corpus, docs/mlperf.md).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "llm/llama_config.h"

namespace lg::llm {

struct MlperfConfig {
  std::string preset;
  LlamaConfig model;
  int64_t seq_len = 8192;
  int64_t global_batch = 16, grad_accum = 1;  // micro-batch = global_batch / grad_accum
  double lr = 4e-4;
  int64_t warmup = 16;
  int64_t max_steps = 1200000;  // the LR schedule's length (logged as max_steps)
  int64_t eval_every = 12288;   // training sequences between evaluations (rounded up to whole batches)
  int64_t eval_samples = 1024;
  double target = 3.3;  // eval_accuracy (log perplexity) to reach
  int64_t max_samples = 0;  // abort after this many training sequences (0: no budget)
  std::string dtype = "bf16";
  int64_t loss_chunk = 0;
  std::string train_prefix, eval_prefix;  // Megatron datasets
  std::optional<uint64_t> seed;           // drawn from the OS when absent
  // Logged submission fields.
  std::string org = "lazygrad", platform = "cpu", division = "closed", status = "onprem";
  int64_t warmup_steps = 3;  // synthetic warm-up steps during init (lr 0)
  // Data parallel (docs/distributed.md): the global device list (TrainStepOptions::devices); only
  // the writer (rank 0 of a multi-process run) writes the MLPerf log.
  std::vector<std::string> devices;
  bool writer = true;

  int64_t micro_batch() const { return global_batch / grad_accum; }
  void validate() const;  // user errors naming the option
};

// Preset names and presets; data prefixes of "mini" default to the fetched Brown corpus under
// data_dir (scripts/fetch_data.sh).
std::vector<std::string> mlperf_preset_names();
MlperfConfig mlperf_preset(const std::string& name, const std::string& data_dir);

struct MlperfResult {
  std::string status;  // "success" or "aborted"
  std::string reason;  // why it aborted ("" on success)
  uint64_t seed = 0;
  int64_t run_start_ms = 0, run_stop_ms = 0;
  int64_t samples = 0;  // training sequences consumed
  std::vector<std::pair<int64_t, double>> evals;  // (samples_count, eval_accuracy)
  double minutes() const { return static_cast<double>(run_stop_ms - run_start_ms) / 60000.0; }
};

// What a run is doing, for progress lines between the log's events (a block of the real benchmark
// is hundreds of steps with nothing logged). Reported once the model is built (Init, step 0), after
// each warm-up step of init, each training step and each evaluation.
struct MlperfProgress {
  enum class Phase { Init, Train, Eval } phase = Phase::Init;
  int64_t step = 0;       // Init: warm-up steps done (of warmup_steps); Train/Eval: training steps done
  int64_t samples = 0;    // training sequences so far
  int64_t next_eval = 0;  // Train: the samples count of the block's evaluation
  double loss = 0;        // Train: the step's loss; Eval: eval_accuracy; Init: 0
  double seconds = 0;     // since init_start (Init) or run_start (Train, Eval)
};
using MlperfProgressFn = std::function<void(const MlperfProgress&)>;

// Runs the benchmark once, logging to the console and to log_path ("" for the console only);
// progress, if set, is called as MlperfProgress says (it must not take long: it runs on the clock).
MlperfResult run_mlperf(const MlperfConfig& config, const std::string& log_path,
                        const MlperfProgressFn& progress = {});

// Olympic mean of times to train: drops the fastest and the slowest when there are at least 3.
double olympic_mean(std::vector<double> minutes);

}  // namespace lg::llm
