// Checkpoints: bit-identical resume in a fresh process, keep-last-N, and saves that cannot damage
// earlier checkpoints.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "nn/checkpoint.h"
#include "nn/file_io.h"
#include "nn/layers.h"
#include "nn/lr_schedule.h"
#include "nn/safetensors.h"

namespace lg::nn {
namespace {

namespace fs = std::filesystem;

// A tiny language model: embedding -> random feature mask -> RMSNorm -> linear head -> cross-entropy.
// The mask draws from Tensor's RNG and the batch depends on the data position, so a resume must
// restore both to reproduce the run.
struct Tiny {
  Embedding emb{16, 8};
  RMSNorm norm{8};
  Linear head{8, 16};
  ParamList params() const {
    ParamList p;
    p.add_all("emb", emb.params());
    p.add_all("norm", norm.params());
    p.add_all("head", head.params());
    return p;
  }
};

Tensor batch_at(int64_t pos, int64_t shift) {
  std::vector<int32_t> v;
  for (int64_t i = 0; i < 12; i++) v.push_back(static_cast<int32_t>((pos * 7 + i * 5 + shift) % 16));
  return Tensor::from_vector<int32_t>(v, {2, 6});
}

// Trains `steps` steps, appending each loss.
void train(Tiny& m, AdamW& opt, TrainProgress& prog, int steps, std::vector<float>& losses) {
  LRSchedule lr = warmup_cosine(1e-2, 1e-3, 2, 20);
  ParamList ps = m.params();
  for (int s = 0; s < steps; s++) {
    Tensor x = m.emb(batch_at(prog.data_position, 0));
    Tensor keep = Tensor::rand(x.shape()).lt(x.scalar_like(0.8));
    Tensor logits = m.head(m.norm(keep.where(x / 0.8, x.scalar_like(0))));
    Tensor loss = logits.cross_entropy(batch_at(prog.data_position, 3));
    loss.backward();
    Tensor norm = clip_grad_norm(ps, 1.0);
    opt.set_lr(lr(prog.step));
    opt.step({loss, norm});
    opt.zero_grad();
    losses.push_back(loss.to_vector<float>()[0]);
    prog.step++;
    prog.data_position++;
    prog.rng = Tensor::rng_position();
  }
}

ParamList result(const Tiny& m, const std::vector<float>& losses) {
  ParamList r = m.params();
  r.add("losses", Tensor::from_vector<float>(losses, {static_cast<int64_t>(losses.size())}));
  return r;
}

fs::path temp_root() { return fs::temp_directory_path() / ("lg_ckpt_test_" + std::to_string(::getpid())); }
// Removes this process's checkpoints when the tests end.
struct TempCleanup {
  ~TempCleanup() { fs::remove_all(temp_root()); }
} temp_cleanup;

fs::path temp_dir(const std::string& name) {
  fs::path d = temp_root() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Run in a child process by ResumeInAFreshProcessIsBitIdentical: a fresh model (other weights, other
// RNG state) resumes from the latest checkpoint, trains 3 steps and saves parameters and losses.
TEST(CheckpointResume, Worker) {
  const char* root = std::getenv("LG_CKPT_ROOT");
  const char* out = std::getenv("LG_CKPT_OUT");
  if (!root || !out) GTEST_SKIP() << "runs only as the child of ResumeInAFreshProcessIsBitIdentical";
  Tensor::manual_seed(999);
  Tiny m;
  AdamW opt(m.params(), AdamWConfig{});
  CheckpointManager ckpt(root);
  ParamList ps = m.params();
  TrainProgress prog = CheckpointManager::load(*ckpt.latest(), ps, opt);
  std::vector<float> losses;
  train(m, opt, prog, 3, losses);
  save_safetensors(out, result(m, losses));
}

TEST(CheckpointResume, ResumeInAFreshProcessIsBitIdentical) {
  fs::path root = temp_dir("resume");
  Tensor::manual_seed(123);
  Tiny m;
  AdamW opt(m.params(), AdamWConfig{});
  TrainProgress prog;
  std::vector<float> losses;
  train(m, opt, prog, 3, losses);
  CheckpointManager(root.string()).save(m.params(), opt, prog);
  std::vector<float> after;
  train(m, opt, prog, 3, after);

  fs::path out = root / "child.safetensors";
  std::string cmd = "LG_CKPT_ROOT=" + root.string() + " LG_CKPT_OUT=" + out.string() + " /proc/" +
                    std::to_string(::getpid()) + "/exe --gtest_filter=CheckpointResume.Worker > " +
                    (root / "child.log").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "see " << (root / "child.log");
  SafeTensorsFile child = SafeTensorsFile::open(out.string());
  for (const auto& [name, t] : result(m, after)) {
    std::span<const uint8_t> got = child.bytes(name);
    std::vector<uint8_t> want = t.to_host();
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end()))
        << name << " differs after resume";
  }
  EXPECT_NE(losses, after);  // the run moved on (so equality above is not trivial)
}

TEST(Checkpoint, ManifestRecordsProgressAndRestoresIt) {
  fs::path root = temp_dir("manifest");
  Tensor::manual_seed(5);
  Tiny m;
  AdamW opt(m.params(), AdamWConfig{});
  TrainProgress prog{.step = 7, .data_position = 1234, .rng = {5, 99}, .extra = {{"run", "unit"}}};
  opt.set_steps(7);
  opt.set_lr(3e-4);
  std::string dir = CheckpointManager(root.string()).save(m.params(), opt, prog);
  EXPECT_EQ(fs::path(dir).filename(), "step_00000007");
  Tiny other;
  AdamW opt2(other.params(), AdamWConfig{});
  ParamList ps = other.params();
  TrainProgress got = CheckpointManager::load(dir, ps, opt2);
  EXPECT_EQ(got.data_position, 1234);
  EXPECT_EQ(got.extra.at("run"), "unit");
  EXPECT_EQ(opt2.steps(), 7);
  EXPECT_EQ(opt2.lr(), 3e-4);
  EXPECT_EQ(Tensor::rng_position().offset, 99u);
  EXPECT_EQ(other.head.weight.to_host(), m.head.weight.to_host());
}

TEST(Checkpoint, KeepsOnlyTheLastN) {
  fs::path root = temp_dir("keep");
  Tiny m;
  AdamW opt(m.params(), AdamWConfig{});
  CheckpointManager ckpt(root.string(), 2);
  for (int64_t s : {1, 2, 3, 4}) ckpt.save(m.params(), opt, TrainProgress{.step = s});
  std::vector<std::string> all = ckpt.list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(fs::path(all[0]).filename(), "step_00000003");
  EXPECT_EQ(fs::path(*ckpt.latest()).filename(), "step_00000004");
}

TEST(Checkpoint, InterruptedSaveLeavesThePreviousCheckpointLoadable) {
  fs::path root = temp_dir("interrupted");
  Tiny m;
  AdamW opt(m.params(), AdamWConfig{});
  CheckpointManager ckpt(root.string());
  ckpt.save(m.params(), opt, TrainProgress{.step = 1});
  // A save killed midway leaves a temporary directory with partial files and no manifest, and a
  // final-named directory can only appear by rename after its manifest was written.
  fs::create_directories(root / ".tmp.step_00000002.1");
  fs::copy_file(root / "step_00000001" / "model.safetensors",
                root / ".tmp.step_00000002.1" / "model.safetensors");
  fs::create_directories(root / "step_00000003");  // foreign directory without manifest
  EXPECT_EQ(fs::path(*ckpt.latest()).filename(), "step_00000001");
  ParamList ps = m.params();
  EXPECT_EQ(CheckpointManager::load(*ckpt.latest(), ps, opt).step, 1);
}

TEST(Checkpoint, MismatchedModelIsAUserErrorNamingTheTensor) {
  fs::path root = temp_dir("mismatch");
  Tiny m;
  AdamW opt(m.params(), AdamWConfig{});
  std::string dir = CheckpointManager(root.string()).save(m.params(), opt, TrainProgress{.step = 1});
  Linear other(8, 16);
  ParamList ps;
  ps.add("head.weight", other.weight);
  AdamW opt2(ps, AdamWConfig{});
  try {
    CheckpointManager::load(dir, ps, opt2);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model tensors saved"), std::string::npos) << e.what();
  }
}

// make_directories: parents created, an existing directory kept, and a path that cannot be one
// (under a regular file, or the file itself) a user error naming the option and the path.
TEST(FileIo, MakeDirectoriesCreatesOrNamesWhatIsInTheWay) {
  fs::path root = temp_dir("make_directories");
  fs::path nested = root / "a" / "b";
  make_directories(nested.string(), "--checkpoint-dir");
  EXPECT_TRUE(fs::is_directory(nested));
  make_directories(nested.string(), "--checkpoint-dir");  // exists: fine
  fs::path file = root / "file";
  std::ofstream(file) << "x";
  for (const fs::path& bad : {file, file / "sub"}) {
    try {
      make_directories(bad.string(), "--save-hf");
      FAIL() << "expected an error for " << bad;
    } catch (const Error& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("cannot create --save-hf " + bad.string() + ": "), std::string::npos) << m;
      EXPECT_NE(m.find("give a directory you can write"), std::string::npos) << m;
    }
  }
  EXPECT_TRUE(fs::is_regular_file(file));
}

}  // namespace
}  // namespace lg::nn
