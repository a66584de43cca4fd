// PROFILE (runtime/profile.h): kernel launches of realize and of Jit replays are timed and summed
// per kernel, with the kernel's cost; nothing is recorded without it.
#include "runtime/profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "base/config.h"
#include "runtime/nvrtc.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"

namespace lg {
namespace {

class Profile : public testing::Test {
 protected:
  void SetUp() override {
    clear_profile();
    config().profile = 1;
  }
  void TearDown() override {
    config().profile = 0;
    clear_profile();  // nothing left for the table at exit
  }
};

// The matmul's row: of the reduction kernels ("r_..."), the one with the most FLOPs (the random
// inputs' kernels are elementwise, "E_...", and may count more).
const ProfileRow* matmul_row(const std::vector<ProfileRow>& rows) {
  const ProfileRow* best = nullptr;
  for (const ProfileRow& r : rows)
    if (r.name.rfind("r_", 0) == 0 && (!best || r.cost.flops > best->cost.flops)) best = &r;
  return best;
}

TEST_F(Profile, EveryLaunchOfAKernelIsTimedIntoOneRowWithItsCost) {
  const int64_t M = 32, K = 48, N = 24;
  Tensor b = Tensor::randn({1, K, N}).realize();
  for (int i = 0; i < 3; i++) Tensor::randn({1, M, K}).matmul(b).realize();
  std::vector<ProfileRow> rows = profile_rows();
  const ProfileRow* mm = matmul_row(rows);
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->launches, 3u) << mm->name;
  EXPECT_EQ(mm->device, canonical_device(config().device))
      << "the suites run on INTERP, CPU and the GPU checks";
  EXPECT_EQ(mm->cost.flops, 2.0 * M * N * K);
  EXPECT_GT(mm->seconds, 0);
  for (size_t i = 1; i < rows.size(); i++) EXPECT_GE(rows[i - 1].seconds, rows[i].seconds) << "longest first";
  std::string table = profile_table(100);
  EXPECT_NE(table.find(mm->name), std::string::npos) << table;
  EXPECT_NE(table.find("GFLOP/s"), std::string::npos) << table;
  EXPECT_NE(table.find(str("total: ", rows.size(), " kernels")), std::string::npos) << table;
  std::string short_table = profile_table(1);
  EXPECT_NE(short_table.find(str(rows.size() - 1, " more kernels")), std::string::npos) << short_table;
}

TEST_F(Profile, JitReplaysAreRecordedLikeEagerRuns) {
  Tensor w = Tensor::randn({1, 16, 8}).realize();
  Jit step([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{(in[0].matmul(w) * 2).sum()}; });
  for (int i = 0; i < 4; i++) step({Tensor::randn({1, 12, 16}).realize()})[0].realize();
  ASSERT_TRUE(step.captured());
  const ProfileRow* mm = matmul_row(profile_rows());
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->launches, 4u) << "every call runs the kernel once: eager, captured, then two replays\n"
                              << profile_table(100);
  EXPECT_GE(mm->cost.flops, 2.0 * 12 * 8 * 16);
}

TEST_F(Profile, TheCsvHoldsEveryRowAndIsWrittenWhole) {
  Tensor::randn({1, 8, 16}).matmul(Tensor::randn({1, 16, 4})).realize();
  std::vector<ProfileRow> rows = profile_rows();
  std::string csv = profile_csv();
  EXPECT_EQ(csv.rfind("device,kernel,launches,seconds,flops_per_launch,bytes_per_launch,blocks,threads\n", 0),
            0u)
      << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), static_cast<std::ptrdiff_t>(rows.size() + 1)) << csv;
  std::string device = canonical_device(config().device);
  // the matmul: one launch, 2 x 8 x 4 x 16 FLOPs, (8 x 16 + 16 x 4 + 8 x 4) x 4 bytes
  EXPECT_NE(csv.find(device + ",r_1_8_4__16,1,"), std::string::npos) << csv;
  // no launch geometry on the host's devices
  EXPECT_NE(csv.find(",1024,896,0,0\n"), std::string::npos) << csv;
  std::string path = testing::TempDir() + "lg_profile_test.csv";
  ASSERT_EQ(write_profile_csv(path), "");
  std::ifstream in(path);
  std::string back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(back, csv);
  std::remove(path.c_str());
  std::string why = write_profile_csv("/nonexistent-dir/x.csv");
  EXPECT_NE(why.find("cannot write /nonexistent-dir/x.csv.tmp"), std::string::npos) << why;
}

// On CUDANULL (compiled, never run) each row has the launch the GPU would make: x * 2 + 1 over
// 1024 x 1024 float32 is 4 elements per thread (one 16-byte access), 256 threads a block, 1024 blocks.
TEST_F(Profile, GpuRowsHoldTheirLaunchGeometry) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  Tensor x = Tensor::zeros({1024, 1024}, dtypes::float32, "CUDANULL").contiguous().realize();
  clear_profile();
  (x * 2.0 + 1.0).realize();
  std::vector<ProfileRow> rows = profile_rows();
  ASSERT_EQ(rows.size(), 1u) << profile_table(10);
  EXPECT_EQ(rows[0].blocks, 1024);
  EXPECT_EQ(rows[0].threads, 256);
  EXPECT_NE(profile_csv().find("CUDANULL,E_1024_1024,1,0,"), std::string::npos) << profile_csv();
  EXPECT_NE(profile_csv().find(",1024,256\n"), std::string::npos) << profile_csv();
}

TEST_F(Profile, NothingIsRecordedWithoutIt) {
  config().profile = 0;
  config().profile_csv.clear();
  Tensor::randn({1, 8, 8}).matmul(Tensor::randn({1, 8, 8})).realize();
  EXPECT_TRUE(profile_rows().empty());
}

}  // namespace
}  // namespace lg
