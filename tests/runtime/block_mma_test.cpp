// Block-tiled tensor-core matmuls (Opt BLOCK_MMA, codegen/block_mma.h; the hand-written main loop
// of codegen/render_block_mma.h). Checked without a GPU: the heuristic's choice, the operand
// layouts the Opt reads off the index, the CUDA source run as emulated CUDA (cp.async as a copy,
// ldmatrix and mma.sync per warp from the PTX ISA's layouts, tests/runtime/cuda_emulation.h)
// against a float64 reference and bit for bit against the C program CUDACHECK runs, and NVRTC
// compiling the source for sm_80 and sm_90 with cp.async, ldmatrix and mma in the PTX. Whether it
// is faster than Opt TC on an H200 is for tools/gpu_check.sh (BLOCK_MMA=0 beside the default).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <set>

#include "base/config.h"
#include "base/error.h"
#include "codegen/block_mma.h"
#include "codegen/gpu_launch.h"
#include "codegen/heuristic_gpu.h"
#include "codegen/render_cuda.h"
#include "codegen/tensor_core.h"
#include "common/user_error.h"
#include "ir/build.h"
#include "ir/graph.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/symbolic.h"
#include "runtime/beam.h"
#include "runtime/buffer.h"
#include "runtime/cpu.h"
#include "runtime/cuda_emulation.h"
#include "runtime/device.h"
#include "runtime/nvrtc.h"
#include "runtime/program_build.h"
#include "runtime/tensor_core_util.h"

namespace lg {
namespace {

using namespace tc_testing;

// This binary's environment turns BLOCK_MMA off for the Opt TC tests (tensor_core_test.cpp); here
// it is on (the default).
class BlockMma : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("BLOCK_MMA", "1", 1);
    config_reload();
  }
  void TearDown() override {
    setenv("BLOCK_MMA", "0", 1);
    config_reload();
  }
};

NodeRef kernel_of(const Matmul& c) {
  Schedule s = create_schedule(matmul_graph("CPU", c));
  EXPECT_EQ(s.items.size(), 1u);
  return rewrite(s.items.at(0).ast, pm_symbolic(), {.name = "initial symbolic"});
}

const Node* first_block_mma(const NodeRef& ast) {
  for (const Node* n : toposort(ast))
    if (n->op == Op::BLOCK_MMA) return n;
  return nullptr;
}

TEST_F(BlockMma, TheHeuristicTakesPlainMatmulsAndLeavesTheRestToTensorCoreTiles) {
  // 256 x 256: 4 blocks of 128 x 128, fewer than kBlockMmaMinBlocks, so the smallest tiles (16 blocks)
  std::vector<Opt> o = gpu_heuristic_opts(kernel_of({1, 256, 256, 64, dtypes::bfloat16}), true);
  ASSERT_EQ(o.size(), 1u) << to_string(o);
  EXPECT_EQ(o[0].kind, OptKind::BLOCK_MMA);
  EXPECT_EQ(o[0].amount, 3) << "64 x 64 tiles";
  // 2048 x 1024: 128 blocks of 128 x 128
  o = gpu_heuristic_opts(kernel_of({1, 2048, 1024, 32, dtypes::float16, false, false, true}), true);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].amount, 0) << "128 x 128 tiles";
  // batched: the batch counts in the blocks (8 x 2 x 8 >= 128 with 128 x 64 tiles)
  o = gpu_heuristic_opts(kernel_of({8, 256, 512, 32, dtypes::bfloat16}), true);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].amount, 1) << "128 x 64 tiles";
  // Not a multiple of any tile, or a k of 40 (padded): Opt TC
  for (const Matmul& c : {Matmul{1, 96, 128, 64, dtypes::bfloat16}, Matmul{1, 128, 128, 40, dtypes::bfloat16}}) {
    o = gpu_heuristic_opts(kernel_of(c), true);
    EXPECT_NE(o[0].kind, OptKind::BLOCK_MMA) << label(c) << ": " << to_string(o);
    EXPECT_TRUE(std::any_of(o.begin(), o.end(), [](const Opt& x) { return x.kind == OptKind::TC; })) << label(c);
  }
  // BLOCK_MMA=0: Opt TC
  setenv("BLOCK_MMA", "0", 1);
  config_reload();
  o = gpu_heuristic_opts(kernel_of({1, 256, 256, 64, dtypes::bfloat16}), true);
  EXPECT_TRUE(std::none_of(o.begin(), o.end(), [](const Opt& x) { return x.kind == OptKind::BLOCK_MMA; })) << to_string(o);
  // without tensor cores (no CUDA sm_80, TC=0): neither
  o = gpu_heuristic_opts(kernel_of({1, 256, 256, 64, dtypes::bfloat16}), false);
  EXPECT_TRUE(std::none_of(o.begin(), o.end(), [](const Opt& x) { return x.kind == OptKind::BLOCK_MMA || x.kind == OptKind::TC; }));
}

TEST_F(BlockMma, TheOptReadsEachOperandsStridesOffTheIndex) {
  struct Case {
    Matmul c;
    int64_t a_m, a_k, b_n, b_k;
  };
  const int64_t M = 128, N = 192, K = 96;
  for (const Case& x : {Case{{2, M, N, K, dtypes::bfloat16}, K, 1, 1, N},                 // a @ b
                        Case{{2, M, N, K, dtypes::bfloat16, false, false, true}, K, 1, K, 1},  // a @ W^T
                        Case{{2, M, N, K, dtypes::bfloat16, false, true, false}, 1, M, 1, N},  // a^T @ b
                        Case{{2, M, N, K, dtypes::bfloat16, false, true, true}, 1, M, K, 1}}) {
    SCOPED_TRACE(label(x.c));
    NodeRef k = apply_block_mma(kernel_of(x.c), 0, 3);
    const Node* mma = first_block_mma(k);
    ASSERT_NE(mma, nullptr);
    BlockMmaArg a = BlockMmaArg::from_shape(mma->get_arg<Shape>());
    EXPECT_EQ(a.k, K);
    ASSERT_EQ(a.products.size(), 1u);
    EXPECT_EQ(a.products[0], (BlockMmaProduct{x.a_m, x.a_k, x.b_n, x.b_k}));
    EXPECT_EQ(a.tiling, block_mma_tilings()[3]);
    EXPECT_EQ(BlockMmaArg::from_shape(a.to_shape()).to_shape(), a.to_shape());
    int globals = 0, locals = 0;
    for (const Node* n : toposort(k))
      if (n->op == Op::RANGE) {
        AxisType t = n->get_arg<RangeArg>().type;
        globals += t == AxisType::GLOBAL;
        locals += t == AxisType::LOCAL;
      }
    EXPECT_EQ(globals, 2) << "the blocks of one matrix, the batch";
    EXPECT_EQ(locals, 3) << "warps along m and n, the lane";
  }
}

TEST_F(BlockMma, RefusesWhatTheMainLoopCannotRead) {
  auto refused = [](const Matmul& c, int tiling, const char* what) {
    try {
      apply_block_mma(kernel_of(c), 0, tiling);
      ADD_FAILURE() << label(c) << " tiling " << tiling << " was taken; want: " << what;
    } catch (const OptError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused({1, 96, 128, 64, dtypes::bfloat16}, 3, "not a multiple of the tile");
  refused({1, 128, 128, 48, dtypes::bfloat16}, 3, "not a multiple of the tile");
  refused({1, 128, 128, 64, dtypes::bfloat16}, static_cast<int>(block_mma_tilings().size()),
          str("no tiling ", block_mma_tilings().size()).c_str());
  // a row stride that is no multiple of 8 elements (16 bytes): a @ b with n = 128 but b's rows 132
  // elements apart (a slice of a wider b)
  NodeRef a = filled("CPU", dtypes::bfloat16, 64 * 64, a_value);
  NodeRef b = filled("CPU", dtypes::bfloat16, 64 * 132, b_value);
  NodeRef bv = make(Op::SHRINK, dtypes::bfloat16, {make(Op::RESHAPE, dtypes::bfloat16, {b}, Shape{64, 132})},
                    Pairs{{0, 64}, {0, 128}});
  NodeRef x = cast(make(Op::EXPAND, dtypes::bfloat16, {make(Op::RESHAPE, dtypes::bfloat16, {make(Op::RESHAPE, dtypes::bfloat16, {a}, Shape{64, 64})}, Shape{64, 1, 64})}, Shape{64, 128, 64}), dtypes::float32);
  NodeRef y = cast(make(Op::EXPAND, dtypes::bfloat16, {make(Op::RESHAPE, dtypes::bfloat16, {make(Op::PERMUTE, dtypes::bfloat16, {bv}, Shape{1, 0})}, Shape{1, 128, 64})}, Shape{64, 128, 64}), dtypes::float32);
  NodeRef sum = make(Op::RESHAPE, dtypes::float32, {make(Op::REDUCE_AXIS, dtypes::float32, {x * y}, ReduceArg{Op::ADD, {2}})}, Shape{64, 128});
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {sum}));
  ASSERT_EQ(s.items.size(), 1u);
  NodeRef k = rewrite(s.items[0].ast, pm_symbolic(), {.name = "initial symbolic"});
  ASSERT_FALSE(tc_candidates(k).empty());
  EXPECT_THROW(apply_block_mma(k, 0, 3), OptError);
  // after another Opt
  EXPECT_THROW(apply_opts(kernel_of({1, 128, 128, 64, dtypes::bfloat16}), {{OptKind::GLOBAL, 0}, {OptKind::BLOCK_MMA, 0, 3}}),
               OptError);
}

// The matmul's one kernel with BLOCK_MMA tiling t, run as emulated CUDA or as the C program.
std::vector<float> run_block(const Matmul& c, int tiling, Run how) {
  Schedule s = create_schedule(matmul_graph("CPU", c));
  EXPECT_EQ(s.items.size(), 1u);
  const ScheduleItem& item = s.items.at(0);
  run_program(lower_kernel(item.ast, item.name, {{OptKind::BLOCK_MMA, 0, tiling}}), item, how);
  return read(s.outputs.at(0), c.out16 ? c.t : dtypes::float32);
}

TEST_F(BlockMma, EveryLayoutAsEmulatedCudaMatchesTheReferenceAndTheCProgramBitForBit) {
  // 64 x 64 tiles (4 warps of 32 x 32), 3 stages of 32 k: k = 128 is 4 k tiles, so the pipeline's
  // stages wrap; 2 x 2 blocks per matrix, 2 matrices
  for (bool a_t : {false, true})
    for (bool b_t : {false, true}) {
      Matmul c{2, 128, 128, 128, dtypes::bfloat16, false, a_t, b_t};
      SCOPED_TRACE(label(c));
      std::vector<float> cuda = run_block(c, 3, Run::EmulatedCuda);
      expect_close(cuda, reference(c), 1e-6, "emulated CUDA");
      EXPECT_EQ(cuda, run_block(c, 3, Run::CProgram)) << "the C program adds in the same order";
    }
}

TEST_F(BlockMma, TheOtherTilingsFp16AndACastBackAsEmulatedCuda) {
  // 128 x 128 tiles (4 warps of 64 x 64), one k tile only (k = 32: the prologue's second stage empty)
  Matmul big{1, 128, 256, 32, dtypes::bfloat16, false, false, true};
  expect_close(run_block(big, 0, Run::EmulatedCuda), reference(big), 1e-6, label(big));
  // fp16 in, fp16 out: the epilogue (the cast) stays generated
  Matmul half{1, 64, 128, 64, dtypes::float16, true};
  expect_close(run_block(half, 3, Run::EmulatedCuda), reference(half), 2.0 / 1024, label(half));
  // 128 x 64 and 64 x 128 tiles
  Matmul wide{1, 128, 128, 64, dtypes::bfloat16};
  expect_close(run_block(wide, 1, Run::EmulatedCuda), reference(wide), 1e-6, "128 x 64 tiles");
  expect_close(run_block(wide, 2, Run::EmulatedCuda), reference(wide), 1e-6, "64 x 128 tiles");
  // 8 warps, 3 stages (BEAM's, 72 KiB of dynamic shared memory): 128 x 256 and 256 x 128, k of
  // 4 tiles so the stages wrap
  Matmul big8{1, 256, 256, 128, dtypes::bfloat16, false, true, false};
  expect_close(run_block(big8, 4, Run::EmulatedCuda), reference(big8), 1e-6, "128 x 256 tiles");
  expect_close(run_block(big8, 5, Run::EmulatedCuda), reference(big8), 1e-6, "256 x 128 tiles");
}

// The tilings past 48 KiB of shared memory: 64 k per stage (rows of 128 bytes: the full 8-chunk
// swizzle) and 4 stages. The emulation gives a kernel exactly its launch's dynamic shared memory,
// before a guard page, so a tile placed past block_mma_shared_bytes faults.
TEST_F(BlockMma, TheLargeTilingsInDynamicSharedMemoryAsEmulatedCuda) {
  Matmul deep{1, 256, 256, 256, dtypes::bfloat16, false, false, true};  // 4 k tiles of 64: the 3 stages wrap
  for (int tiling : {6, 7, 8}) {
    SCOPED_TRACE(str("tiling ", tiling));
    expect_close(run_block(deep, tiling, Run::EmulatedCuda), reference(deep), 1e-6, label(deep));
  }
  Matmul four{1, 128, 128, 192, dtypes::float16, false, true, true};  // 6 k tiles of 32 in 4 stages
  expect_close(run_block(four, 9, Run::EmulatedCuda), reference(four), 1e-6, "4 stages");
}

// The wgmma main loop (sm_90a): warpgroups of 64 rows reading both tiles by descriptor from the
// 128-byte-swizzled stages, K-major or MN-major (A as a or a^T, B as b or W^T: the four layouts
// of a layer's forward and backward products). The emulation applies an mma only at the wait
// that covers it, reading the tiles then through the async proxy's view, so a kernel that
// overwrites a stage before waiting, or does not fence its copies, computes something else; each
// element adds its 16 products in k order to D, so the C program's bits come out.
TEST_F(BlockMma, TheWgmmaTilingsAsEmulatedCudaMatchTheCProgramBitForBit) {
  for (bool a_t : {false, true})
    for (bool b_t : {false, true}) {
      Matmul wide{2, 128, 256, 384, dtypes::bfloat16, false, a_t, b_t};  // 6 k tiles of 64 in 4 stages; a batch of 2
      std::vector<float> got = run_block(wide, 10, Run::EmulatedCuda);
      expect_close(got, reference(wide), 1e-6, label(wide));
      EXPECT_EQ(got, run_block(wide, 10, Run::CProgram)) << label(wide);
    }
  Matmul deep{1, 256, 128, 320, dtypes::float16, true, true, false};  // 5 k tiles in 4 stages, fp16 out, A^T @ B
  expect_close(run_block(deep, 11, Run::EmulatedCuda), reference(deep), 2.0 / 1024, label(deep));
}

// The warp-specialized wgmma main loop (tiling 12): a producer warpgroup (threads 256..383, in no
// range of the kernel) copies the stages and hands them to the two consumer warpgroups through
// mbarriers. The emulation runs its threads as fibers that yield at every failed mbarrier wait,
// lands a producer's copies only at its cp.async.wait_group, lets a wgmma read them only after
// that thread's proxy fence, and applies an mma only at the wait that covers it: a producer that
// signals a stage before its copies landed, a consumer that frees a stage before its mmas are
// done, or a parity off by one computes NaNs or deadlocks (both fail). 6 and 9 k tiles in 4
// stages: the ring wraps and the phases flip.
// A warp-specialized tiling in the four layouts (bf16, 6 k tiles of 64) as emulated CUDA against
// float64 and bit for bit against the C program, and fp16 out over a batch of 2 (9 k tiles).
void check_specialized_tiling(int tiling) {
  for (bool a_t : {false, true})
    for (bool b_t : {false, true}) {
      Matmul wide{1, 128, 256, 384, dtypes::bfloat16, false, a_t, b_t};
      std::vector<float> got = run_block(wide, tiling, Run::EmulatedCuda);
      expect_close(got, reference(wide), 1e-6, label(wide));
      EXPECT_EQ(got, run_block(wide, tiling, Run::CProgram)) << label(wide);
    }
  Matmul two{2, 256, 256, 576, dtypes::float16, true, true, false};
  expect_close(run_block(two, tiling, Run::EmulatedCuda), reference(two), 2.0 / 1024, label(two));
}

TEST_F(BlockMma, TheWarpSpecializedWgmmaTilingAsEmulatedCudaMatchesTheCProgramBitForBit) {
  check_specialized_tiling(12);
  // the launch: 384 threads, the producer's after the 256 the kernel's ranges number
  Schedule s = create_schedule(matmul_graph("CPU", {1, 128, 256, 128, dtypes::bfloat16}));
  LinearProgram p = lower_kernel(s.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, 12}});
  EXPECT_EQ(gpu_launch_dims(p).threads, 384);
  EXPECT_EQ(gpu_launch_dims(lower_kernel(s.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, 10}})).threads,
            256);
}

// Tiling 13: tiling 12 with TMA. One producer thread issues per stage the expected bytes and the
// bulk tensor copies (a 64 k x rows box for an operand contiguous along k, 64 x 64 slabs for one
// contiguous along m or n) through tensor maps passed by value after the buffers. The emulation
// lands a copy only at a wait on its mbarrier (until then its box is NaNs), counts its bytes
// against the expected ones, swizzles by the CUDA documentation's 128-byte pattern and reads zeros
// past the tensor's rows: a wrong coordinate, box or byte count fails (NaNs, zeros, a deadlock).
TEST_F(BlockMma, TheTmaTilingAsEmulatedCudaMatchesTheCProgramBitForBit) {
  check_specialized_tiling(13);  // the batch of 2: rows of the tensor map past the first matrix's
  // the launch: per product A's and B's tensor map (buffer slot, row length, box rows)
  Schedule s = create_schedule(matmul_graph("CPU", {1, 128, 256, 128, dtypes::bfloat16, false, false, true}));
  LaunchDims d = gpu_launch_dims(lower_kernel(s.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, 13}}));
  EXPECT_EQ(d.threads, 384);
  EXPECT_EQ(d.tensor_maps, (std::vector<GpuTensorMap>{{1, 128, 128}, {2, 128, 256}}));
  Schedule ab = create_schedule(matmul_graph("CPU", {1, 128, 256, 128, dtypes::bfloat16}));
  EXPECT_EQ(gpu_launch_dims(lower_kernel(ab.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, 13}})).tensor_maps,
            (std::vector<GpuTensorMap>{{1, 128, 128}, {2, 256, 64}}));
}

// Tiling 14: tiling 13 persistent. The emulation launches kEmulatedResidentBlocks (3) blocks, as if
// only that many fit on the GPU, so each walks several output tiles in the kernel's loop and not
// all the same number; the mbarriers are set up once and both sides' place in the ring of 4 stages
// runs on from tile to tile (2 k tiles per output tile: a tile starts mid-ring, and the phases
// flip inside tiles). A side that restarted its ring per tile, or mbarriers set up per tile,
// deadlocks or computes from stale stages.
TEST_F(BlockMma, ThePersistentTilingWalksSeveralTilesPerBlockAsEmulatedCuda) {
  check_specialized_tiling(14);  // the batch of 2: 4 tiles on 3 blocks
  for (bool b_t : {false, true}) {
    Matmul many{1, 512, 512, 128, dtypes::bfloat16, false, false, b_t};  // 8 tiles: 3, 3 and 2 per block
    std::vector<float> got = run_block(many, 14, Run::EmulatedCuda);
    expect_close(got, reference(many), 1e-6, label(many));
    EXPECT_EQ(got, run_block(many, 14, Run::CProgram)) << label(many);
  }
  // the launch: persistent, with tiling 13's threads and tensor maps; the runtime's grid is at most
  // the blocks that fit at once, and never more than the tiles
  Schedule s = create_schedule(matmul_graph("CPU", {1, 512, 512, 128, dtypes::bfloat16, false, false, true}));
  LinearProgram p = lower_kernel(s.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, 14}});
  LaunchDims d = gpu_launch_dims(p);
  EXPECT_TRUE(d.persistent);
  EXPECT_EQ(d.blocks, 8);
  EXPECT_EQ(d.threads, 384);
  EXPECT_EQ(d.tensor_maps, (std::vector<GpuTensorMap>{{1, 128, 128}, {2, 128, 256}}));
  LaunchDims on_132 = d, on_3 = d;
  cap_persistent_grid(on_132, 132);
  cap_persistent_grid(on_3, 3);
  EXPECT_EQ(on_132.grid[0], 8u);
  EXPECT_EQ(on_3.grid[0], 3u);
  LaunchDims not_persistent = gpu_launch_dims(lower_kernel(s.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, 13}}));
  EXPECT_FALSE(not_persistent.persistent);
  cap_persistent_grid(not_persistent, 3);
  EXPECT_EQ(not_persistent.grid[0], 8u) << "only a persistent kernel's grid is capped";
  // the source: the setup once before the loop over the tiles, the producer going on to the next
  std::string src = CudaRenderer().render(p);
  const size_t setup = src.find("lg_ws_setup<"), loop = src.find("for (int64_t lg_b = (int64_t)blockIdx.x; lg_b < 8ll; lg_b += (int64_t)gridDim.x)");
  ASSERT_NE(loop, std::string::npos) << src;
  EXPECT_LT(src.rfind("lg_ws_setup<128, 256, 4, 1>((int)lg_t", loop), loop) << "the setup comes before the loop";
  EXPECT_EQ(src.find("lg_ws_setup<", loop), std::string::npos) << "and only there";
  EXPECT_NE(setup, std::string::npos);
  EXPECT_NE(src.find("continue;", loop), std::string::npos);
}

// Tiling 15: tiling 13 in clusters of 2 blocks, neighbouring block rows of one block column: each
// block copies its A tile and half of the B tile they share, that half by TMA multicast into both
// blocks, and a stage is free again once both blocks' consumer warpgroups released it (one
// arrival per warpgroup on each block's empty[]). The emulation runs a cluster's 768 threads
// together, each block with its own shared memory: a multicast lands in both, an arrival reaches
// the other block's mbarrier through mapa, a block's bytes may land before its producer expects
// them, and an arrival or copy into a block that has ended is a protocol error (so a producer
// that leaves before the other block's last releases fails). One cluster with 6 k tiles in 4
// stages in all four layouts, then 4 clusters (groups of 4 block rows) with 9 k tiles.
TEST_F(BlockMma, TheClusterTilingSharesBsTileByMulticastAsEmulatedCuda) {
  for (bool a_t : {false, true})
    for (bool b_t : {false, true}) {
      Matmul pair{1, 256, 256, 384, dtypes::bfloat16, false, a_t, b_t};
      std::vector<float> got = run_block(pair, 15, Run::EmulatedCuda);
      expect_close(got, reference(pair), 1e-6, label(pair));
      EXPECT_EQ(got, run_block(pair, 15, Run::CProgram)) << label(pair);
    }
  Matmul many{1, 512, 512, 576, dtypes::float16, true, true, false};
  expect_close(run_block(many, 15, Run::EmulatedCuda), reference(many), 2.0 / 1024, label(many));
  // the launch: clusters of 2 blocks; B's K-major box is the half each block multicasts
  Schedule s = create_schedule(matmul_graph("CPU", {1, 256, 256, 128, dtypes::bfloat16, false, false, true}));
  LinearProgram p = lower_kernel(s.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, 15}});
  LaunchDims d = gpu_launch_dims(p);
  EXPECT_EQ(d.cluster, 2);
  EXPECT_EQ(d.blocks, 2);
  EXPECT_EQ(d.threads, 384);
  EXPECT_FALSE(d.persistent);
  EXPECT_EQ(d.tensor_maps, (std::vector<GpuTensorMap>{{1, 128, 128}, {2, 128, 128}}));
  EXPECT_EQ(gpu_launch_dims(lower_kernel(s.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, 13}})).cluster, 1);
  std::string src = CudaRenderer().render(p);
  for (const char* part :
       {"__launch_bounds__(384) __cluster_dims__(2, 1, 1) lg_kernel(", "lg_ws_setup<128, 256, 4, 1, 2>(",
        "lg_ws_produce_tma<128, 256, 4, true, true, 2>(", "lg_ws_drain<128, 256, 4>(",
        "lg_ws_consume<128, 256, 4, true, true, true, true, 2>("})
    EXPECT_NE(src.find(part), std::string::npos) << part << "\n" << src;
  // refused: block rows that do not pair up, and a grid axis beside the matmul's (a batch)
  auto refuses = [](const Matmul& c, const std::string& why) {
    NodeRef k = kernel_of(c);
    try {
      apply_block_mma(k, 0, 15);
      ADD_FAILURE() << "tiling 15 took " << label(c);
    } catch (const OptError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(apply_block_mma(k, 0, 13)) << label(c);
  };
  refuses({1, 384, 256, 128, dtypes::bfloat16}, "3 block rows do not pair up into clusters of 2");
  refuses({2, 256, 256, 128, dtypes::bfloat16}, "another grid axis");
}

// Tiling 16: tiling 15 persistent. The grid is whole clusters (the emulation's 3 resident clusters
// of 2), each walking tile pairs in step; the producer thread drains the releases once, after its
// last tile (a drain per tile would idle the producer through every epilogue).
TEST_F(BlockMma, ThePersistentClusterTilingWalksTilePairsAsEmulatedCuda) {
  for (bool a_t : {false, true})
    for (bool b_t : {false, true}) {
      Matmul pair{1, 256, 256, 384, dtypes::bfloat16, false, a_t, b_t};  // one pair of tiles
      std::vector<float> got = run_block(pair, 16, Run::EmulatedCuda);
      expect_close(got, reference(pair), 1e-6, label(pair));
      EXPECT_EQ(got, run_block(pair, 16, Run::CProgram)) << label(pair);
    }
  for (bool b_t : {false, true}) {
    Matmul many{1, 1024, 512, 128, dtypes::bfloat16, false, false, b_t};  // 8 pairs on 3 clusters: 3, 3, 2
    std::vector<float> got = run_block(many, 16, Run::EmulatedCuda);
    expect_close(got, reference(many), 1e-6, label(many));
    EXPECT_EQ(got, run_block(many, 16, Run::CProgram)) << label(many);
  }
  Schedule s =
      create_schedule(matmul_graph("CPU", {1, 1024, 512, 128, dtypes::bfloat16, false, false, true}));
  LinearProgram p = lower_kernel(s.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, 16}});
  LaunchDims d = gpu_launch_dims(p);
  EXPECT_TRUE(d.persistent);
  EXPECT_EQ(d.cluster, 2);
  EXPECT_EQ(d.blocks, 16);
  LaunchDims on_133 = d, on_3 = d, on_1 = d;
  cap_persistent_grid(on_133, 133);
  cap_persistent_grid(on_3, 3);
  cap_persistent_grid(on_1, 1);
  EXPECT_EQ(on_133.grid[0], 16u) << "never past the tiles";
  EXPECT_EQ(on_3.grid[0], 2u) << "whole clusters";
  EXPECT_EQ(on_1.grid[0], 2u) << "at least one cluster";
  std::string src = CudaRenderer().render(p);
  const size_t loop = src.find(
                   "for (int64_t lg_b = (int64_t)blockIdx.x; lg_b < 16ll; lg_b += (int64_t)gridDim.x)"),
               drain = src.find("lg_ws_drain<128, 256, 4>((int)lg_t, (uint16_t*)lg_dsmem, lg_pipe);");
  ASSERT_NE(loop, std::string::npos) << src;
  ASSERT_NE(drain, std::string::npos) << src;
  EXPECT_LT(src.rfind("lg_ws_setup<128, 256, 4, 1, 2>((int)lg_t", loop), loop);
  EXPECT_EQ(src.find("lg_ws_drain<", drain + 1), std::string::npos) << "one drain";
  EXPECT_NE(src.find("continue;", loop), std::string::npos);
  EXPECT_LT(src.find("continue;", loop), drain) << "the drain after the loop";
}

// Every TMA tiling's tensor maps, for the row lengths of the llama3.1-8b step's operands (4096,
// 14336, the 128256-entry vocabulary along m or n, with the other axes short so the buffers stay
// small; along k so short a product would be split, schedule/split_reduce.h) in each operand
// layout, encode to arguments the driver accepts
// (cuTensorMapEncodeTiled's documented requirements) over their operands' buffers; the emulated
// tests check the same for what they run.
TEST_F(BlockMma, EveryTmaTensorMapOfTheStepsShapesMeetsTheDriversRequirements) {
  struct Shape3 {
    int64_t m, n, k;
  };
  int checked = 0;
  for (Shape3 sh : {Shape3{256, 4096, 4096}, Shape3{256, 256, 14336}, Shape3{256, 14336, 256},
                    Shape3{256, 128256, 128}, Shape3{128256, 256, 128}})
    for (bool a_t : {false, true})
      for (bool b_t : {false, true}) {
        Matmul c{1, sh.m, sh.n, sh.k, dtypes::bfloat16, false, a_t, b_t};
        Schedule s = create_schedule(matmul_graph("CPU", c));
        for (int tiling : {13, 14, 15, 16}) {
          SCOPED_TRACE(
              str(sh.m, " x ", sh.n, " x ", sh.k, a_t ? " a_t" : "", b_t ? " b_t" : "", " tiling ", tiling));
          LaunchDims d =
              gpu_launch_dims(lower_kernel(s.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, tiling}}));
          ASSERT_EQ(d.tensor_maps.size(), 2u);
          for (const GpuTensorMap& m : d.tensor_maps) {
            const int64_t elements = m.slot == d.tensor_maps[0].slot ? sh.m * sh.k : sh.k * sh.n;
            EXPECT_EQ(tensor_map_violation(tensor_map_encoding(m, elements), 256), "") << "slot " << m.slot;
            checked++;
          }
        }
      }
  EXPECT_EQ(checked, 5 * 4 * 4 * 2);
}

// TMA reads a buffer as rows of ld elements; an operand whose tiles cross those rows (an (M, K)
// view 8 elements into a flat buffer) is refused, while the cp.async tilings take it.
TEST_F(BlockMma, TheTmaTilingRefusesTilesAcrossRows) {
  const int64_t M = 128, N = 256, K = 128;
  DType t = dtypes::bfloat16, f = dtypes::float32;
  NodeRef flat = filled("CPU", t, M * K + 8, a_value);
  NodeRef a = make(Op::RESHAPE, t, {make(Op::SHRINK, t, {flat}, Pairs{{8, 8 + M * K}})}, Shape{M, 1, K});
  NodeRef b = make(Op::RESHAPE, t, {filled("CPU", t, N * K, b_value)}, Shape{1, N, K});
  NodeRef x = cast(make(Op::EXPAND, t, {a}, Shape{M, N, K}), f),
          y = cast(make(Op::EXPAND, t, {b}, Shape{M, N, K}), f);
  NodeRef sum =
      make(Op::RESHAPE, f, {make(Op::REDUCE_AXIS, f, {x * y}, ReduceArg{Op::ADD, {2}})}, Shape{M, N});
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {sum}));
  ASSERT_EQ(s.items.size(), 1u);
  NodeRef k = rewrite(s.items[0].ast, pm_symbolic(), {.name = "initial symbolic"});
  try {
    apply_block_mma(k, 0, 13);
    ADD_FAILURE() << "tiling 13 took an operand across rows";
  } catch (const OptError& e) {
    EXPECT_NE(std::string(e.what()).find("do not lie within rows of 128"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(apply_block_mma(k, 0, 12));
}

// Every tiling's launch asks for exactly its stages of A and B tiles as dynamic shared memory, which
// the kernel declares once and every product's main loop shares.
TEST_F(BlockMma, TheLaunchCarriesEachTilingsSharedMemory) {
  const int64_t want[] = {48 << 10,
                          36 << 10,
                          36 << 10,
                          24 << 10,
                          72 << 10,
                          72 << 10,
                          96 << 10,
                          144 << 10,
                          144 << 10,
                          64 << 10,
                          (192 + 1) << 10,
                          (128 + 1) << 10,
                          ((192 + 1) << 10) + 4 * 16,  // 12-16: and 4 stages' full and empty mbarriers
                          ((192 + 1) << 10) + 4 * 16,
                          ((192 + 1) << 10) + 4 * 16,
                          ((192 + 1) << 10) + 4 * 16,
                          ((192 + 1) << 10) + 4 * 16};
  ASSERT_EQ(block_mma_tilings().size(), std::size(want));
  // x @ W^T: both operands contiguous along k, which the wgmma tilings need
  Schedule s = create_schedule(matmul_graph("CPU", {1, 256, 256, 128, dtypes::bfloat16, false, false, true}));
  for (int t = 0; t < static_cast<int>(std::size(want)); t++) {
    EXPECT_EQ(block_mma_shared_bytes(block_mma_tilings()[t]), want[t]) << "tiling " << t;
    LinearProgram p = lower_kernel(s.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, t}});
    EXPECT_EQ(gpu_launch_dims(p).shared_bytes, want[t]) << "tiling " << t;
    std::string src = CudaRenderer().render(p);
    EXPECT_NE(src.find("LG_DYNAMIC_SHARED(lg_dsmem);"), std::string::npos) << "tiling " << t;
    EXPECT_EQ(src.find("__shared__ uint16_t"), std::string::npos) << "no static tiles";
  }
  // two products: one buffer for both main loops
  Schedule two = create_schedule(two_products_graph(64, 64, 96));
  std::vector<Opt> opts = gpu_heuristic_opts(two.items.at(0).ast, true);
  LinearProgram p = lower_kernel(two.items.at(0).ast, "k", opts);
  std::string src = CudaRenderer().render(p);
  EXPECT_EQ(gpu_launch_dims(p).shared_bytes, 24 << 10) << to_string(opts);
  size_t calls = 0;
  for (size_t at = src.find("(uint16_t*)lg_dsmem"); at != std::string::npos; at = src.find("(uint16_t*)lg_dsmem", at + 1)) calls++;
  EXPECT_EQ(calls, 2u);
}

// BLOCK_MMA_TILE fixes the tiling where the shape, layout and target allow it, else the heuristic
// picks as without it; a number that is no tiling is a user error naming the variable.
TEST_F(BlockMma, BlockMmaTileFixesTheTiling) {
  Schedule s = create_schedule(matmul_graph("CPU", {1, 256, 256, 128, dtypes::bfloat16}));
  setenv("BLOCK_MMA_TILE", "7", 1);
  config_reload();
  EXPECT_EQ(gpu_heuristic_opts(s.items.at(0).ast, true), (std::vector<Opt>{{OptKind::BLOCK_MMA, 0, 7}}));
  // 128 x 128 is no multiple of tiling 7's 128 x 256 block: the heuristic's pick (tiling 3: 64 x 64
  // blocks, the last that applies, as none gives 128 blocks)
  Schedule small = create_schedule(matmul_graph("CPU", {1, 128, 128, 64, dtypes::bfloat16}));
  EXPECT_EQ(gpu_heuristic_opts(small.items.at(0).ast, true), (std::vector<Opt>{{OptKind::BLOCK_MMA, 0, 3}}));
  // a wgmma tiling only where the target has wgmma (sm_90a), for a @ b and x @ W^T alike
  setenv("BLOCK_MMA_TILE", "10", 1);
  config_reload();
  Schedule nt = create_schedule(matmul_graph("CPU", {1, 256, 256, 128, dtypes::bfloat16, false, false, true}));
  for (const Schedule* m : {&s, &nt}) {
    EXPECT_EQ(gpu_heuristic_opts(m->items.at(0).ast, GpuKnobs::defaults(true, true)), (std::vector<Opt>{{OptKind::BLOCK_MMA, 0, 10}}));
    EXPECT_EQ(gpu_heuristic_opts(m->items.at(0).ast, GpuKnobs::defaults(true, false)), (std::vector<Opt>{{OptKind::BLOCK_MMA, 0, 3}}));
  }
  const std::string past = str("BLOCK_MMA_TILE=", block_mma_tilings().size());  // one past the last tiling
  setenv("BLOCK_MMA_TILE", str(block_mma_tilings().size()).c_str(), 1);
  config_reload();
  try {
    gpu_heuristic_opts(s.items.at(0).ast, true);
    ADD_FAILURE() << past << " was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(past), std::string::npos) << e.what();
  }
  unsetenv("BLOCK_MMA_TILE");
  config_reload();
}

// --- Sums of products (tensor_core_util.h: two_products_graph) and merged reduce axes ---

// out (m, n) = sum over r and s of a[r][s][m] * b[r][s][n]: grouped-query attention's dV (P^T @ dO
// summed over the query heads r that share a kv head and the positions s): two reduce axes that
// merge into one k of R*S (a's r stride S*M is S times its s stride M; likewise b's).
NodeRef merged_k_graph(int64_t R, int64_t S, int64_t M, int64_t N) {
  DType t = dtypes::bfloat16, f = dtypes::float32;
  auto side = [&](float (*value)(int64_t), int64_t X, Shape at) {  // (R, S, X) stored -> (M, N, R, S) view
    NodeRef v = make(Op::PERMUTE, t, {make(Op::RESHAPE, t, {filled("CPU", t, R * S * X, value)}, Shape{R, S, X})}, Shape{2, 0, 1});
    return cast(make(Op::EXPAND, t, {make(Op::RESHAPE, t, {v}, at)}, Shape{M, N, R, S}), f);
  };
  NodeRef body = side(a_value, M, Shape{M, 1, R, S}) * side(b_value, N, Shape{1, N, R, S});
  NodeRef sum = make(Op::RESHAPE, f, {make(Op::REDUCE_AXIS, f, {body}, ReduceArg{Op::ADD, {2, 3}})}, Shape{M, N});
  return make(Op::SINK, dtypes::void_, {sum});
}

// The graph's one kernel with Opt BLOCK_MMA (the heuristic's choice, checked to be one, or
// `tiling`), as emulated CUDA and as the C program (same bits), against `want`.
void check_block_kernel(const NodeRef& graph, const std::vector<double>& want, size_t products,
                        int tiling = -1) {
  std::vector<float> results[2];
  for (enum Run how : {Run::EmulatedCuda, Run::CProgram}) {
    Schedule s = create_schedule(graph);
    ASSERT_EQ(s.items.size(), 1u);
    const ScheduleItem& item = s.items[0];
    std::vector<Opt> opts =
        tiling < 0 ? gpu_heuristic_opts(item.ast, true) : std::vector<Opt>{{OptKind::BLOCK_MMA, 0, tiling}};
    ASSERT_EQ(opts.size(), 1u) << to_string(opts);
    ASSERT_EQ(opts[0].kind, OptKind::BLOCK_MMA) << to_string(opts);
    LinearProgram p = lower_kernel(item.ast, item.name, opts);
    for (const NodeRef& x : p.ops)
      if (x->op == Op::BLOCK_MMA) {
        EXPECT_EQ(BlockMmaArg::from_shape(x->get_arg<Shape>()).products.size(), products);
      }
    run_program(p, item, how);
    results[how == Run::CProgram] = read(s.outputs.at(0), dtypes::float32);
    expect_close(results[how == Run::CProgram], want, 1e-6, how == Run::CProgram ? "C program" : "emulated CUDA");
  }
  EXPECT_EQ(results[0], results[1]);
}

TEST_F(BlockMma, ASumOfTwoProductsRunsTheMainLoopTwiceIntoOneAccumulator) {
  const int64_t M = 64, N = 64, K = 96;
  check_block_kernel(two_products_graph(M, N, K), two_products_reference(M, N, K), 2);
}

// The warp-specialized tilings run one ring of stages across the products: 3 k tiles each, so the
// second product's tiles wrap the 4 stages and flip their phases (the persistent one across output
// tiles too); then TMA over two reduce axes
// that merge (the rows of its tensor map cross the outer axis's boundary inside a k tile).
TEST_F(BlockMma, TheWarpSpecializedTilingsCarryTheirPipelineAcrossProductsAndMergedAxes) {
  const int64_t M = 128, N = 256, K = 192;
  for (int tiling : {12, 13}) {
    SCOPED_TRACE(str("tiling ", tiling));
    check_block_kernel(two_products_graph(M, N, K), two_products_reference(M, N, K), 2, tiling);
  }
  // persistent: 4 output tiles on 3 blocks, each tile's two products on from the last tile's ring
  check_block_kernel(two_products_graph(2 * M, 2 * N, K), two_products_reference(2 * M, 2 * N, K), 2, 14);
  // clusters: both blocks' rings across the two products; persistent, 4 tile pairs on 3 clusters,
  // a cluster's second pair's products on from its first's ring
  for (int tiling : {15, 16}) {
    SCOPED_TRACE(str("tiling ", tiling));
    check_block_kernel(two_products_graph(4 * M, 2 * N, K), two_products_reference(4 * M, 2 * N, K), 2,
                       tiling);
  }
  const int64_t R = 2, S = 96;
  std::vector<double> want(M * N, 0.0);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++)
      for (int64_t r = 0; r < R; r++)
        for (int64_t q = 0; q < S; q++)
          want[i * N + j] += double(a_value((r * S + q) * M + i)) * b_value((r * S + q) * N + j);
  check_block_kernel(merged_k_graph(R, S, M, N), want, 1, 13);
}

TEST_F(BlockMma, ReduceAxesThatMergeAreOneK) {
  const int64_t R = 2, S = 48, M = 64, N = 64;  // k = 96: three k tiles of 32, each across r's boundary or not
  std::vector<double> want(M * N, 0.0);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++)
      for (int64_t r = 0; r < R; r++)
        for (int64_t q = 0; q < S; q++) want[i * N + j] += double(a_value((r * S + q) * M + i)) * b_value((r * S + q) * N + j);
  check_block_kernel(merged_k_graph(R, S, M, N), want, 1);
}

// BEAM on a GPU steps the block tiling among those that apply and turns block tiles off (Opt TC);
// every list it reaches computes the matmul.
TEST_F(BlockMma, BeamStepsTheTilingAndTurnsItOff) {
  Matmul c{1, 128, 128, 32, dtypes::bfloat16};
  Schedule s = create_schedule(matmul_graph("CPU", c));
  const NodeRef& ast = s.items.at(0).ast;
  std::unique_ptr<BeamSpace> space = gpu_beam_space(ast, GpuKnobs::defaults(true));
  std::vector<std::vector<Opt>> starts = space->starts();
  ASSERT_FALSE(starts.empty());
  ASSERT_EQ(starts[0], (std::vector<Opt>{{OptKind::BLOCK_MMA, 0, 3}})) << "one block of 128 x 128 is too few: 64 x 64";
  std::set<int> tilings;
  bool tc = false;
  for (const std::vector<Opt>& o : space->next(starts[0])) {
    if (o.size() == 1 && o[0].kind == OptKind::BLOCK_MMA) {
      tilings.insert(o[0].amount);
      run_program(lower_kernel(ast, "k", o), s.items[0], Run::EmulatedCuda);
      expect_close(read(s.outputs.at(0), dtypes::float32), reference(c), 1e-6, to_string(o));
    }
    tc = tc || std::any_of(o.begin(), o.end(), [](const Opt& x) { return x.kind == OptKind::TC; });
  }
  EXPECT_EQ(tilings, (std::set<int>{0, 1, 2})) << "128 x 256 and 256 x 128 do not divide 128 x 128; 4 stages need 64 KiB";
  EXPECT_TRUE(tc) << "a step turns block tiles off";
  // a GPU that gives a block 227 KiB (an H100 or H200): the 4-stage tiling too
  GpuKnobs big = GpuKnobs::defaults(true);
  big.shared_limit = 227 << 10;
  std::unique_ptr<BeamSpace> wide = gpu_beam_space(ast, big);
  tilings.clear();
  for (const std::vector<Opt>& o : wide->next(wide->starts()[0]))
    if (o.size() == 1 && o[0].kind == OptKind::BLOCK_MMA) tilings.insert(o[0].amount);
  EXPECT_EQ(tilings, (std::set<int>{0, 1, 2, 9}));
  // and with wgmma (sm_90a), x @ W^T of 256 x 256 x 128: the wgmma tilings too
  Matmul nt{1, 256, 256, 128, dtypes::bfloat16, false, false, true};
  Schedule s2 = create_schedule(matmul_graph("CPU", nt));
  GpuKnobs h200 = GpuKnobs::defaults(true, true);
  h200.shared_limit = 227 << 10;
  std::unique_ptr<BeamSpace> sm90a = gpu_beam_space(s2.items.at(0).ast, h200);
  tilings.clear();
  for (const std::vector<Opt>& o : sm90a->next(sm90a->starts()[0]))
    if (o.size() == 1 && o[0].kind == OptKind::BLOCK_MMA) tilings.insert(o[0].amount);
  EXPECT_TRUE(tilings.count(10) && tilings.count(11)) << tilings.size();
}

// MBARRIER_WATCHDOG_MS reaches the kernels' waits through an NVRTC option (and so the cache key):
// none at the default 2000 ms, the limit in ns otherwise, and a limit no wait reaches for 0.
TEST_F(BlockMma, MbarrierWatchdogMsSetsTheWaitsLimit) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  Schedule s = create_schedule(matmul_graph("CPU", {1, 256, 256, 128, dtypes::bfloat16, false, false, true}));
  const std::string src =
      CudaRenderer().render(lower_kernel(s.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, 12}}));
  auto ptx_and_key = [&](const char* ms) {
    if (ms)
      setenv("MBARRIER_WATCHDOG_MS", ms, 1);
    else
      unsetenv("MBARRIER_WATCHDOG_MS");
    config_reload();
    NvrtcCompiler c("compute_90a");
    std::vector<uint8_t> ptx = c.compile(src);
    return std::make_pair(std::string(ptx.begin(), ptx.end()), c.key());
  };
  auto [ptx, key] = ptx_and_key(nullptr);
  EXPECT_EQ(key.find("LG_MBARRIER_WATCHDOG_NS"), std::string::npos) << key;
  EXPECT_NE(ptx.find("2000000000;"), std::string::npos);  // setp.lt.u64 p, t, 2000000000;
  std::tie(ptx, key) = ptx_and_key("500");
  EXPECT_NE(key.find("-DLG_MBARRIER_WATCHDOG_NS=500000000ull"), std::string::npos) << key;
  EXPECT_NE(ptx.find("500000000;"), std::string::npos);
  EXPECT_EQ(ptx.find("2000000000;"), std::string::npos);
  std::tie(ptx, key) = ptx_and_key("0");
  EXPECT_NE(key.find("-DLG_MBARRIER_WATCHDOG_NS=18446744073709551615ull"), std::string::npos) << key;
  EXPECT_NE(ptx.find("-1;"), std::string::npos);  // the largest u64, as PTX prints it
  setenv("MBARRIER_WATCHDOG_MS", "-3", 1);
  EXPECT_NE(testing_util::error_of([] { config_reload(); }).find("MBARRIER_WATCHDOG_MS"), std::string::npos);
  unsetenv("MBARRIER_WATCHDOG_MS");
  config_reload();
}

TEST_F(BlockMma, NvrtcCompilesItWithAsyncCopiesLdmatrixAndMma) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  for (bool a_t : {false, true})
    for (bool b_t : {false, true}) {
      Matmul c{1, 128, 128, 64, dtypes::bfloat16, false, a_t, b_t};
      SCOPED_TRACE(label(c));
      Schedule s = create_schedule(matmul_graph("CPU", c));
      std::string src = CudaRenderer().render(lower_kernel(s.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, 0}}));
      std::vector<uint8_t> cubin = NvrtcCompiler("sm_90").compile(src);
      ASSERT_GE(cubin.size(), 4u);
      EXPECT_EQ(std::string(cubin.begin(), cubin.begin() + 4), "\x7f" "ELF");
      std::vector<uint8_t> ptx = NvrtcCompiler("compute_80").compile(src);
      std::string text(ptx.begin(), ptx.end());
      for (const char* insn : {"cp.async.cg.shared.global", "cp.async.wait_group", "mma.sync.aligned.m16n8k16.row.col.f32.bf16",
                               a_t ? "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" : "ldmatrix.sync.aligned.m8n8.x4.shared.b16"})
        EXPECT_NE(text.find(insn), std::string::npos) << insn;
    }
  // the tilings past 48 KiB (BEAM's and BLOCK_MMA_TILE's; 8 warps: 256 threads per block)
  Schedule s = create_schedule(matmul_graph("CPU", {1, 256, 256, 128, dtypes::bfloat16}));
  for (int tiling : {4, 5, 6, 7, 8, 9}) {
    std::vector<uint8_t> cubin =
        NvrtcCompiler("sm_90").compile(CudaRenderer().render(lower_kernel(s.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, tiling}})));
    EXPECT_EQ(std::string(cubin.begin(), cubin.begin() + 4), "\x7f" "ELF") << "tiling " << tiling;
  }
  // the wgmma tilings, for sm_90a (bf16 and fp16; x @ W^T, K-major operands, and a^T @ b, both
  // MN-major: the instruction's transpose immediates 0, 0 and 1, 1 after the scales 1, 1)
  for (DType t : {dtypes::bfloat16, dtypes::float16})
    for (bool a_t : {false, true}) {
      Schedule nt = create_schedule(matmul_graph("CPU", {1, 256, 256, 128, t, false, a_t, !a_t}));
      for (int tiling : {10, 11, 12, 13, 14, 15, 16}) {
        SCOPED_TRACE(str(name(t), " tiling ", tiling, a_t ? " a^T @ b" : " a @ W^T"));
        std::string src = CudaRenderer().render(lower_kernel(nt.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, tiling}}));
        std::vector<uint8_t> cubin = NvrtcCompiler("sm_90a").compile(src);
        EXPECT_EQ(std::string(cubin.begin(), cubin.begin() + 4), "\x7f" "ELF");
        std::vector<uint8_t> ptx = NvrtcCompiler("compute_90a").compile(src);
        std::string text(ptx.begin(), ptx.end());
        // tilings 13-15 copy by TMA (no generic-proxy writes to fence), the others by cp.async
        std::vector<std::string> insns{str("wgmma.mma_async.sync.aligned.m64n", tiling == 11 ? 128 : 256,
                                           "k16.f32.", t == dtypes::bfloat16 ? "bf16" : "f16"),
                                       a_t ? "p, 1, 1, 1, 1;" : "p, 1, 1, 0, 0;", "wgmma.fence.sync.aligned",
                                       "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned"};
        if (tiling >= 13)
          insns.insert(insns.end(),
                       {"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                        "mbarrier.arrive.expect_tx.shared::cta.b64"});
        else
          insns.insert(insns.end(), {"fence.proxy.async.shared::cta", "cp.async.cg.shared.global"});
        for (const std::string& insn : insns) EXPECT_NE(text.find(insn), std::string::npos) << insn;
        if (tiling < 12) continue;
        // the warp-specialized one's hand-over through mbarriers, its 384 threads, and the waits'
        // watchdog (a wait past its limit by the GPU's clock traps)
        for (const char* insn : {"mbarrier.init.shared::cta.b64", "fence.mbarrier_init.release.cluster",
                                 "mbarrier.try_wait.parity.shared::cta.b64", ".maxntid 384", "%globaltimer",
                                 "setp.lt.u64", "trap;"})
          EXPECT_NE(text.find(insn), std::string::npos) << insn;
        // the cluster's: its 2 blocks, their barrier, B's half multicast into both, the releases
        // reaching the other block's mbarriers
        std::vector<std::string> own{"mbarrier.arrive.shared::cta.b64"},
            cluster{".maxntid 384, 1, 1\n.explicitcluster\n.reqnctapercluster 2, 1, 1",
                    "%cluster_ctarank",
                    "barrier.cluster.arrive.release.aligned",
                    "barrier.cluster.wait.acquire.aligned",
                    "mapa.shared::cluster.u32",
                    "mbarrier.arrive.release.cluster.shared::cluster.b64",
                    "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64",
                    "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::"
                    "cluster"};
        for (const std::string& insn : tiling >= 15 ? cluster : own)
          EXPECT_NE(text.find(insn), std::string::npos) << insn;
      }
    }
}

}  // namespace
}  // namespace lg
