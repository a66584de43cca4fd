#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "base/config.h"
#include "common/user_error.h"
#include "llm/micro_llama.h"
#include "llm/data_paths.h"
#include "llm/synthetic.h"
#include "llm/trainer.h"

namespace lg::llm {
namespace {

using json = nlohmann::json;

LlamaConfig micro() { return testing::micro_llama(); }

TrainerOptions synthetic(int64_t steps) {
  TrainerOptions o;
  o.step.micro_batch = 4, o.step.seq_len = 8, o.step.compute = dtypes::float32;
  o.steps = steps, o.lr = 1e-2, o.warmup = 2, o.synthetic = true, o.eval_samples = 8;
  return o;
}

struct Outcome {
  json summary;
  std::vector<json> events;
};
Outcome run(Llama& m, const TrainerOptions& o) {
  Outcome r;
  r.summary = train(m, o, [&](const json& e) { r.events.push_back(e); });
  return r;
}

std::vector<double> step_losses(const Outcome& r) {
  std::vector<double> l;
  for (const json& e : r.events)
    if (e["event"] == "step") l.push_back(e["loss"]);
  return l;
}

TEST(Trainer, SyntheticLossFallsAndEventsAreReported) {
  Tensor::manual_seed(31);
  Llama m(micro());
  TrainerOptions o = synthetic(16);
  o.eval_every = 8;
  Outcome r = run(m, o);
  std::vector<double> l = step_losses(r);
  ASSERT_EQ(l.size(), 16u);
  EXPECT_NEAR(l.front(), std::log(64.0), 0.2);
  EXPECT_LT(l.back(), l.front() - 1.0);
  EXPECT_EQ(r.summary["status"], "completed");
  EXPECT_EQ(r.summary["steps"], 16);
  EXPECT_GT(r.summary["tokens_per_s"].get<double>(), 0);
  EXPECT_GT(r.summary["mfu"].get<double>(), 0);
  int evals = 0;
  for (const json& e : r.events) {
    if (e["event"] != "eval") continue;
    evals++;
    EXPECT_EQ(e["samples"], 8);
    EXPECT_TRUE(e["step"] == 8 || e["step"] == 16);
  }
  EXPECT_EQ(evals, 2);
  EXPECT_LT(r.summary["eval_loss"].get<double>(), l.front() - 1.0);  // eval on the same cycle
  // The LR follows the MLPerf warmup: step s (0-based) <= W gets base*(s+1)/(W+1).
  EXPECT_DOUBLE_EQ(r.events[0]["lr"].get<double>(), 1e-2 / 3);
}

// Train 6 steps saving at 3; a fresh model resumed from the step-3 checkpoint reproduces steps 4-6
// and the final weights exactly (data position, optimizer state and step count restored).
TEST(Trainer, ResumeContinuesBitIdentically) {
  auto dir = testing::fresh_temp_dir("trainer_resume");
  TrainerOptions o = synthetic(6);
  o.checkpoint_dir = dir.string();
  o.save_every = 3;
  o.keep = 5;
  Tensor::manual_seed(32);
  Llama a(micro());
  Outcome full = run(a, o);
  std::vector<double> want = step_losses(full);
  std::filesystem::remove_all(dir / "step_00000006");

  Tensor::manual_seed(99);  // other random weights: all of them must come from the checkpoint
  Llama b(micro());
  o.resume = true;
  Outcome resumed = run(b, o);
  ASSERT_EQ(resumed.events.front()["event"], "resume");
  EXPECT_EQ(resumed.events.front()["step"], 3);
  std::vector<double> got = step_losses(resumed);
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < 3; i++) EXPECT_EQ(got[i], want[3 + i]) << "step " << 4 + i;
  for (const auto& [name, p] : a.params()) EXPECT_EQ(p.to_doubles(), b.params().at(name).to_doubles()) << name;
  std::filesystem::remove_all(dir);
}

// Resuming at or past --steps trains nothing (a rerun of a finished job exits cleanly); a damaged
// newest checkpoint names itself and the older one a resume could use.
TEST(Trainer, ResumeAtTheEndTrainsNothingAndADamagedCheckpointIsNamed) {
  auto dir = testing::fresh_temp_dir("trainer_resume_end");
  TrainerOptions o = synthetic(4);
  o.checkpoint_dir = dir.string();
  o.save_every = 2;
  o.eval_samples = 0;
  Tensor::manual_seed(33);
  Llama a(micro());
  EXPECT_EQ(run(a, o).summary["steps_run"], 4);

  o.resume = true;
  o.steps = 3;
  Outcome again = run(a, o);
  EXPECT_EQ(again.summary["steps"], 4);
  EXPECT_EQ(again.summary["steps_run"], 0);
  EXPECT_EQ(again.summary["status"], "completed");
  EXPECT_TRUE(step_losses(again).empty());
  for (const json& e : again.events) EXPECT_NE(e["event"], "checkpoint");  // nothing new saved

  std::filesystem::resize_file(dir / "step_00000004" / "model.safetensors", 100);
  o.steps = 6;
  std::string err = testing_util::error_of([&] { run(a, o); });
  EXPECT_NE(err.find("train: --resume: cannot load the newest checkpoint " +
                     (dir / "step_00000004").string() + ": safetensors "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("; move it out of --checkpoint-dir to resume from " + (dir / "step_00000002").string()),
            std::string::npos)
      << err;
  std::filesystem::remove_all(dir / "step_00000002");
  err = testing_util::error_of([&] { run(a, o); });
  EXPECT_NE(err.find("it is the only one: train without --resume to start over"), std::string::npos) << err;
  std::filesystem::remove_all(dir);
}

TEST(Trainer, BadOptionsAreUserErrors) {
  Tensor::manual_seed(33);
  Llama m(micro());
  auto err = [&](TrainerOptions o) { return testing_util::error_of([&] { run(m, o); }); };
  TrainerOptions o = synthetic(4);
  o.synthetic = false;
  EXPECT_NE(err(o).find("--train-data"), std::string::npos);
  o = synthetic(4);
  o.warmup = 4;
  EXPECT_NE(err(o).find("--warmup"), std::string::npos);
  o = synthetic(4);
  o.schedule = "linear";
  EXPECT_NE(err(o).find("--schedule"), std::string::npos);
  o = synthetic(4);
  o.resume = true;
  EXPECT_NE(err(o).find("--checkpoint-dir"), std::string::npos);
  o = synthetic(4);
  o.synthetic = false;
  o.train_prefix = "/nonexistent/data";
  EXPECT_NE(err(o).find("--train-data /nonexistent/data: no file /nonexistent/data.idx"), std::string::npos)
      << err(o);
  o = synthetic(4);
  o.eval_samples = -1;
  EXPECT_NE(err(o).find("--eval-samples must be 0 (no evaluation) or positive"), std::string::npos);
  // Each out-of-range option is named, with the value given; none of them trains a step.
  struct Case {
    std::function<void(TrainerOptions&)> set;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](TrainerOptions& x) { x.train_prefix = "/some/data"; },
       "--synthetic trains and evaluates on synthetic"},
      {[](TrainerOptions& x) { x.eval_prefix = "/some/eval"; }, "drop it to use --train-data/--eval-data"},
      {[](TrainerOptions& x) { x.steps = 0; }, "--steps must be positive, got 0"},
      {[](TrainerOptions& x) { x.lr = -1; }, "--lr must be positive, got -1"},
      {[](TrainerOptions& x) { x.warmup = -3; }, "--warmup must be 0 or more steps, got -3"},
      {[](TrainerOptions& x) { x.schedule_steps = -4; },
       "--schedule-steps must be 0 (--steps) or positive, got -4"},
      {[](TrainerOptions& x) { x.eval_every = -1; },
       "--eval-every must be 0 (at the end only) or positive, got -1"},
      {[](TrainerOptions& x) { x.save_every = -2; },
       "--save-every must be 0 (at the end only) or positive, got -2"},
      {[](TrainerOptions& x) { x.keep = 0; }, "--keep must be at least 1 checkpoint, got 0"},
      {[](TrainerOptions& x) { x.peak_flops = -1e12; }, "--peak-tflops must be positive, got -1"},
      {[](TrainerOptions& x) { x.step.clip = -1; }, "--clip must be 0 (no clipping) or positive, got -1"},
      {[](TrainerOptions& x) { x.step.loss_chunk = -5; },
       "--loss-chunk must be 0 (one chunk) or positive, got -5"},
      {[](TrainerOptions& x) { x.step.sgd.momentum = -0.5; }, "--momentum must be 0 or more, got -0.5"},
      {[](TrainerOptions& x) { x.step.adamw.weight_decay = -0.1; },
       "--weight-decay must be 0 or more, got -0.1"},
      {[](TrainerOptions& x) { x.step.bucket_bytes = 0; }, "(--bucket-mb) must be positive"},
      {[](TrainerOptions& x) { x.step.optimizer = "lion"; },
       "unknown optimizer \"lion\"; use adamw, sgd or none"},
      {[](TrainerOptions& x) { x.checkpoint_dir = "/proc/lazygrad-checkpoints"; },
       "cannot create --checkpoint-dir /proc/lazygrad-checkpoints: "},
  };
  for (const Case& c : cases) {
    o = synthetic(4);
    c.set(o);
    std::vector<json> events;
    std::string e =
        testing_util::error_of([&] { train(m, o, [&](const json& ev) { events.push_back(ev); }); });
    EXPECT_NE(e.find(c.message), std::string::npos)
        << "expected \"" << c.message << "\", got \"" << e << "\"";
    EXPECT_TRUE(events.empty()) << c.message << ": " << events.size() << " events before the error";
  }
  EXPECT_NO_THROW(check_trainer_options(synthetic(4)));
  // A checkpoint directory that is a file: named, and the file is left as it was.
  std::string file = ::testing::TempDir() + "trainer_checkpoint_dir_is_a_file";
  std::ofstream(file) << "not a directory";
  o = synthetic(4);
  o.checkpoint_dir = file;
  EXPECT_NE(err(o).find("cannot create --checkpoint-dir " + file), std::string::npos) << err(o);
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "not a directory");
  std::filesystem::remove(file);
}

// An evaluation that cannot fill one micro-batch is refused before the first step, not after the
// last; --eval-samples 0 runs none.
TEST(Trainer, EvalSamplesAreCheckedBeforeTrainingAndZeroMeansNone) {
  Tensor::manual_seed(35);
  Llama m(micro());
  TrainerOptions o = synthetic(3);
  o.eval_samples = 2;  // micro-batch 4
  std::vector<json> events;
  std::string e = testing_util::error_of([&] { train(m, o, [&](const json& ev) { events.push_back(ev); }); });
  EXPECT_NE(e.find("fewer than one micro-batch (--batch 4)"), std::string::npos) << e;
  EXPECT_NE(e.find("--eval-samples 0"), std::string::npos) << e;
  EXPECT_TRUE(events.empty()) << events.size() << " events before the error";
  o.eval_samples = 0;
  Outcome r = run(m, o);
  EXPECT_EQ(r.summary["status"], "completed");
  EXPECT_TRUE(r.summary["eval_loss"].is_null());
  for (const json& ev : r.events) EXPECT_NE(ev["event"], "eval");
  EXPECT_EQ(step_losses(r).size(), 3u);
}

// Two steps and an evaluation on the fetched Brown corpus (skipped when it is not fetched).
TEST(Trainer, TrainsOnTheBrownCorpus) {
  auto prefix = testing::data_dir() / "brown" / "brown-train_text_document";
  auto eval = testing::data_dir() / "brown" / "brown-validation_text_document";
  if (!std::filesystem::exists(prefix.string() + ".idx")) GTEST_SKIP() << "no fetched data (scripts/fetch_data.sh)";
  // A 128,256-row table is slow to interpret; the CPU. run of this binary covers it.
  if (config().device == "INTERP") GTEST_SKIP() << "runs in the CPU. pass";
  LlamaConfig c = micro();
  c.vocab_size = 128256;  // the Llama 3.1 ids
  c.dim = 16, c.n_heads = 2, c.n_kv_heads = 1, c.ffn_dim = 16, c.n_layers = 1;
  Tensor::manual_seed(34);
  Llama m(c);
  TrainerOptions o = synthetic(2);
  o.synthetic = false;
  o.step.micro_batch = 1;
  o.warmup = 0;
  o.train_prefix = prefix.string();
  o.eval_prefix = eval.string();
  o.eval_samples = 2;
  Outcome r = run(m, o);
  EXPECT_NEAR(step_losses(r).front(), std::log(128256.0), 0.3);
  EXPECT_EQ(r.summary["status"], "completed");
  EXPECT_FALSE(r.summary["eval_loss"].is_null());
}

}  // namespace
}  // namespace lg::llm
