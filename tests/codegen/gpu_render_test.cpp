// The GPU heuristic, launch geometry and the CUDA/HIP renderers on hand-built kernel ASTs. Compiling
// the source is tests/runtime/gpu_compile_test.cpp's (NVRTC, hipcc live in the runtime layer).
#include <gtest/gtest.h>

#include <algorithm>

#include "codegen/gpu_launch.h"
#include "codegen/heuristic_gpu.h"
#include "codegen/program.h"
#include "codegen/render_cuda.h"
#include "codegen/render_hip.h"
#include "ir/build.h"

namespace lg {
namespace {

NodeRef global(int64_t slot, DType t) { return make(Op::DEFINE_GLOBAL, t.as_ptr(), {}, slot); }
NodeRef load(int64_t slot, DType t, const NodeRef& idx) {
  return make(Op::LOAD, t, {make(Op::INDEX, t.as_ptr(), {global(slot, t), idx})});
}
NodeRef store(DType t, const NodeRef& idx, const NodeRef& v) {
  return make(Op::STORE, dtypes::void_, {make(Op::INDEX, t.as_ptr(), {global(0, t), idx}), v});
}
NodeRef sink(const NodeRef& st) { return make(Op::SINK, dtypes::void_, {st}); }

// out[r0, r1] = in[r0, r1] * 2 over (rows, cols), dtype t.
NodeRef scale_kernel(int64_t rows, int64_t cols, DType t = dtypes::float32) {
  NodeRef r0 = range(rows, 0, AxisType::LOOP), r1 = range(cols, 1, AxisType::LOOP);
  NodeRef idx = r0 * cols + r1;
  NodeRef two = cnst(t, 2.0);
  return sink(store(t, idx, load(1, t, idx) * two));
}

// out[i, j] = sum_k a[i, k] * b[k, j]: (n, k) x (k, m).
NodeRef matmul_kernel(int64_t n, int64_t k, int64_t m) {
  NodeRef i = range(n, 0, AxisType::LOOP), j = range(m, 1, AxisType::LOOP), r = range(k, 2, AxisType::REDUCE);
  DType f = dtypes::float32;
  NodeRef prod = load(1, f, i * k + r) * load(2, f, r * m + j);
  NodeRef red = make(Op::REDUCE, f, {prod, r}, Op::ADD);
  return sink(store(f, i * m + j, red));
}

LinearProgram lower_gpu(const NodeRef& ast) { return lower_kernel(ast, "k", gpu_heuristic_opts(ast)); }

TEST(GpuHeuristic, ElementwiseKernelFillsABlockAlongTheContiguousAxis) {
  LaunchDims d = gpu_launch_dims(lower_gpu(scale_kernel(64, 512)));
  EXPECT_EQ(d.threads, kGpuBlockThreads);
  EXPECT_EQ(d.blocks * d.threads, 64 * 512);  // every element once, no padding needed
  // The thread axis with stride 1 (neighbouring threads) is the contiguous column axis.
  const GpuAxis* fastest = nullptr;
  for (const GpuAxis& a : d.axes)
    if (a.local && a.stride == 1) fastest = &a;
  ASSERT_NE(fastest, nullptr);
  EXPECT_EQ(fastest->size, 256);
}

TEST(GpuHeuristic, AxisWithoutLargeDivisorIsPaddedToAWarpMultiple) {
  LinearProgram p = lower_gpu(scale_kernel(3, 300));
  LaunchDims d = gpu_launch_dims(p);
  EXPECT_EQ(d.blocks * d.threads % 32, 0);
  EXPECT_GE(d.blocks * d.threads, 3 * 320);
  // The padded lanes are masked: the store is gated.
  std::string src = CudaRenderer().render(p);
  EXPECT_NE(src.find("if ("), std::string::npos) << src;
}

TEST(GpuHeuristic, ReductionGetsARegisterTileAndKeepsItsLoopInTheThread) {
  std::vector<Opt> opts = gpu_heuristic_opts(matmul_kernel(64, 32, 128));
  bool upcast = false;
  for (const Opt& o : opts) upcast = upcast || o.kind == OptKind::UPCAST;
  EXPECT_TRUE(upcast) << to_string(opts);
  LinearProgram p = lower_kernel(matmul_kernel(64, 32, 128), "k", opts);
  LaunchDims d = gpu_launch_dims(p);
  EXPECT_EQ(d.blocks * d.threads * 4, 64 * 128);  // 4 outputs per thread
  std::string src = CudaRenderer().render(p);
  EXPECT_NE(src.find("for (int32_t r2 = 0; r2 < "), std::string::npos) << src;
}

// out[i] = sum_k in[i, k] over (rows, cols).
NodeRef row_sum_kernel(int64_t rows, int64_t cols) {
  NodeRef i = range(rows, 0, AxisType::LOOP), k = range(cols, 1, AxisType::REDUCE);
  DType f = dtypes::float32;
  return sink(store(f, i, make(Op::REDUCE, f, {load(1, f, i * cols + k), k}, Op::ADD)));
}

TEST(GpuHeuristic, RowSumsAreSplitOverAGroupOfThreadsThatCombineInSharedMemory) {
  std::vector<Opt> opts = gpu_heuristic_opts(row_sum_kernel(8, 1024));
  EXPECT_NE(std::find(opts.begin(), opts.end(), Opt{OptKind::GROUPTOP, 1, 256}), opts.end()) << to_string(opts);
  LinearProgram p = lower_kernel(row_sum_kernel(8, 1024), "k", opts);
  LaunchDims d = gpu_launch_dims(p);
  EXPECT_EQ(d.threads, 256);
  EXPECT_EQ(d.blocks, 8);
  std::string src = CudaRenderer().render(p);
  EXPECT_NE(src.find("__shared__ float lg_red"), std::string::npos) << src;
  EXPECT_NE(src.find("__syncthreads();"), std::string::npos) << src;
  EXPECT_NE(src.find("if (((lg_t / 1ll) % 256ll) == 0) data0["), std::string::npos) << "the group's first thread stores:\n" << src;
  EXPECT_NE(src.find("__shfl_xor_sync(0xffffffffu, "), std::string::npos) << "warps combine by shuffles:\n" << src;
  std::string hip = HipRenderer().render(p);
  EXPECT_EQ(hip.find("__shfl"), std::string::npos) << "HIP combines through shared memory:\n" << hip;
  EXPECT_NE(hip.find("__shared__ float lg_red"), std::string::npos) << hip;
}

TEST(GpuHeuristic, FullReductionUsesOneBlockOfThreads) {
  NodeRef r = range(4096, 0, AxisType::REDUCE);
  DType f = dtypes::float32;
  NodeRef k = sink(store(f, index_const(0), make(Op::REDUCE, f, {load(1, f, r), r}, Op::ADD)));
  LaunchDims d = gpu_launch_dims(lower_gpu(k));
  EXPECT_EQ(d.blocks, 1);
  EXPECT_EQ(d.threads, 256);
}

TEST(GpuHeuristic, OptsApplyToKernelsOfEveryShape) {
  const int64_t sizes[] = {1, 2, 3, 7, 16, 31, 32, 33, 64, 96, 100, 255, 256, 300, 1000, 4096};
  for (int64_t a : sizes)
    for (int64_t b : sizes)
      for (const NodeRef& k : {scale_kernel(a, b), row_sum_kernel(a, b), matmul_kernel(a, 8, b), matmul_kernel(8, a, b)}) {
        std::vector<Opt> opts = gpu_heuristic_opts(k);
        LinearProgram p;
        EXPECT_NO_THROW(p = lower_kernel(k, "k", opts)) << a << " x " << b << ": " << to_string(opts);
        if (!p.ops.empty()) {
          EXPECT_LE(gpu_launch_dims(p).threads, kGpuBlockThreads);
        }
      }
}

TEST(GpuLaunch, MoreBlocksThanAGridRowMakesATwoDimensionalGridThatChecksItsBound) {
  int64_t rows = (int64_t{1} << 31) + 1;  // with 256 threads per block: > 2^31-1 blocks
  LinearProgram p = lower_kernel(scale_kernel(rows, 256), "k", {{OptKind::LOCAL, 1, 256}, {OptKind::GLOBAL, 0}});
  LaunchDims d = gpu_launch_dims(p);
  EXPECT_EQ(d.blocks, rows);
  EXPECT_GT(d.grid[1], 1u);
  EXPECT_GE(int64_t{d.grid[0]} * d.grid[1], rows);
  EXPECT_TRUE(d.grid_padded);
  std::string src = CudaRenderer().render(p);
  EXPECT_NE(src.find("if (lg_b >= " + std::to_string(rows) + "ll) return;"), std::string::npos);
  // Rows past 2^31: the row index and the element index stay 64-bit.
  EXPECT_NE(src.find("const int64_t r0 = lg_b;"), std::string::npos) << src;
}

TEST(CudaRenderer, IndexMathThatFits32BitsIsComputedIn32Bits) {
  std::string src = CudaRenderer().render(lower_gpu(scale_kernel(64, 512)));
  EXPECT_EQ(src.find("const int64_t r"), std::string::npos) << src;
  EXPECT_NE(src.find("const int32_t r"), std::string::npos) << src;
}

TEST(CudaRenderer, KernelIsAnExternCGlobalFunctionIndexedByBlockAndThread) {
  std::string src = CudaRenderer().render(lower_gpu(scale_kernel(64, 512)));
  EXPECT_NE(src.find("extern \"C\" __global__ void __launch_bounds__(256) lg_kernel(float* __restrict__ data0, "
                     "float* __restrict__ data1)"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("blockIdx.x"), std::string::npos);
  EXPECT_NE(src.find("threadIdx.x"), std::string::npos);
  EXPECT_EQ(src.find("for ("), std::string::npos) << "output axes are threads, not loops:\n" << src;
}

TEST(CudaRenderer, SixteenBitFloatsAreStoredAsCudaTypesAndRoundedAfterEachOp) {
  std::string bf = CudaRenderer().render(lower_gpu(scale_kernel(4, 64, dtypes::bfloat16)));
  EXPECT_NE(bf.find("#include <cuda_bf16.h>"), std::string::npos);
  EXPECT_NE(bf.find("lg_bf16_t* __restrict__ data0"), std::string::npos) << bf;
  EXPECT_NE(bf.find("lg_round_bf16("), std::string::npos) << bf;  // the MUL, rounded in float
  EXPECT_NE(bf.find("lg_f_to_bf16("), std::string::npos) << bf;   // the store
  std::string h = CudaRenderer().render(lower_gpu(scale_kernel(4, 64, dtypes::float16)));
  EXPECT_NE(h.find("lg_f16_t* __restrict__ data0"), std::string::npos) << h;
  EXPECT_NE(h.find("lg_round_f16("), std::string::npos) << h;
}

TEST(HipRenderer, SameKernelWithTheHipPrelude) {
  LinearProgram p = lower_gpu(scale_kernel(64, 512, dtypes::bfloat16));
  std::string hip = HipRenderer().render(p), cuda = CudaRenderer().render(p);
  EXPECT_NE(hip.find("#include <hip/hip_runtime.h>"), std::string::npos);
  EXPECT_EQ(hip.find("cuda_bf16.h"), std::string::npos);
  // Only the dialect's prelude differs.
  EXPECT_EQ(hip.substr(hip.find("extern \"C\"")), cuda.substr(cuda.find("extern \"C\"")));
}

}  // namespace
}  // namespace lg
