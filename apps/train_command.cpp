// lazygrad train: trains a Llama model (docs/llama.md): a preset or config file, synthetic data or a
// Megatron dataset, AdamW with clipping and an LR schedule, evaluation, checkpoints, metrics.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "apps/cli_validators.h"
#include "apps/commands.h"
#include "base/config.h"
#include "base/error.h"
#include "dist/launch.h"
#include "llm/hf_checkpoint.h"
#include "llm/host_memory.h"
#include "llm/metrics.h"
#include "llm/trainer.h"
#include "nn/file_io.h"
#include "runtime/device.h"

namespace lg::apps {
namespace {

struct TrainArgs {
  std::string model = "tiny";
  std::vector<std::string> sets;
  std::string dtype = "bf16";
  std::string metrics;
  std::string devices;
  double bucket_mb = 32;
  std::string init_from, save_hf;
  double peak_tflops = 0;
  int64_t log_every = 1;
  bool no_jit = false;
  llm::TrainerOptions o;
};

llm::LlamaConfig model_config(const TrainArgs& a) {
  llm::LlamaConfig c = llm::load_llama_config(a.model);
  for (const std::string& kv : a.sets) {
    size_t eq = kv.find('=');
    LG_USER_CHECK(eq != std::string::npos && eq > 0, "--set ", kv, ": expected KEY=VALUE, e.g. --set layers=2");
    c.set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  c.validate();
  return c;
}

std::string human_bytes(double b) {
  char buf[64];
  if (b >= 1 << 30) std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1 << 30));
  else std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1 << 20));
  return buf;
}

// Prints the trainer's events: on a terminal the current step is redrawn in place (with a bar and
// an estimate of the time left) and every log_every-th step stays; elsewhere plain lines.
class Console {
 public:
  Console(int64_t steps, int64_t log_every) : steps_(steps), every_(std::max<int64_t>(1, log_every)) {
    tty_ = isatty(fileno(stdout));
  }
  void event(const nlohmann::json& e) {
    std::string kind = e["event"];
    if (kind == "step") return step(e);
    end_line();
    if (kind == "eval")
      std::printf("eval  step %lld: loss %.4f over %lld sequences\n", e["step"].get<long long>(),
                  e["loss"].get<double>(), e["samples"].get<long long>());
    else if (kind == "checkpoint" || kind == "resume")
      std::printf("%s step %lld: %s\n", kind == "checkpoint" ? "saved" : "resumed from", e["step"].get<long long>(),
                  e["path"].get<std::string>().c_str());
    std::fflush(stdout);
  }

 private:
  void step(const nlohmann::json& e) {
    long long s = e["step"].get<long long>();
    double dt = e["step_s"];
    char line[256];
    std::snprintf(line, sizeof line, "step %lld/%lld | loss %.4f | lr %.3g | grad norm %.3f | %.0f tok/s | %.3f s | MFU %.2f%%",
                  s, static_cast<long long>(steps_), e["loss"].get<double>(), e["lr"].get<double>(),
                  e["grad_norm"].get<double>(), e["tokens_per_s"].get<double>(), dt, 100 * e["mfu"].get<double>());
    bool keep = s % every_ == 0 || s == steps_ || s == 1;
    if (tty_) {
      double left = dt * static_cast<double>(steps_ - s);
      std::printf("\r\033[K%s | %lldm%02llds left", line, static_cast<long long>(left) / 60,
                  static_cast<long long>(left) % 60);
      open_ = true;
      if (keep) end_line();
    } else if (keep) {
      std::printf("%s\n", line);
    }
    std::fflush(stdout);
  }
  void end_line() {
    if (open_) std::printf("\n");
    open_ = false;
  }
  int64_t steps_, every_;
  bool tty_ = false, open_ = false;
};

void run_train(TrainArgs& a) {
  llm::TrainerOptions& o = a.o;
  LG_USER_CHECK(a.dtype == "bf16" || a.dtype == "fp32", "--dtype must be bf16 or fp32, got ", a.dtype);
  o.step.compute = a.dtype == "bf16" ? dtypes::bfloat16 : dtypes::float32;
  o.step.jit = !a.no_jit;
  o.peak_flops = a.peak_tflops * 1e12;
  o.step.adamw.lr = o.step.sgd.lr = o.lr;
  o.step.sgd.weight_decay = 0;
  o.step.bucket_bytes = static_cast<int64_t>(a.bucket_mb * (1 << 20));  // used when data parallel

  // Data parallel: this process's devices, and every process's when started by mpirun.
  const dist::Context& ctx = dist::start();
  if (!a.devices.empty() || ctx.size > 1) {
    std::vector<std::string> local = dist::local_devices(a.devices.empty() ? config().device : a.devices);
    std::vector<std::string> global = dist::global_devices(local);
    config().device = local[0];  // the model is created on this process's first device
    if (global.size() > 1) o.step.devices = global;
    o.writer = ctx.rank == 0;
    if (ctx.rank != 0) {  // only rank 0 reports; errors still reach stderr
      a.metrics.clear();
      a.save_hf.clear();
      LG_USER_CHECK(std::freopen("/dev/null", "w", stdout) != nullptr, "cannot silence stdout of rank ", ctx.rank);
    }
  }

  llm::check_trainer_options(o);  // before building a model that may take minutes
  if (!a.save_hf.empty()) nn::make_directories(a.save_hf, "--save-hf");  // not only after training
  Tensor::manual_seed(o.seed);
  // the model's lasting state must fit in host memory before it is built (llm/host_memory.h)
  const llm::LlamaConfig wanted = a.init_from.empty() ? model_config(a) : llm::load_hf_config(a.init_from);
  llm::check_host_memory_for(wanted, o.step, config().device);
  auto model = std::make_unique<llm::Llama>(wanted);
  if (!a.init_from.empty()) llm::load_hf_weights(*model, a.init_from);
  const llm::LlamaConfig& c = model->config();
  dist::check_agreement(str("model ", c.summary(), "; steps ", o.steps, "; batch ", o.step.micro_batch, "x",
                            o.step.seq_len, "x", o.step.grad_accum, "; ", a.dtype, "; ", o.step.optimizer, "; seed ",
                            o.seed, "; lr ", o.lr, "; devices ", o.step.devices.size()));
  std::printf("model %s\n", c.summary().c_str());
  bool timed = get_device(config().device).runs_kernels();
  if (!timed)
    std::printf("%s runs no kernel (a compile check): the losses, step times and MFU printed are meaningless\n",
                config().device.c_str());
  if (!o.step.devices.empty())
    std::printf("data parallel over %zu devices (%d process%s): the batch of %lld sequences splits %lld per device\n",
                o.step.devices.size(), ctx.size, ctx.size == 1 ? "" : "es", static_cast<long long>(o.step.micro_batch),
                static_cast<long long>(o.step.micro_batch / static_cast<int64_t>(o.step.devices.size())));
  std::printf("train %s, batch %lld x %lld tokens x %lld accumulation = %lld tokens/step, %lld steps, %s compute, "
              "lr %g (%s, warmup %lld)%s\n",
              o.synthetic ? "on synthetic data" : ("on " + o.train_prefix).c_str(), static_cast<long long>(o.step.micro_batch),
              static_cast<long long>(o.step.seq_len), static_cast<long long>(o.step.grad_accum),
              static_cast<long long>(o.step.micro_batch * o.step.seq_len * o.step.grad_accum),
              static_cast<long long>(o.steps), a.dtype.c_str(), o.lr, o.schedule.c_str(),
              static_cast<long long>(o.warmup), o.step.jit ? "" : ", no jit");
  std::fflush(stdout);

  llm::MetricsFile metrics(a.metrics, /*append=*/o.resume);
  Console console(o.steps, a.log_every);
  nlohmann::json summary = llm::train(*model, o, [&](const nlohmann::json& e) {
    metrics.write(e);
    if (e["event"] != "summary") console.event(e);
  });
  const bool trained = summary["steps_run"].get<long long>() > 0;
  if (trained)
    std::printf("done: %lld steps (%s), loss %.4f -> %.4f", summary["steps"].get<long long>(),
                summary["status"].get<std::string>().c_str(), summary["first_loss"].get<double>(),
                summary["last_loss"].get<double>());
  else
    std::printf("done: nothing to train: resumed at step %lld, --steps is %lld",
                summary["steps"].get<long long>(), static_cast<long long>(o.steps));
  if (!summary["eval_loss"].is_null()) std::printf(", eval loss %.4f", summary["eval_loss"].get<double>());
  if (!trained)
    std::printf("\n");
  else if (timed)
    std::printf("\nsteady state: median step %.3f s, %.0f tokens/s, MFU %.2f%% of %.0f GFLOP/s\n",
                summary["median_step_s"].get<double>(), summary["tokens_per_s"].get<double>(),
                100 * summary["mfu"].get<double>(), summary["peak_flops"].get<double>() / 1e9);
  else
    std::printf("\nsteady state: not measured (%s runs no kernel)\n", config().device.c_str());
  if (config().debug >= 1)
    std::printf("memory: peak buffers %s, Jit arenas %s\n",
                human_bytes(summary["peak_buffer_bytes"].get<double>()).c_str(),
                human_bytes(summary["planned_bytes"].get<double>()).c_str());
  if (!a.metrics.empty()) std::printf("metrics: %s\n", a.metrics.c_str());
  if (!a.save_hf.empty()) {
    llm::save_hf_model(*model, a.save_hf);
    std::printf("saved Hugging Face checkpoint: %s\n", a.save_hf.c_str());
  }
  if (summary["status"] != "completed") user_error("training stopped: loss is not finite (diverged)");
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto a = std::make_shared<TrainArgs>();
  llm::TrainerOptions& o = a->o;
  auto* cmd = app.add_subcommand("train", "train a Llama model (synthetic data or a Megatron dataset)");
  const CLI::Validator positive = at_least(1, "a positive whole number");
  CLI::Option* model_opt =
      cmd->add_option("--model,--config", a->model,
                      "preset (tiny, small, llama3.1-8b, ...), config.json, or lazygrad JSON config")
          ->capture_default_str();
  CLI::Option* set_opt = cmd->add_option(
      "--set", a->sets,
      "override a model field, KEY=VALUE (dim, layers, heads, kv_heads, ffn_dim, vocab, ...)");
  // the checkpoint's config.json is the model: a --model or --set beside it would be ignored
  cmd->add_option(
         "--init-from", a->init_from,
         "start from a Hugging Face checkpoint directory instead of random weights (its config.json is "
         "the model: not with --model or --set)")
      ->excludes(model_opt)
      ->excludes(set_opt);
  cmd->add_option("--save-hf", a->save_hf, "at the end, save the model as a Hugging Face checkpoint directory");
  cmd->add_option("--seq", o.step.seq_len, "sequence length")->capture_default_str()->check(positive);
  cmd->add_option("--batch", o.step.micro_batch, "micro-batch size (sequences)")
      ->capture_default_str()
      ->check(positive);
  cmd->add_option("--accum", o.step.grad_accum, "micro-batches per optimizer step")
      ->capture_default_str()
      ->check(positive);
  cmd->add_option("--steps", o.steps, "optimizer steps")->capture_default_str()->check(positive);
  cmd->add_option("--dtype", a->dtype, "compute dtype: bf16 (fp32 master weights) or fp32")->capture_default_str();
  cmd->add_option("--lr", o.lr, "peak learning rate")->capture_default_str();
  cmd->add_option("--end-lr", o.end_lr, "final learning rate (default 0.1 x --lr)")
      ->check(at_least(0, "0 or more"));
  cmd->add_option("--warmup", o.warmup, "linear warmup steps")->capture_default_str();
  cmd->add_option("--schedule", o.schedule, "cosine (MLPerf), constant or wsd")->capture_default_str();
  cmd->add_option("--schedule-steps", o.schedule_steps, "length of the LR schedule (default --steps)");
  cmd->add_option("--optimizer", o.step.optimizer,
                  "adamw (MLPerf), sgd (--momentum; no state at 0) or none (forward and backward only)")
      ->capture_default_str();
  cmd->add_option("--momentum", o.step.sgd.momentum, "SGD momentum")->capture_default_str();
  cmd->add_option("--weight-decay", o.step.adamw.weight_decay, "AdamW weight decay (not on 1-D parameters)")->capture_default_str();
  cmd->add_option("--clip", o.step.clip, "global gradient norm bound (0: none)")->capture_default_str();
  cmd->add_option("--loss-chunk", o.step.loss_chunk, "tokens per chunk of the head and loss (0: one chunk)")->capture_default_str();
  cmd->add_flag("--synthetic", o.synthetic, "synthetic tokens and random weights, no data files (throughput)");
  cmd->add_option("--train-data", o.train_prefix, "training data: Megatron PREFIX (PREFIX.bin, PREFIX.idx)");
  cmd->add_option("--eval-data", o.eval_prefix, "evaluation data: Megatron PREFIX");
  cmd->add_option("--eval-every", o.eval_every, "steps between evaluations (0: at the end only)")->capture_default_str();
  cmd->add_option("--eval-samples", o.eval_samples, "sequences per evaluation (0: no evaluation)")->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed of weights and data order")->capture_default_str();
  cmd->add_option("--checkpoint-dir", o.checkpoint_dir, "save checkpoints here");
  cmd->add_option("--save-every", o.save_every, "steps between checkpoints (0: at the end only)")->capture_default_str();
  cmd->add_option("--keep", o.keep, "checkpoints to keep")->capture_default_str();
  cmd->add_flag("--resume", o.resume, "continue from the newest checkpoint in --checkpoint-dir");
  cmd->add_option("--devices", a->devices,
                  "data parallel over this process's devices, e.g. CPU:0-3 (under mpirun: per process)");
  cmd->add_option("--bucket-mb", a->bucket_mb, "MiB of gradients per allreduce bucket")->capture_default_str();
  cmd->add_option("--metrics", a->metrics, "write JSON lines (steps, evals, summary) to this file");
  cmd->add_option("--peak-tflops", a->peak_tflops, "peak TFLOP/s for MFU (default: the device's, docs/llama.md)");
  cmd->add_option("--log-every", a->log_every, "print every n-th step (the terminal display shows all)")
      ->capture_default_str()
      ->check(positive);
  cmd->add_flag("--no-jit", a->no_jit, "run every step eagerly (no capture and replay)");
  cmd->callback([a] { run_train(*a); });
}

}  // namespace lg::apps
