// Lane runs (codegen/tensor_core.h, codegen/heuristic_tc.h): each lane of a tensor-core matmul reads
// its fragment elements in runs of 8, 16 or 32 bytes, along k for both operands (TC's lane runs) and
// along m or n for an operand contiguous there (an UPCAST before TC). The map from mma columns to
// memory k is checked to be a bijection shared by A and B; matmuls of every operand layout run as
// emulated CUDA (mma.sync from the PTX layout, tests/runtime/cuda_emulation.h) against a float64
// reference, and once per layout bit for bit against the C program CUDACHECK runs; the CUDA source is checked for its
// vector loads and NVRTC compiles it. Nothing here ran on a GPU: whether runs are faster there is
// for tools/gpu_check.sh (it times TC_RUN=0 beside the default).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "base/config.h"
#include "codegen/heuristic_gpu.h"
#include "codegen/render_cuda.h"
#include "codegen/tensor_core.h"
#include "ir/build.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/symbolic.h"
#include "runtime/nvrtc.h"
#include "runtime/tensor_core_util.h"
#include "common/user_error.h"

namespace lg {
namespace {

using namespace tc_testing;

// This binary's environment stages tiles in shared memory with 2 x 4 tiles per warp
// (tensor_core_test.cpp); lane runs are the unstaged default, 4 x 8 tiles per warp.
class TensorCoreLaneRuns : public ::testing::Test {
 protected:
  void SetUp() override { set("0", "4x8", "16"); }
  void TearDown() override {
    setenv("SMEM", "1", 1);
    setenv("TC_WARP", "2x4", 1);
    unsetenv("TC_RUN");
    config_reload();
  }
  static void set(const char* smem, const char* warp, const char* run) {
    setenv("SMEM", smem, 1);
    setenv("TC_WARP", warp, 1);
    setenv("TC_RUN", run, 1);
    config_reload();
  }
};

int64_t value_of(const NodeRef& e) {
  NodeRef v = rewrite(e, pm_symbolic(), {.name = "fold"});
  EXPECT_TRUE(v->is_const());
  return v->const_as_int();
}

TEST_F(TensorCoreLaneRuns, EachStepsMemoryKIsOneBijectionForAAndBAndEachLaneReadsOneRun) {
  for (int steps : {1, 2, 4}) {
    // f(u, c): the memory k (within the k step of 16*steps) of column c of A = row c of B in mma u
    std::map<std::pair<int, int64_t>, int64_t> f;
    std::map<int64_t, std::set<int64_t>> run_of_row;  // A: (lane, row) -> the k it reads
    for (TcOperand op : {TcOperand::A, TcOperand::B})
      for (int64_t lane = 0; lane < 32; lane++)
        for (int u = 0; u < steps; u++)
          for (int j = 0; j < tc_fragment_size(op); j++) {
            int64_t k = value_of(tc_lane_run_k(index_const(lane), op, steps, u, j));
            int64_t c = tc_place(op, op == TcOperand::B, lane, j);
            auto [it, fresh] = f.emplace(std::make_pair(u, c), k);
            EXPECT_EQ(it->second, k) << "steps " << steps << " step " << u << " column " << c << ": A and B disagree";
            if (op == TcOperand::A) run_of_row[lane * 16 + tc_place(op, true, lane, j)].insert(k);
          }
    std::set<int64_t> image;
    for (auto& [uc, k] : f) image.insert(k);
    EXPECT_EQ(f.size(), 16u * steps);
    EXPECT_EQ(image.size(), 16u * steps) << "a bijection onto the k step";
    EXPECT_EQ(*image.rbegin(), 16 * steps - 1);
    for (auto& [lane_row, ks] : run_of_row) {
      int64_t t = lane_row / 16 % 4;
      ASSERT_EQ(ks.size(), 4u * steps);
      EXPECT_EQ(*ks.begin(), 4 * steps * t) << "lane " << lane_row / 16;
      EXPECT_EQ(*ks.rbegin(), 4 * steps * t + 4 * steps - 1) << "one run of neighbours";
    }
  }
}

std::vector<Opt> heuristic(const Matmul& c) {
  Schedule s = create_schedule(matmul_graph("CPU", c));
  return gpu_heuristic_opts(s.items.at(0).ast, true);
}

// The Opts before TC and TC itself.
std::vector<Opt> up_to_tc(const std::vector<Opt>& opts) {
  std::vector<Opt> out;
  for (const Opt& o : opts) {
    out.push_back(o);
    if (o.kind == OptKind::TC) return out;
  }
  ADD_FAILURE() << "no TC in " << to_string(opts);
  return out;
}

// Axes of the matmul kernel (m, n, k after the batch of 1 folds away): m 0, n 1, k 2.
TEST_F(TensorCoreLaneRuns, TheHeuristicRunsAlongKAndAlongTheContiguousAxisOfEachOperand) {
  const Opt tc2{OptKind::TC, 0, 2}, up_m{OptKind::UPCAST, 0, 8}, up_n{OptKind::UPCAST, 1, 8};
  auto mm = [](bool a_t, bool b_t) { return Matmul{1, 128, 128, 64, dtypes::bfloat16, false, a_t, b_t}; };
  EXPECT_EQ(up_to_tc(heuristic(mm(false, true))), (std::vector<Opt>{tc2})) << "x @ W^T: both contiguous along k";
  EXPECT_EQ(up_to_tc(heuristic(mm(false, false))), (std::vector<Opt>{up_n, tc2})) << "a @ b: b along n";
  // 4 x 8 tiles per warp: a run along m is at most 4 elements (8 bytes); 8 x 4: 8
  EXPECT_EQ(up_to_tc(heuristic(mm(true, true))), (std::vector<Opt>{{OptKind::UPCAST, 0, 4}, tc2})) << "a^T @ W^T";
  set("0", "8x4", "16");
  EXPECT_EQ(up_to_tc(heuristic(mm(true, true))), (std::vector<Opt>{up_m, tc2}));
  set("0", "2x8", "16");
  EXPECT_EQ(up_to_tc(heuristic(mm(true, true))), (std::vector<Opt>{tc2})) << "2 tiles along m: no run along it";
  set("0", "4x8", "8");
  const Opt tc1{OptKind::TC, 0, 1};
  EXPECT_EQ(up_to_tc(heuristic(mm(true, false))),
            (std::vector<Opt>{{OptKind::UPCAST, 1, 4}, {OptKind::UPCAST, 0, 4}, tc1}))
      << "dW = dY^T X: both along their output axis, 8 bytes";
  set("0", "4x8", "0");
  EXPECT_EQ(up_to_tc(heuristic(mm(true, false))), (std::vector<Opt>{{OptKind::TC, 0, 0}})) << "TC_RUN=0: the PTX order";
  set("1", "4x8", "16");
  std::vector<Opt> staged = heuristic(mm(false, false));
  EXPECT_EQ(up_to_tc(staged), (std::vector<Opt>{{OptKind::TC, 0, 0}})) << "SMEM stages the PTX order";
  EXPECT_EQ(staged.back().kind, OptKind::SMEM);
  // k of 48: one mma per k step (runs of 8 bytes along k); m of 40 is padded: no run along it
  set("0", "8x8", "16");
  EXPECT_EQ(up_to_tc(heuristic({1, 40, 64, 48, dtypes::bfloat16, false, true, false})),
            (std::vector<Opt>{{OptKind::PADTO, 0, 16}, {OptKind::UPCAST, 1, 8}, tc1}));
  // TC_RUN=32: 4 mmas per k step of 64 (k of 96: 2); runs along n of at most the warp's 8 tiles
  set("0", "4x8", "32");
  EXPECT_EQ(up_to_tc(heuristic(mm(false, false))), (std::vector<Opt>{up_n, {OptKind::TC, 0, 4}}));
  EXPECT_EQ(up_to_tc(heuristic({1, 128, 128, 96, dtypes::bfloat16})), (std::vector<Opt>{up_n, tc2}));
}

// Loads of 16 (8) bytes in the CUDA source, and how the mma registers come from them.
struct SourceCounts {
  int uint4_loads = 0, uint2_loads = 0, byte_perms = 0, packs = 0;
};
int occurrences(const std::string& src, const std::string& what) {
  int n = 0;
  for (size_t p = src.find(what); p != std::string::npos; p = src.find(what, p + 1)) n++;
  return n;
}
SourceCounts count_source(const std::string& src) {
  return {occurrences(src, "= *(const uint4*)"), occurrences(src, "= *(const uint2*)"), occurrences(src, "__byte_perm("),
          occurrences(src, "lg_pack_")};
}

// The CUDA source of the matmul's kernel with the CUDA heuristic.
std::string tc_source(const Matmul& c) {
  Schedule s = create_schedule(matmul_graph("CPU", c));
  return CudaRenderer().render(tc_program(s.items.at(0)));
}

TEST_F(TensorCoreLaneRuns, TheCudaSourceLoadsOperandsInRunsOf16Bytes) {
  // x @ W^T: every register is a word of a 16-byte load (the prelude defines lg_pack_ twice)
  SourceCounts nt = count_source(tc_source({1, 128, 128, 64, dtypes::bfloat16, false, false, true}));
  EXPECT_GT(nt.uint4_loads, 0);
  EXPECT_EQ(nt.byte_perms, 0);
  EXPECT_EQ(nt.packs, 2);
  // a @ b: b's registers pair halves of two 16-byte loads, a k row apart
  SourceCounts nn = count_source(tc_source({1, 128, 128, 64, dtypes::bfloat16}));
  EXPECT_GT(nn.uint4_loads, 0);
  EXPECT_GT(nn.byte_perms, 0);
  EXPECT_EQ(nn.packs, 2);
  // per warp and k step of 32: A 4 tiles x 2 rows, B 8 rows of 8 columns: 16 loads, 64 mmas
  EXPECT_EQ(nn.uint4_loads, 16) << "one k step in the loop body";
  set("0", "4x8", "8");
  SourceCounts eight = count_source(tc_source({1, 128, 128, 64, dtypes::bfloat16, false, true, false}));
  EXPECT_GT(eight.uint2_loads, 0);
  EXPECT_EQ(eight.packs, 2);
  set("0", "4x8", "0");
  SourceCounts ptx = count_source(tc_source({1, 128, 128, 64, dtypes::bfloat16}));
  EXPECT_EQ(ptx.byte_perms, 0);
  EXPECT_GT(ptx.packs, 2) << "TC_RUN=0: b's k neighbours converted and packed";
}

// a @ b with runs of 8 along n: each lane's outputs of one row and column pair are 8 neighbours,
// stored as two float4 (float32) or one uint4 (bf16) across the other stores of the output.
TEST_F(TensorCoreLaneRuns, ALanesOutputsAlongARunAreStoredAsVectors) {
  // 4 x 8 tiles per warp: 4 m tiles x 2 rows x 2 columns per lane, each a run of 8 outputs
  EXPECT_EQ(occurrences(tc_source({1, 128, 128, 64, dtypes::bfloat16}), "*(float4*)(data0 + "), 32);
  EXPECT_EQ(occurrences(tc_source({1, 128, 128, 64, dtypes::bfloat16, true}), "*(uint4*)(data0 + "), 16);
}

TEST_F(TensorCoreLaneRuns, AnUnknownRunLengthIsAUserErrorNamingTheVariable) {
  setenv("TC_RUN", "12", 1);
  std::string e = testing_util::error_of([] { config_reload(); });
  EXPECT_NE(e.find("TC_RUN=12"), std::string::npos) << e;
  EXPECT_NE(e.find("0 (the PTX fragment order), 8, 16 or 32"), std::string::npos) << e;
  set("0", "4x8", "16");  // a valid configuration again
}

const std::vector<Matmul>& layouts() {
  static const std::vector<Matmul> all = {
      {1, 64, 128, 64, dtypes::bfloat16},                      // a @ b
      {1, 64, 128, 64, dtypes::bfloat16, false, false, true},  // x @ W^T
      {1, 128, 64, 64, dtypes::bfloat16, false, true, false},  // dY^T @ X
      {1, 128, 64, 32, dtypes::float16, true, true, true},     // both transposed, fp16 -> fp16
      {2, 64, 64, 48, dtypes::bfloat16, false, true, false},   // batched, k of 3 x 16
  };
  return all;
}

TEST_F(TensorCoreLaneRuns, MatmulsOfEveryLayoutMatchTheReferenceAndTheCProgramBitForBit) {
  for (const char* run : {"16", "8", "32"})
    for (const char* warp : {"4x8", "8x4"}) {
      set("0", warp, run);
      for (const Matmul& c : layouts()) {
        if (std::string(warp) == "8x4" && (!c.a_t || std::string(run) == "32")) continue;  // 8 x 4: runs of 8 along m
        if (std::string(run) == "32" && c.k % 64 != 0) continue;  // 4 mmas per k step need k of 64
        SCOPED_TRACE(label(c) + " TC_RUN=" + run + " TC_WARP=" + warp);
        std::vector<float> cuda = run_tc(c, Run::EmulatedCuda);
        expect_close(cuda, reference(c), c.out16 ? 1e-2 : 1e-5, "emulated CUDA");
        // the C program (CUDACHECK's) bit for bit: once per layout (its compile is the slow part)
        if (std::string(run) == "16" && std::string(warp) == "4x8") {
          EXPECT_EQ(cuda, run_tc(c, Run::CProgram));
        }
      }
    }
}

TEST_F(TensorCoreLaneRuns, NvrtcCompilesEveryLayout) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  for (const char* run : {"16", "8", "32"}) {
    set("0", "4x8", run);
    for (const Matmul& c : layouts()) {
      SCOPED_TRACE(label(c) + " TC_RUN=" + run);
      Schedule s = create_schedule(matmul_graph("CPU", c));
      std::vector<uint8_t> cubin = NvrtcCompiler("sm_90").compile(CudaRenderer().render(tc_program(s.items.at(0))));
      ASSERT_GE(cubin.size(), 4u);
      EXPECT_EQ(std::string(cubin.begin(), cubin.begin() + 4), "\x7f" "ELF");
    }
  }
}

}  // namespace
}  // namespace lg
