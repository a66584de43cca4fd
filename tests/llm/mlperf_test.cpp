#include <gtest/gtest.h>

#include <limits>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "base/config.h"
#include "common/user_error.h"
#include "llm/data_paths.h"
#include "llm/mllog.h"
#include "llm/mlperf.h"
#include "runtime/host_cpu.h"

namespace lg::llm {
namespace {

using json = nlohmann::json;

std::vector<json> read_log(const std::string& path) {
  std::vector<json> out;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    json j = parse_mllog_line(line);
    EXPECT_FALSE(j.is_null()) << line;
    out.push_back(j);
  }
  return out;
}

TEST(MLLog, LinesHaveTheReferenceFormat) {
  auto dir = testing::fresh_temp_dir("mllog");
  std::string path = (dir / "log.txt").string();
  {
    MLLogger log(path, /*console=*/false);
    log.event("seed", 42);
    log.start("block_start", nullptr, {{"samples_count", 16}});
    log.end("run_stop", nullptr, {{"status", "success"}});
  }
  std::ifstream f(path);
  std::string first;
  std::getline(f, first);
  EXPECT_EQ(first.rfind(":::MLLOG {\"namespace\": \"\", \"time_ms\": ", 0), 0u) << first;
  EXPECT_NE(first.find("\"event_type\": \"POINT_IN_TIME\", \"key\": \"seed\", \"value\": 42, \"metadata\": "),
            std::string::npos)
      << first;
  std::vector<json> lines = read_log(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0]["metadata"]["file"].get<std::string>().find("mlperf_test.cpp"), std::string::npos);
  EXPECT_GT(lines[0]["metadata"]["lineno"].get<int>(), 0);
  EXPECT_GT(lines[0]["time_ms"].get<int64_t>(), 1600000000000);
  EXPECT_EQ(lines[1]["event_type"], "INTERVAL_START");
  EXPECT_EQ(lines[1]["metadata"]["samples_count"], 16);
  EXPECT_TRUE(lines[1]["value"].is_null());
  EXPECT_EQ(lines[2]["event_type"], "INTERVAL_END");
  EXPECT_EQ(lines[2]["metadata"]["status"], "success");
  EXPECT_TRUE(parse_mllog_line("step 3 loss 2.0").is_null());
  std::filesystem::remove_all(dir);
}

TEST(Mlperf, OlympicMeanDropsFastestAndSlowest) {
  EXPECT_DOUBLE_EQ(olympic_mean({5, 1, 9, 3}), 4.0);  // drops 1 and 9
  EXPECT_DOUBLE_EQ(olympic_mean({2, 4}), 3.0);       // fewer than 3: plain mean
  EXPECT_DOUBLE_EQ(olympic_mean({}), 0.0);
}

TEST(Mlperf, PresetsAndValidation) {
  MlperfConfig real = mlperf_preset("llama31_8b", "data");
  EXPECT_EQ(real.model.dim, 4096);
  EXPECT_EQ(real.seq_len, 8192);
  EXPECT_EQ(real.eval_samples, 1024);
  EXPECT_EQ(real.eval_every, 12288);
  EXPECT_DOUBLE_EQ(real.target, 3.3);
  EXPECT_EQ(real.micro_batch() * real.grad_accum, 16);
  MlperfConfig mini = mlperf_preset("mini", "data");
  EXPECT_EQ(mini.model.vocab_size, 128256);  // the real Llama 3.1 vocabulary
  // its platform is this machine: "<cores>-core CPU (<model name of /proc/cpuinfo>)"
  EXPECT_EQ(mini.platform, std::to_string(std::max(1u, std::thread::hardware_concurrency())) + "-core CPU (" +
                               host_cpu_model() + ")");
  EXPECT_NE(testing_util::error_of([] { mlperf_preset("gpt3", "data"); }).find("mini"), std::string::npos);
  MlperfConfig bad = mini;
  bad.global_batch = 15, bad.grad_accum = 2;
  EXPECT_NE(testing_util::error_of([&] { bad.validate(); }).find("--accum"), std::string::npos);
  bad = mini;
  bad.target = -1;  // a log perplexity: never negative, so a run would never reach it
  EXPECT_NE(testing_util::error_of([&] {
              bad.validate();
            }).find("--target (a log perplexity) must be positive, got -1"),
            std::string::npos);
  bad = mini;
  bad.max_samples = -5;
  EXPECT_NE(testing_util::error_of([&] {
              bad.validate();
            }).find("--max-samples must be 0 (no budget) or positive, got -5"),
            std::string::npos);
  bad = mini;
  bad.lr = std::numeric_limits<double>::infinity();
  EXPECT_NE(testing_util::error_of([&] { bad.validate(); }).find("--lr must be positive, got inf"),
            std::string::npos);
  bad = mini;
  bad.target = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(
      testing_util::error_of([&] { bad.validate(); }).find("--target (a log perplexity) must be positive"),
      std::string::npos);
  bad = mini;
  bad.warmup = -2;
  EXPECT_NE(testing_util::error_of([&] { bad.validate(); }).find("--warmup must be in [0, "),
            std::string::npos);
  // the data is checked before a log starts, with where the preset's data comes from
  MlperfConfig nodata = mlperf_preset("mini", "/nonexistent");
  EXPECT_EQ(
      testing_util::error_of([&] { nodata.validate(); }),
      "mlperf: training data /nonexistent/brown/brown-train_text_document: no file "
      "/nonexistent/brown/brown-train_text_document.idx (give --train-data/--eval-data PREFIX, or fetch the "
      "preset's data with `bash scripts/fetch_data.sh` and point --data-dir at it)");
}

// A micro model on the fetched Brown corpus: the whole log of a compliant run, in order.
MlperfConfig micro_run(double target, int64_t max_samples) {
  MlperfConfig c = mlperf_preset("mini", testing::data_dir().string());
  c.model.dim = 16, c.model.n_layers = 1, c.model.n_heads = 2, c.model.n_kv_heads = 1, c.model.ffn_dim = 16;
  c.model.max_seq_len = 16;
  c.seq_len = 16, c.global_batch = 2, c.grad_accum = 1, c.warmup = 1, c.eval_every = 4, c.eval_samples = 2;
  c.target = target, c.max_samples = max_samples, c.warmup_steps = 2, c.loss_chunk = 0, c.seed = 7;
  return c;
}

bool have_brown() {
  return std::filesystem::exists(testing::data_dir() / "brown" / "brown-train_text_document.idx");
}

TEST(Mlperf, CompliantRunReachesAnEasyTarget) {
  if (!have_brown()) GTEST_SKIP() << "no fetched data (scripts/fetch_data.sh)";
  if (config().device == "INTERP") GTEST_SKIP() << "runs in the CPU. pass";
  auto dir = testing::fresh_temp_dir("mlperf_run");
  std::string log = (dir / "result_0.txt").string();
  std::vector<MlperfProgress> progress;
  MlperfResult r = run_mlperf(micro_run(/*target=*/100.0, 0), log,
                              [&](const MlperfProgress& p) { progress.push_back(p); });
  EXPECT_EQ(r.status, "success");
  // progress: the model built, 2 warm-up steps, 2 training steps (4 samples), the evaluation
  ASSERT_EQ(progress.size(), 6u);
  using Phase = MlperfProgress::Phase;
  for (int i = 0; i < 3; i++) EXPECT_EQ(progress[i].phase, Phase::Init) << i;
  EXPECT_EQ(progress[2].step, 2);
  EXPECT_EQ(progress[3].phase, Phase::Train);
  EXPECT_EQ(progress[4].step, 2);
  EXPECT_EQ(progress[4].samples, 4);
  EXPECT_EQ(progress[4].next_eval, 4);
  EXPECT_TRUE(std::isfinite(progress[4].loss) && progress[4].loss > 0);
  EXPECT_EQ(progress[5].phase, Phase::Eval);
  EXPECT_EQ(progress[5].loss, r.evals[0].second);
  EXPECT_GE(progress[5].seconds, progress[4].seconds);
  EXPECT_EQ(r.samples, 4);  // one block of eval_every = 4 sequences
  ASSERT_EQ(r.evals.size(), 1u);
  EXPECT_NEAR(r.evals[0].second, std::log(128256.0), 0.5);
  std::vector<json> lines = read_log(log);
  std::vector<std::string> keys;
  for (const json& l : lines) keys.push_back(l["key"]);
  std::vector<std::string> want = {
      "cache_clear", "init_start", "submission_benchmark", "submission_org", "submission_division",
      "submission_status", "submission_platform", "seed", "global_batch_size", "gradient_accumulation_steps",
      "max_sequence_length", "eval_samples", "train_samples", "opt_name", "opt_base_learning_rate",
      "opt_end_learning_rate", "opt_learning_rate_warmup_steps", "opt_learning_rate_decay_steps",
      "opt_learning_rate_decay_schedule", "opt_adamw_beta_1", "opt_adamw_beta_2", "opt_adamw_epsilon",
      "opt_adamw_weight_decay", "opt_gradient_clip_norm", "max_steps", "init_stop", "run_start", "block_start",
      "block_stop", "eval_start", "eval_accuracy", "eval_stop", "run_stop"};
  EXPECT_EQ(keys, want);
  std::map<std::string, json> by_key;
  for (const json& l : lines) by_key[l["key"]] = l;
  EXPECT_EQ(by_key["seed"]["value"], 7);
  EXPECT_EQ(by_key["submission_benchmark"]["value"], "llama31_8b");
  EXPECT_EQ(by_key["opt_adamw_epsilon"]["value"], 1e-5);
  EXPECT_EQ(by_key["init_start"]["event_type"], "INTERVAL_START");
  EXPECT_EQ(by_key["run_stop"]["event_type"], "INTERVAL_END");
  EXPECT_EQ(by_key["run_stop"]["metadata"]["status"], "success");
  EXPECT_EQ(by_key["eval_accuracy"]["metadata"]["samples_count"], 4);
  EXPECT_EQ(by_key["block_start"]["metadata"]["samples_count"], 0);
  EXPECT_DOUBLE_EQ(by_key["eval_accuracy"]["value"].get<double>(), r.evals[0].second);
  EXPECT_LE(by_key["run_start"]["time_ms"].get<int64_t>(), by_key["run_stop"]["time_ms"].get<int64_t>());
  std::filesystem::remove_all(dir);
}

TEST(Mlperf, SampleBudgetAbortsTheRun) {
  if (!have_brown()) GTEST_SKIP() << "no fetched data (scripts/fetch_data.sh)";
  if (config().device == "INTERP") GTEST_SKIP() << "runs in the CPU. pass";
  auto dir = testing::fresh_temp_dir("mlperf_abort");
  // target: a loss no micro model reaches
  MlperfResult r = run_mlperf(micro_run(/*target=*/1e-6, /*max_samples=*/8), (dir / "result_0.txt").string());
  EXPECT_EQ(r.status, "aborted");
  EXPECT_NE(r.reason.find("budget"), std::string::npos);
  EXPECT_EQ(r.samples, 8);
  EXPECT_EQ(r.evals.size(), 2u);
  std::vector<json> lines = read_log((dir / "result_0.txt").string());
  EXPECT_EQ(lines.back()["key"], "run_stop");
  EXPECT_EQ(lines.back()["metadata"]["status"], "aborted");
  std::filesystem::remove_all(dir);
}

TEST(Mlperf, MissingDataIsAUserError) {
  MlperfConfig c = micro_run(100.0, 0);
  c.train_prefix = "/nonexistent/train";
  std::string e = testing_util::error_of([&] { run_mlperf(c, ""); });
  EXPECT_NE(e.find("/nonexistent/train"), std::string::npos) << e;
}

}  // namespace
}  // namespace lg::llm
