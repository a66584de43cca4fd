// Tensor cores (Opt TC, codegen/tensor_core.h): the fragment layout, the heuristic's choice, and
// matmuls of several shapes run three ways against a float64 reference: the CUDA source on CPU
// threads with mma.sync emulated per warp from the PTX ISA's layout (tests/runtime/cuda_emulation.h:
// a wrong fragment layout in the renderer fails here), the C program CUDACHECK runs, and CUDACHECK
// itself; NVRTC compiles the kernels for sm_80 and sm_90. Nothing here ran on a GPU.
//
// Inputs are multiples of 1/8 (|x| <= 1.5), exact in bf16 and fp16, so every product and partial
// sum is exact in float32 and the reference is exact; real mma.sync sums in its own order and
// rounding (ops.def defines WMMA's order for the CPU), hence the tolerance on the comparisons.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>

#include "base/config.h"
#include "base/error.h"
#include "codegen/gpu_launch.h"
#include "codegen/heuristic_gpu.h"
#include "codegen/heuristic_tc.h"
#include "codegen/program.h"
#include "codegen/render_cuda.h"
#include "codegen/render_hip.h"
#include "codegen/smem.h"
#include "codegen/tensor_core.h"
#include "ir/build.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/symbolic.h"
#include "common/cache_dir.h"
#include "runtime/beam.h"
#include "runtime/buffer.h"
#include "runtime/compile_check.h"
#include "runtime/cpu.h"
#include "runtime/device.h"
#include "runtime/interp.h"
#include "runtime/cuda_emulation.h"
#include "runtime/tensor_core_util.h"
#include "runtime/nvrtc.h"
#include "runtime/program_build.h"
#include "runtime/realize.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

using namespace tc_testing;

const std::vector<Matmul>& shapes() {
  static const std::vector<Matmul> all = {
      {1, 16, 8, 16, dtypes::bfloat16},    // one tile, one warp
      {1, 64, 64, 64, dtypes::bfloat16},   // 2x4 tiles per warp, 2x2 warps
      {1, 128, 96, 256, dtypes::float16},  // 3 column blocks of 32, 16 k steps
      {1, 20, 24, 40, dtypes::bfloat16},   // m and k padded (to 32 and 48)
      {1, 36, 20, 16, dtypes::float16},    // m and n padded (to 48 and 24)
      {3, 32, 48, 32, dtypes::bfloat16},   // batched: a grid axis
      {1, 64, 32, 48, dtypes::bfloat16, true},  // the result cast back to bf16, as Tensor::matmul does
      {2, 128, 128, 96, dtypes::bfloat16},  // batched, 2 x 2 blocks of 64 x 64, 6 k steps through shared memory
  };
  return all;
}

TEST(TensorCore, FragmentLayoutsCoverEachTileOnce) {
  struct Case {
    TcOperand op;
    int rows, cols;
  };
  for (Case c : {Case{TcOperand::A, 16, 16}, Case{TcOperand::B, 16, 8}, Case{TcOperand::C, 16, 8}}) {
    std::vector<int> seen(c.rows * c.cols, 0);
    for (int64_t lane = 0; lane < 32; lane++)
      for (int j = 0; j < tc_fragment_size(c.op); j++) {
        int64_t r = tc_place(c.op, true, lane, j), col = tc_place(c.op, false, lane, j);
        ASSERT_TRUE(r >= 0 && r < c.rows && col >= 0 && col < c.cols);
        seen[r * c.cols + col]++;
      }
    for (int s : seen) EXPECT_EQ(s, 1);
  }
  // PTX ISA examples: lane 5 (g 1, t 1) holds A's a5 at row 1, column 11, and D's c2 at row 9, column 2.
  EXPECT_EQ(tc_place(TcOperand::A, true, 5, 5), 1);
  EXPECT_EQ(tc_place(TcOperand::A, false, 5, 5), 11);
  EXPECT_EQ(tc_place(TcOperand::B, true, 5, 3), 11);
  EXPECT_EQ(tc_place(TcOperand::B, false, 5, 3), 1);
  EXPECT_EQ(tc_place(TcOperand::C, true, 5, 2), 9);
  EXPECT_EQ(tc_place(TcOperand::C, false, 5, 2), 2);
}

bool has_tc(const std::vector<Opt>& opts) {
  for (const Opt& o : opts)
    if (o.kind == OptKind::TC) return true;
  return false;
}

TEST(TensorCoreHeuristic, HalfPrecisionMatmulsGetTensorCoresFloat32AndHipDoNot) {
  auto opts = [](const Matmul& c, bool tensor_cores) {
    Schedule s = create_schedule(matmul_graph("CPU", c));
    return gpu_heuristic_opts(s.items.at(0).ast, tensor_cores);
  };
  for (DType t : {dtypes::bfloat16, dtypes::float16}) {
    std::vector<Opt> o = opts({1, 64, 64, 64, t}, true);
    EXPECT_TRUE(has_tc(o)) << to_string(o);
    EXPECT_FALSE(has_tc(opts({1, 64, 64, 64, t}, false))) << "HIP (no tensor cores)";
  }
  EXPECT_FALSE(has_tc(opts({1, 64, 64, 64, dtypes::float32}, true)));
  EXPECT_FALSE(has_tc(opts({1, 4, 64, 64, dtypes::bfloat16}, true))) << "m below one tile";
  std::vector<Opt> padded = opts({1, 20, 24, 40, dtypes::bfloat16}, true);
  // axes (m, n, k): the batch axis of 1 folds away
  EXPECT_EQ(padded.at(0), (Opt{OptKind::PADTO, 0, 16})) << to_string(padded);
  EXPECT_EQ(padded.at(1), (Opt{OptKind::PADTO, 2, 16})) << to_string(padded);
  EXPECT_EQ(padded.at(2), (Opt{OptKind::TC, 0, 0})) << to_string(padded);
}

TEST(TensorCoreHeuristic, OnlyCudaArchitecturesFromSm80AndTcOn) {
  EXPECT_TRUE(cuda_tensor_cores("sm_90"));
  EXPECT_TRUE(cuda_tensor_cores("compute_80"));
  EXPECT_FALSE(cuda_tensor_cores("sm_75"));
  setenv("TC", "0", 1);
  config_reload();
  EXPECT_FALSE(cuda_tensor_cores("sm_90"));
  unsetenv("TC");
  config_reload();
  EXPECT_TRUE(cuda_tensor_cores("sm_90"));
}

TEST(TensorCore, UndividedAxesAreAnOptError) {
  Schedule s = create_schedule(matmul_graph("CPU", {1, 20, 24, 40, dtypes::bfloat16}));
  EXPECT_THROW(lower_kernel(s.items[0].ast, "k", {{OptKind::TC, 0}}), OptError);
  Schedule f = create_schedule(matmul_graph("CPU", {1, 32, 32, 32, dtypes::float32}));
  EXPECT_THROW(lower_kernel(f.items[0].ast, "k", {{OptKind::TC, 0}}), OptError);
}

TEST(TensorCoreDeathTest, HipAndTheInterpreterRefuseWmma) {
  Schedule s = create_schedule(matmul_graph("CPU", {1, 16, 8, 16, dtypes::bfloat16}));
  LinearProgram p = tc_program(s.items[0]);
  EXPECT_DEATH(HipRenderer().render(p), "HIP renderer has no tensor cores");
  EXPECT_DEATH(get_device("INTERP").load(p, "", {}), "interp: kernel .* (has WMMA|stages tiles in shared memory)");
}

TEST(TensorCore, WarpsAreWholeAndTheLaneVariesFastest) {
  Schedule s = create_schedule(matmul_graph("CPU", {1, 64, 64, 64, dtypes::bfloat16}));
  LaunchDims d = gpu_launch_dims(tc_program(s.items[0]));
  EXPECT_EQ(d.threads, 128);  // 2 x 2 warps, each 32 x 32 outputs (2 x 4 tiles)
  EXPECT_EQ(d.blocks, 1);
  const GpuAxis& last = d.axes.back();
  EXPECT_TRUE(last.local && last.size == 32 && last.stride == 1);
}

TEST(TensorCoreEmulation, MatmulsMatchTheReference) {
  for (const Matmul& c : shapes()) {
    SCOPED_TRACE(label(c));
    expect_close(run_tc(c, Run::EmulatedCuda), reference(c), c.out16 ? 1e-2 : 1e-5, "emulated CUDA");
  }
}

TEST(TensorCoreEmulation, CudaSourceAndCProgramAgreeBitForBit) {
  for (const Matmul& c : shapes()) {
    SCOPED_TRACE(label(c));
    std::vector<float> c_program = run_tc(c, Run::CProgram);
    expect_close(c_program, reference(c), c.out16 ? 1e-2 : 1e-5, "C program");
    EXPECT_EQ(run_tc(c, Run::EmulatedCuda), c_program);
  }
}


TEST(TensorCoreEmulation, TheDefaultTilingMatchesTheReference) {
  unsetenv("TC_WARP");
  config_reload();
  EXPECT_EQ(config().tc_warp_m, 4);
  EXPECT_EQ(config().tc_warp_n, 8);
  for (const Matmul& c : {Matmul{2, 128, 128, 96, dtypes::bfloat16}, Matmul{1, 64, 64, 32, dtypes::float16, true}}) {
    SCOPED_TRACE(label(c));
    Schedule s = create_schedule(matmul_graph("CPU", c));
    LaunchDims d = gpu_launch_dims(tc_program(s.items.at(0)));
    EXPECT_EQ(d.threads, c.m == 128 ? 128 : 32);  // 64 x 64 outputs per warp: 2 x 2 warps, or one
    std::vector<float> cuda = run_tc(c, Run::EmulatedCuda);
    expect_close(cuda, reference(c), c.out16 ? 1e-2 : 1e-5, "emulated CUDA");
    EXPECT_EQ(cuda, run_tc(c, Run::CProgram));
  }
  setenv("TC_WARP", "2x4", 1);
  config_reload();
}

// --- Sums of products: one reduction over k of x1*y1 + x2*y2 (the backward of a tensor two
// matmuls read) becomes a chain of two mmas per tile and k step ---

TEST(TensorCoreEmulation, ASumOfTwoProductsIsAChainOfTwoMmas) {
  const int64_t M = 64, N = 32, K = 48;
  std::vector<float> results[2];
  for (enum Run how : {Run::EmulatedCuda, Run::CProgram}) {
    Schedule s = create_schedule(two_products_graph(M, N, K));
    ASSERT_EQ(s.items.size(), 1u);
    const ScheduleItem& item = s.items[0];
    std::vector<Opt> opts = gpu_heuristic_opts(item.ast, true);
    ASSERT_TRUE(has_tc(opts)) << to_string(opts);
    for (const Opt& o : opts) EXPECT_NE(o.kind, OptKind::SMEM) << "staging reads one A and one B per k step";
    LinearProgram p = lower_kernel(item.ast, item.name, opts);
    // chained: some mma adds into another's D (after fuse_wmma_accumulate the first adds into the
    // accumulators), and twice the WMMAs of one product
    int chained = 0;
    for (const NodeRef& x : p.ops) chained += x->op == Op::WMMA && x->src[13]->op == Op::WMMA;
    EXPECT_GT(chained, 0) << to_string(p);
    EXPECT_EQ(wmma_count(p) % 8, 0);
    run_program(p, item, how);
    results[how == Run::CProgram] = read(s.outputs.at(0), dtypes::float32);
    expect_close(results[how == Run::CProgram], two_products_reference(M, N, K), 1e-5, how == Run::CProgram ? "C program" : "emulated CUDA");
  }
  EXPECT_EQ(results[0], results[1]);
}

TEST(TensorCoreHeuristic, ASplitReductionUsesItsInnerAxisAsK) {
  // out (m, n) = sum over (k1, k2) of a (m, k1, k2) * b (k1, k2, n): k2 (32) is contiguous in a
  const int64_t M = 32, N = 16, K1 = 3, K2 = 32;
  DType t = dtypes::bfloat16, f = dtypes::float32;
  NodeRef a = make(Op::RESHAPE, t, {filled("CPU", t, M * K1 * K2, a_value)}, Shape{M, 1, K1, K2});
  NodeRef b = make(Op::RESHAPE, t, {filled("CPU", t, K1 * K2 * N, b_value)}, Shape{K1, K2, N});
  NodeRef bt = make(Op::RESHAPE, t, {make(Op::PERMUTE, t, {b}, Shape{2, 0, 1})}, Shape{1, N, K1, K2});
  NodeRef x = cast(make(Op::EXPAND, t, {a}, Shape{M, N, K1, K2}), f);
  NodeRef y = cast(make(Op::EXPAND, t, {bt}, Shape{M, N, K1, K2}), f);
  NodeRef sum = make(Op::RESHAPE, f, {make(Op::REDUCE_AXIS, f, {x * y}, ReduceArg{Op::ADD, {2, 3}})}, Shape{M, N});
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {sum}));
  const ScheduleItem& item = s.items.at(0);
  std::vector<Opt> opts = gpu_heuristic_opts(item.ast, true);
  std::vector<TcAxes> cands = tc_candidates(rewrite(item.ast, pm_symbolic(), {.name = "initial symbolic"}));
  ASSERT_EQ(cands.size(), 2u) << "k1 or k2";
  const Opt* tc = nullptr;
  for (const Opt& o : opts) tc = o.kind == OptKind::TC ? &o : tc;
  ASSERT_NE(tc, nullptr) << to_string(opts);
  EXPECT_EQ(cands.at(tc->axis).k, std::max(cands[0].k, cands[1].k)) << to_string(opts);
  LinearProgram p = lower_kernel(item.ast, item.name, opts);
  KernelArgs args;
  for (const NodeRef& buf : item.buffers) {
    args.buffers.push_back(buffer_memory(*buf).ptr);
    args.sizes.push_back(buf->numel());
  }
  build_program(*make_checking_cpu_device("CPU"), p).program->run(args);
  std::vector<double> want(M * N, 0.0);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++)
      for (int64_t q = 0; q < K1 * K2; q++) want[i * N + j] += double(a_value(i * K1 * K2 + q)) * b_value(q * N + j);
  expect_close(read(s.outputs.at(0), f), want, 1e-5, "C program");
}

// --- Opt SMEM: the A and B tiles of each k step staged in shared memory (codegen/smem.h) ---

int op_count(const LinearProgram& p, Op op) {
  int n = 0;
  for (const NodeRef& x : p.ops) n += x->op == op;
  return n;
}

// Loads from kernel arguments (global memory) in the program's text.
int global_loads(const LinearProgram& p) {
  int n = 0;
  for (const NodeRef& x : p.ops) n += x->op == Op::LOAD && x->src[0]->src[0]->op == Op::DEFINE_GLOBAL;
  return n;
}

// Runs f with SMEM set to value, then restores this binary's setting (SMEM=1, below).
template <class F>
auto with_smem(const char* value, F f) {
  setenv("SMEM", value, 1);
  config_reload();
  auto r = f();
  setenv("SMEM", "1", 1);
  config_reload();
  return r;
}

// These tests run with staging on (opt-in, SMEM=1) and the tiling they were written for, 2 x 4 mma
// tiles per warp (the default is 4 x 8: TensorCoreEmulation.TheDefaultTilingMatchesTheReference),
// and without block-tiled matmuls (BLOCK_MMA=0; block_mma_test.cpp turns them on), so Opt TC gets
// the matmuls they check.
struct SmemOn : ::testing::Environment {
  void SetUp() override {
    setenv("BLOCK_MMA", "0", 1);
    setenv("SMEM", "1", 1);
    setenv("TC_WARP", "2x4", 1);
    config_reload();
  }
};
[[maybe_unused]] const auto* const smem_on = ::testing::AddGlobalTestEnvironment(new SmemOn);

TEST(TensorCoreSmemHeuristic, HalfPrecisionMatmulsAreStagedAndSmemZeroTurnsItOff) {
  for (DType t : {dtypes::bfloat16, dtypes::float16}) {
    Schedule s = create_schedule(matmul_graph("CPU", {1, 64, 64, 64, t}));
    std::vector<Opt> o = gpu_heuristic_opts(s.items.at(0).ast, true);
    EXPECT_EQ(o.back(), (Opt{OptKind::SMEM, 0, 0})) << to_string(o);
    LinearProgram p = tc_program(s.items.at(0));
    // A: 64 x 16, B: 16 x 64 (2 x 2 warps of 2 x 4 tiles), 2 bytes each, well inside 48 KiB
    EXPECT_EQ(op_count(p, Op::DEFINE_LOCAL), 2);
    int64_t bytes = 0;
    for (const NodeRef& x : p.ops)
      if (x->op == Op::DEFINE_LOCAL) {
        bytes += x->get_arg<BufferArg>().size * 2;
      }
    EXPECT_EQ(bytes, (64 * 16 + 16 * 64) * 2);
    EXPECT_LE(bytes, kSharedMemoryBytes);
    std::vector<Opt> off = with_smem("0", [&] { return gpu_heuristic_opts(s.items.at(0).ast, true); });
    EXPECT_TRUE(has_tc(off));
    for (const Opt& x : off) {
      EXPECT_NE(x.kind, OptKind::SMEM) << to_string(off);
    }
    LinearProgram q = with_smem("0", [&] { return tc_program(s.items.at(0)); });
    EXPECT_EQ(op_count(q, Op::DEFINE_LOCAL), 0);
    // every fragment value is read from global memory once per block and k step, not once per
    // warp that uses it: fewer global loads in the thread's code
    EXPECT_LT(global_loads(p), global_loads(q)) << to_string(p);
  }
  Schedule f = create_schedule(matmul_graph("CPU", {1, 64, 64, 64, dtypes::float32}));
  for (const Opt& x : gpu_heuristic_opts(f.items.at(0).ast, true)) {
    EXPECT_NE(x.kind, OptKind::SMEM);
  }
}

TEST(TensorCoreSmem, SmemNeedsTcAndIsTheLastOpt) {
  Schedule s = create_schedule(matmul_graph("CPU", {1, 32, 32, 32, dtypes::bfloat16}));
  EXPECT_THROW(lower_kernel(s.items[0].ast, "k", {{OptKind::SMEM, 0}}), OptError);
  EXPECT_THROW(lower_kernel(s.items[0].ast, "k", {{OptKind::TC, 0}, {OptKind::SMEM, 0}, {OptKind::GLOBAL, 0}}), OptError);
  EXPECT_THROW(lower_kernel(s.items[0].ast, "k", {{OptKind::TC, 0}, {OptKind::SMEM, 0}, {OptKind::SMEM, 0}}), OptError);
  LinearProgram p = lower_kernel(s.items[0].ast, "k", {{OptKind::TC, 0}, {OptKind::SMEM, 0}});
  EXPECT_EQ(op_count(p, Op::DEFINE_LOCAL), 2);
}

// The k loop holds, per operand: a barrier, the COOP copy loop, a barrier; then the mmas read the
// tiles. In the CUDA source: __shared__ arrays, the copy strided over the block's threads.
TEST(TensorCoreSmem, CopyLoopsSitBetweenBarriersInsideTheKLoop) {
  Schedule s = create_schedule(matmul_graph("CPU", {1, 64, 64, 64, dtypes::bfloat16}));
  LinearProgram p = tc_program(s.items.at(0));
  EXPECT_EQ(op_count(p, Op::BARRIER), 4) << to_string(p);
  int depth = 0, reduce_depth = -1, coop = 0;
  for (size_t i = 0; i < p.ops.size(); i++) {
    const Node& n = *p.ops[i];
    if (n.op == Op::RANGE && n.get_arg<RangeArg>().type == AxisType::REDUCE) reduce_depth = depth;
    if (n.op == Op::RANGE && n.get_arg<RangeArg>().type == AxisType::COOP) {
      coop++;
      EXPECT_EQ(depth, reduce_depth + 1) << "copy loop outside the k loop";
      size_t b = i;  // the op before the loop, past the loop bound's constant
      while (b > 0 && p.ops[b - 1]->op == Op::CONST) b--;
      ASSERT_GT(b, 0u);
      EXPECT_EQ(p.ops[b - 1]->op, Op::BARRIER) << "no barrier before the copy";
    }
    if (n.op == Op::RANGE) depth++;
    if (n.op == Op::END) depth--;
    if (n.op == Op::WMMA) {
      EXPECT_GT(coop, 0) << "an mma before the copy";
    }
  }
  EXPECT_EQ(coop, 2);
  std::string src = CudaRenderer().render(p);
  EXPECT_NE(src.find("__shared__ lg_bf16_t lg_smem0[1024];"), std::string::npos) << src;
  EXPECT_NE(src.find("__shared__ lg_bf16_t lg_smem1[1024];"), std::string::npos) << src;
  EXPECT_NE(src.find("= lg_t; "), std::string::npos) << src;
  EXPECT_NE(src.find(" += 128) {"), std::string::npos) << src;
  EXPECT_NE(src.find("__syncthreads();"), std::string::npos) << src;
}

TEST(TensorCoreSmemEmulation, StagedAndUnstagedKernelsAgreeBitForBit) {
  for (const Matmul& c : shapes()) {
    SCOPED_TRACE(label(c));
    std::vector<float> unstaged = with_smem("0", [&] { return run_tc(c, Run::EmulatedCuda); });
    std::vector<float> staged = run_tc(c, Run::EmulatedCuda);
    expect_close(staged, reference(c), c.out16 ? 1e-2 : 1e-5, "staged, emulated CUDA");
    EXPECT_EQ(staged, unstaged);
  }
}

#define SKIP_WITHOUT_NVRTC()                                          \
  do {                                                                \
    std::string why;                                                  \
    if (!nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;  \
  } while (0)

TEST(TensorCoreNvrtc, CompilesForSm80AndSm90WithMmaSync) {
  SKIP_WITHOUT_NVRTC();
  for (DType t : {dtypes::bfloat16, dtypes::float16}) {
    Schedule s = create_schedule(matmul_graph("CPU", {1, 64, 64, 64, t, true}));
    std::string src = CudaRenderer().render(tc_program(s.items[0]));
    std::string ty = t == dtypes::bfloat16 ? "bf16" : "f16";
    EXPECT_NE(src.find("lg_mma_m16n8k16_" + ty + "(lg_pack_" + ty + "x2("), std::string::npos) << src;
    EXPECT_NE(src.find("__shared__"), std::string::npos) << "staged tiles (Opt SMEM)";
    for (const char* arch : {"sm_80", "sm_90"}) {
      std::vector<uint8_t> cubin = NvrtcCompiler(arch).compile(src);
      ASSERT_GE(cubin.size(), 4u);
      EXPECT_EQ(std::string(cubin.begin(), cubin.begin() + 4), "\x7f" "ELF") << arch;
    }
    std::vector<uint8_t> ptx = NvrtcCompiler("compute_80").compile(src);
    std::string text(ptx.begin(), ptx.end());
    EXPECT_NE(text.find("mma.sync.aligned.m16n8k16.row.col.f32." + ty + "." + ty + ".f32"), std::string::npos);
  }
}

TEST(TensorCoreCudaCheck, MatmulOnCudaCheckUsesTensorCoresAndMatchesTheReference) {
  SKIP_WITHOUT_NVRTC();
  Matmul c{1, 48, 40, 80, dtypes::bfloat16};
  Schedule s = create_schedule(matmul_graph("CUDACHECK", c));
  ASSERT_TRUE(has_tc(get_device("CUDACHECK").heuristic_opts(s.items.at(0).ast)));
  std::vector<NodeRef> out = realize(matmul_graph("CUDACHECK", c));
  expect_close(read(out.at(0), dtypes::float32), reference(c), 1e-5, "CUDACHECK");
}

// The matmul's kernel with `opts`, run as emulated CUDA (float32 result).
std::vector<float> run_emulated_with(const Matmul& c, const std::vector<Opt>& opts) {
  Schedule s = create_schedule(matmul_graph("CPU", c));
  const ScheduleItem& item = s.items.at(0);
  std::vector<void*> bufs;
  for (const NodeRef& b : item.buffers) bufs.push_back(buffer_memory(*b).ptr);
  testing_util::emulate_cuda(lower_kernel(item.ast, item.name, opts), bufs);
  return read(s.outputs.at(0), dtypes::float32);
}

int count_kind(const std::vector<Opt>& opts, OptKind k) {
  return static_cast<int>(std::count_if(opts.begin(), opts.end(), [&](const Opt& o) { return o.kind == k; }));
}

// BEAM on a CUDA device considers tensor cores (runtime/beam.h): a bf16 matmul's space starts from
// the heuristic's list (tensor cores), the list without them and the smallest tiling (one tile per
// warp, one warp per block); one step from the smallest doubles the warp's tiles or the block's
// warps, or stages the tiles in shared memory. Each of those lists, run as emulated CUDA,
// computes the matmul.
TEST(TensorCoreBeam, AHalfPrecisionMatmulIsSearchedWithAndWithoutTensorCores) {
  Matmul c{1, 64, 64, 32, dtypes::bfloat16};
  Schedule s = create_schedule(matmul_graph("CPU", c));
  const NodeRef& ast = s.items.at(0).ast;
  std::unique_ptr<BeamSpace> space = gpu_beam_space(ast, GpuKnobs::defaults(true));
  std::vector<std::vector<Opt>> starts = space->starts();
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_EQ(starts[0], gpu_heuristic_opts(ast, true));
  EXPECT_TRUE(has_tc(starts[0]));
  EXPECT_FALSE(has_tc(starts[1])) << to_string(starts[1]);
  ASSERT_TRUE(has_tc(starts[2]));
  EXPECT_EQ(count_kind(starts[2], OptKind::UPCAST) + count_kind(starts[2], OptKind::LOCAL) + count_kind(starts[2], OptKind::SMEM), 0)
      << to_string(starts[2]);
  std::vector<std::vector<Opt>> lists = {starts[1], starts[2]};
  bool warp_tile = false, block = false, staged = false;
  for (const std::vector<Opt>& o : space->next(starts[2])) {
    if (!has_tc(o)) continue;
    warp_tile |= count_kind(o, OptKind::UPCAST) == 1;
    block |= count_kind(o, OptKind::LOCAL) == 1;
    staged |= count_kind(o, OptKind::SMEM) == 1;
    lists.push_back(o);
  }
  EXPECT_TRUE(warp_tile && block && staged);
  for (const std::vector<Opt>& o : lists) expect_close(run_emulated_with(c, o), reference(c), 1e-5, to_string(o));
}

// BEAM=n on CUDACHECK searches the GPU space: every candidate compiled by NVRTC and timed as its C
// program. Its choice computes the matmul, and a second search is answered by the disk cache.
TEST(TensorCoreCudaCheck, BeamSearchesTheGpuSpaceAndItsChoiceComputesTheMatmul) {
  SKIP_WITHOUT_NVRTC();
  testing_util::CacheDir dir;
  Matmul c{1, 32, 32, 32, dtypes::bfloat16};
  Schedule s = create_schedule(matmul_graph("CUDACHECK", c));
  const ScheduleItem& item = s.items.at(0);
  Device& dev = get_device("CUDACHECK");
  ASSERT_NE(dev.beam_space(item.ast), nullptr);
  EXPECT_EQ(get_device("CUDANULL").beam_space(item.ast), nullptr) << "nothing runs there to time";
  size_t loaded = compile_checked_kernels();
  std::vector<Opt> opts = beam_search(dev, item, 2);
  EXPECT_GE(compile_checked_kernels() - loaded, 3u) << "at least the three starts were built";
  loaded = compile_checked_kernels();
  EXPECT_EQ(beam_search(dev, item, 2), opts);
  EXPECT_EQ(compile_checked_kernels(), loaded) << "the second search came from the disk cache";
  KernelArgs args;
  for (const NodeRef& b : item.buffers) {
    args.buffers.push_back(buffer_memory(*b).ptr);
    args.sizes.push_back(b->numel());
  }
  build_program(dev, lower_kernel(item.ast, item.name, opts)).program->run(args);
  expect_close(read(s.outputs.at(0), dtypes::float32), reference(c), 1e-5, "BEAM's choice " + to_string(opts));
}

}  // namespace
}  // namespace lg
