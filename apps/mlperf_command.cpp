// lazygrad mlperf: runs the MLPerf llama31_8b benchmark (or its "mini" scale model) N times with
// different seeds into one log directory and prints the times to train (docs/mlperf.md).
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>

#include "apps/cli_validators.h"
#include "apps/commands.h"
#include "base/config.h"
#include "base/error.h"
#include "dist/launch.h"
#include "llm/mllog.h"
#include "llm/mlperf.h"
#include "llm/mlperf_progress.h"
#include "nn/file_io.h"

namespace lg::apps {
namespace {

struct MlperfArgs {
  std::string preset = "mini";
  std::string data_dir = "data";
  std::string log_dir;
  int runs = 1;
  // Overrides (unset: the preset's).
  std::vector<std::string> sets;
  std::optional<int64_t> seq, batch, accum, warmup, eval_every, eval_samples, max_samples;
  std::optional<double> lr, target;
  std::optional<uint64_t> seed;
  std::optional<std::string> train, eval, dtype;
  std::string devices;
  double progress_s = 10;  // seconds between progress lines on stderr (0: none)
};

std::string default_log_dir(const std::string& preset) {
  char stamp[32];
  std::time_t t = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
  return "logs/mlperf-" + preset + "-" + stamp;
}

llm::MlperfConfig config_of(const MlperfArgs& a) {
  llm::MlperfConfig c = llm::mlperf_preset(a.preset, a.data_dir);
  for (const std::string& kv : a.sets) {
    size_t eq = kv.find('=');
    LG_USER_CHECK(eq != std::string::npos && eq > 0, "--set ", kv, ": expected KEY=VALUE, e.g. --set layers=2");
    c.model.set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  if (a.seq) c.seq_len = *a.seq, c.model.max_seq_len = std::max(c.model.max_seq_len, *a.seq);
  if (a.batch) c.global_batch = *a.batch;
  if (a.accum) c.grad_accum = *a.accum;
  if (a.warmup) c.warmup = *a.warmup;
  if (a.eval_every) c.eval_every = *a.eval_every;
  if (a.eval_samples) c.eval_samples = *a.eval_samples;
  if (a.max_samples) c.max_samples = *a.max_samples;
  if (a.lr) c.lr = *a.lr;
  if (a.target) c.target = *a.target;
  if (a.train) c.train_prefix = *a.train;
  if (a.eval) c.eval_prefix = *a.eval;
  if (a.dtype) c.dtype = *a.dtype;
  c.seed = a.seed;
  return c;
}

void run(const MlperfArgs& a) {
  LG_USER_CHECK(a.runs > 0, "--runs must be positive");
  llm::MlperfConfig base = config_of(a);
  base.validate();
  // Data parallel: this process's devices, and every process's under mpirun; rank 0 reports.
  const dist::Context& ctx = dist::start();
  if (!a.devices.empty() || ctx.size > 1) {
    std::vector<std::string> local = dist::local_devices(a.devices.empty() ? config().device : a.devices);
    std::vector<std::string> global = dist::global_devices(local);
    config().device = local[0];
    if (global.size() > 1) base.devices = global;
    base.writer = ctx.rank == 0;
    if (ctx.rank != 0)
      LG_USER_CHECK(std::freopen("/dev/null", "w", stdout) != nullptr, "cannot silence stdout of rank ", ctx.rank);
  }
  dist::check_agreement(str("mlperf ", a.preset, ": model ", base.model.summary(), "; batch ", base.global_batch,
                            "x", base.seq_len, "; runs ", a.runs, "; devices ", base.devices.size()));
  std::string dir = a.log_dir.empty() ? default_log_dir(a.preset) : a.log_dir;
  if (base.writer) nn::make_directories(dir, "the log directory");
  std::printf("mlperf %s: model %s, seq %lld, global batch %lld, lr %g, warmup %lld, eval every %lld sequences "
              "on %lld, target %.3f; %d run(s) into %s\n",
              a.preset.c_str(), base.model.summary().c_str(), static_cast<long long>(base.seq_len),
              static_cast<long long>(base.global_batch), base.lr, static_cast<long long>(base.warmup),
              static_cast<long long>(base.eval_every), static_cast<long long>(base.eval_samples), base.target,
              a.runs, dir.c_str());
  std::fflush(stdout);
  nlohmann::json summary = {{"preset", a.preset}, {"runs", nlohmann::json::array()}};
  std::vector<double> times;
  for (int i = 0; i < a.runs; i++) {
    llm::MlperfConfig c = base;
    if (a.seed) c.seed = *a.seed + static_cast<uint64_t>(i);
    else if (ctx.size > 1) c.seed = dist::broadcast(std::random_device{}());  // every process trains alike
    std::string log = dir + "/result_" + std::to_string(i) + ".txt";
    llm::MlperfProgressPrinter progress(i, c, base.writer ? a.progress_s : 0, stderr);
    llm::MlperfResult r = llm::run_mlperf(c, log, std::ref(progress));
    nlohmann::json evals = nlohmann::json::array();
    for (auto [s, l] : r.evals) evals.push_back({{"samples", s}, {"eval_accuracy", l}});
    summary["runs"].push_back({{"log", log},
                               {"seed", r.seed},
                               {"status", r.status},
                               {"reason", r.reason},
                               {"minutes", r.minutes()},
                               {"samples", r.samples},
                               {"evals", evals}});
    std::printf("run %d: %s%s%s, %.2f minutes to train, %lld samples, final eval %.4f (seed %llu, log %s)\n", i,
                r.status.c_str(), r.reason.empty() ? "" : " - ", r.reason.c_str(), r.minutes(),
                static_cast<long long>(r.samples), r.evals.empty() ? NAN : r.evals.back().second,
                static_cast<unsigned long long>(r.seed), log.c_str());
    std::fflush(stdout);
    if (r.status == "success") times.push_back(r.minutes());
    if (r.reason == "SIGINT" || r.reason == "SIGTERM") break;
  }
  summary["successful_runs"] = times.size();
  if (!times.empty()) summary["olympic_mean_minutes"] = llm::olympic_mean(times);
  if (base.writer) nn::write_file_atomic(dir + "/summary.json", summary.dump(2) + "\n");
  std::printf("summary: %zu of %zu runs reached the target", times.size(), summary["runs"].size());
  if (!times.empty())
    std::printf("; time to train %s %.2f minutes", times.size() >= 3 ? "(olympic mean)" : "(mean)",
                llm::olympic_mean(times));
  std::printf("\nlogs: %s (result_<n>.txt, summary.json)\n", dir.c_str());
  if (times.empty()) user_error("no run reached the target ", base.target);
}

}  // namespace

void add_mlperf_command(CLI::App& app) {
  auto a = std::make_shared<MlperfArgs>();
  auto* cmd = app.add_subcommand("mlperf", "run the MLPerf llama31_8b benchmark (or its mini version) and time it");
  cmd->add_option("--preset", a->preset, "mini (bundled Brown corpus, 2 cores) or llama31_8b")->capture_default_str();
  cmd->add_option("--runs", a->runs, "runs with different seeds (the score is their olympic mean)")->capture_default_str();
  cmd->add_option(
         "--progress", a->progress_s,
         "seconds between training progress lines on stderr, which also gets a line per warm-up step "
         "and evaluation (0: no progress lines)")
      ->check(at_least(0, "0 or more seconds"))
      ->capture_default_str();
  cmd->add_option("--log-dir", a->log_dir, "where result_<n>.txt and summary.json go (default logs/mlperf-<preset>-<time>)");
  cmd->add_option("--data-dir", a->data_dir, "root of the fetched data (scripts/fetch_data.sh)")->capture_default_str();
  cmd->add_option("--train-data", a->train, "training data: Megatron PREFIX (default: the preset's)");
  cmd->add_option("--eval-data", a->eval, "validation data: Megatron PREFIX (default: the preset's)");
  cmd->add_option("--seed", a->seed, "seed of run 0 (run i uses seed+i; default: drawn per run)");
  cmd->add_option("--set", a->sets, "override a model field, KEY=VALUE");
  cmd->add_option("--seq", a->seq, "sequence length");
  cmd->add_option("--batch", a->batch, "global batch size (sequences)");
  cmd->add_option("--accum", a->accum, "gradient accumulation steps per global batch");
  cmd->add_option("--lr", a->lr, "base learning rate");
  cmd->add_option("--warmup", a->warmup, "warmup steps");
  cmd->add_option("--eval-every", a->eval_every, "training sequences between evaluations");
  cmd->add_option("--eval-samples", a->eval_samples, "evaluation sequences");
  cmd->add_option("--target", a->target, "eval_accuracy (log perplexity) to reach");
  cmd->add_option("--max-samples", a->max_samples, "abort after this many training sequences (0: none)");
  cmd->add_option("--dtype", a->dtype, "bf16 or fp32 compute");
  cmd->add_option("--devices", a->devices, "data parallel over this process's devices, e.g. CPU:0-3 (under mpirun: per process)");
  cmd->callback([a] { run(*a); });
}

}  // namespace lg::apps
