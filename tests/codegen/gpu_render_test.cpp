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

size_t occurrences(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) n++;
  return n;
}

TEST(GpuHeuristic, ElementwiseKernelFillsABlockAlongTheContiguousAxis) {
  // Each thread takes a run of 4 floats (16 bytes: one vector load and store).
  std::vector<Opt> opts = gpu_heuristic_opts(scale_kernel(64, 512));
  ASSERT_FALSE(opts.empty());
  EXPECT_EQ(opts[0], (Opt{OptKind::UPCAST, 1, 4})) << to_string(opts);
  LaunchDims d = gpu_launch_dims(lower_kernel(scale_kernel(64, 512), "k", opts));
  EXPECT_EQ(d.threads, GpuKnobs{}.block_threads);
  EXPECT_EQ(d.blocks * d.threads * 4, 64 * 512);  // every element once, no padding needed
  // The thread axis with stride 1 (neighbouring threads) is the contiguous column axis.
  const GpuAxis* fastest = nullptr;
  for (const GpuAxis& a : d.axes)
    if (a.local && a.stride == 1) fastest = &a;
  ASSERT_NE(fastest, nullptr);
  EXPECT_EQ(fastest->size, 128);
}

TEST(GpuHeuristic, AxisWithoutLargeDivisorIsPaddedToAWarpMultiple) {
  LinearProgram p = lower_gpu(scale_kernel(3, 301));  // no run of 4 either: one element per thread
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
          EXPECT_LE(gpu_launch_dims(p).threads, GpuKnobs{}.block_threads);
        }
      }
}

// softmax over the rows of x (rows, cols): out[i, j] = exp2(x[i, j] - max_k x[i, k]) / sum_k exp2(...),
// as the scheduler fuses it: one kernel whose two row reductions read only the row axis.
NodeRef softmax_kernel(int64_t rows, int64_t cols) {
  DType f = dtypes::float32;
  NodeRef i = range(rows, 0, AxisType::LOOP), j = range(cols, 1, AxisType::LOOP);
  NodeRef k1 = range(cols, 2, AxisType::REDUCE), k2 = range(cols, 3, AxisType::REDUCE);
  NodeRef mx = make(Op::REDUCE, f, {load(1, f, i * cols + k1), k1}, Op::MAX);
  NodeRef sum = make(Op::REDUCE, f, {alu(Op::EXP2, load(1, f, i * cols + k2) - mx), k2}, Op::ADD);
  return sink(store(f, i * cols + j, alu(Op::EXP2, load(1, f, i * cols + j) - mx) * alu(Op::RECIPROCAL, sum)));
}

// RMS norm over the rows of x (rows, cols) with weight w (cols): x * w / sqrt(mean(x^2) + 1e-5).
NodeRef rms_norm_kernel(int64_t rows, int64_t cols) {
  DType f = dtypes::float32;
  NodeRef i = range(rows, 0, AxisType::LOOP), j = range(cols, 1, AxisType::LOOP), k = range(cols, 2, AxisType::REDUCE);
  NodeRef xk = load(1, f, i * cols + k);
  NodeRef ms = make(Op::REDUCE, f, {xk * xk, k}, Op::ADD) * cnst(f, 1.0 / static_cast<double>(cols)) + cnst(f, 1e-5);
  return sink(store(f, i * cols + j, load(1, f, i * cols + j) * load(2, f, j) * alu(Op::RECIPROCAL, alu(Op::SQRT, ms))));
}

// The loop iterations one thread runs: each loop's trips times those of the loops around it
// (GPU launch ranges are thread and block indices, not loops).
int64_t thread_loop_trips(const LinearProgram& p) {
  std::vector<int64_t> around{1};
  int64_t total = 0;
  for (const NodeRef& n : p.ops) {
    if (n->op == Op::END) around.pop_back();
    if (n->op != Op::RANGE) continue;
    AxisType t = n->get_arg<RangeArg>().type;
    bool launch = t == AxisType::GLOBAL || t == AxisType::LOCAL || t == AxisType::GROUP;
    around.push_back(launch ? around.back() : around.back() * n->src[0]->const_as_int());
    if (!launch) total += around.back();
  }
  return total;
}

TEST(GpuHeuristic, RowKernelIsOneBlockPerRowWhoseThreadsReduceTheRowTogetherThenShareItsElements) {
  // Rows of 4096 floats: each thread reads and writes runs of 4 (UPCAST 4 before the splits).
  std::vector<Opt> opts = gpu_heuristic_opts(softmax_kernel(8, 4096));
  std::vector<Opt> want{{OptKind::UPCAST, 2, 4},      {OptKind::UPCAST, 3, 4},      {OptKind::UPCAST, 1, 4},
                        {OptKind::GROUPTOP, 2, 256}, {OptKind::GROUPTOP, 3, 256}, {OptKind::GROUPOUT, 1, 256},
                        {OptKind::GLOBAL, 0}};
  EXPECT_EQ(opts, want) << to_string(opts);
  LaunchDims d = gpu_launch_dims(lower_kernel(softmax_kernel(8, 4096), "k", opts));
  EXPECT_EQ(d.blocks, 8);
  EXPECT_EQ(d.threads, 256);
  EXPECT_EQ(d.group, 256);
  // RMS norm: one reduction; 1000 columns are padded to 1024 (PADTO before the splits).
  std::vector<Opt> rms = gpu_heuristic_opts(rms_norm_kernel(6, 1000));
  std::vector<Opt> want_rms{{OptKind::PADTO, 2, 256}, {OptKind::PADTO, 1, 256}, {OptKind::GROUPTOP, 2, 256},
                            {OptKind::GROUPOUT, 1, 256}, {OptKind::GLOBAL, 0}};
  EXPECT_EQ(rms, want_rms) << to_string(rms);
  // Rows of 96: a group of 128 threads, 32 of them masked.
  std::vector<Opt> short_rows = gpu_heuristic_opts(rms_norm_kernel(6, 96));
  EXPECT_EQ(short_rows[0], (Opt{OptKind::PADTO, 2, 128})) << to_string(short_rows);
  EXPECT_EQ(short_rows[2], (Opt{OptKind::GROUPTOP, 2, 128})) << to_string(short_rows);
  // Rows of 16: the general schedule (no group of threads per row).
  for (const Opt& o : gpu_heuristic_opts(rms_norm_kernel(64, 16))) EXPECT_NE(o.kind, OptKind::GROUPOUT);
}

TEST(GpuHeuristic, RowKernelWorkPerThreadIsLinearInTheRowLength) {
  // 131072 columns (a 128k-vocabulary softmax) over 256 threads taking runs of 4: 128 trips of
  // each reduction and of the output loop per thread. Recomputing the reductions per element
  // would be 2 * 131072 trips per element.
  for (int64_t cols : {int64_t{4096}, int64_t{131072}}) {
    LinearProgram p = lower_gpu(softmax_kernel(4, cols));
    EXPECT_EQ(thread_loop_trips(p), 3 * cols / (256 * 4)) << to_string(p);
    EXPECT_EQ(thread_loop_trips(lower_gpu(rms_norm_kernel(4, cols))), 2 * cols / (256 * 4));
  }
  // Rows that do not split into runs (padded to 1024 elements): one element per step.
  EXPECT_EQ(thread_loop_trips(lower_gpu(softmax_kernel(4, 1000))), 3 * 1024 / 256);
}

TEST(CudaRenderer, RowKernelCombinesEachReductionBeforeItsThreadsWriteTheRow) {
  // The row schedule without runs of 4 (one partial result per thread and reduction).
  std::string src = CudaRenderer().render(lower_kernel(softmax_kernel(8, 4096), "k",
      {{OptKind::GROUPTOP, 2, 256}, {OptKind::GROUPTOP, 3, 256}, {OptKind::GROUPOUT, 1, 256}, {OptKind::GLOBAL, 0}}));
  size_t last_combine = src.rfind("__syncthreads();  // before the next use of shared memory");
  size_t out_loop = src.find("for (int32_t r1 = 0; r1 < ((int32_t)16ll); r1++) {");
  size_t store = src.find("data0[");
  ASSERT_NE(last_combine, std::string::npos) << src;
  ASSERT_NE(out_loop, std::string::npos) << src;
  EXPECT_LT(last_combine, out_loop) << src;
  EXPECT_LT(out_loop, store) << src;
  // Both combines (max, then sum: a butterfly each) ran before; every thread stores its own
  // elements: no guard.
  EXPECT_EQ(occurrences(src, "__shfl_xor_sync"), 2u) << src;
  EXPECT_EQ(src.find("== 0) data0["), std::string::npos) << src;
  // Inside the loop over the row's 16 slices of 256 elements, the thread's element is its index.
  EXPECT_LT(src.find(" = lg_t;", out_loop), store) << src;
  // The heuristic's schedule: runs of 4 floats, read and written as float4 (4 partial results
  // per thread and reduction, folded in the thread, then one combine over the group each: two
  // butterflies and two barrier pairs, where combining each partial took eight).
  std::string vec = CudaRenderer().render(lower_gpu(softmax_kernel(8, 4096)));
  EXPECT_EQ(occurrences(vec, "const float4 vec"), 3u) << vec;  // max, sum, output
  EXPECT_EQ(occurrences(vec, "*(float4*)(data0 + "), 1u) << vec;
  EXPECT_EQ(occurrences(vec, "__shfl_xor_sync"), 2u) << vec;
  EXPECT_EQ(occurrences(vec, "__syncthreads();"), 4u) << vec;
}

// cuTensorMapEncodeTiled's arguments for a TMA operand (rows of ld 16-bit elements, boxes of 64 x
// box_rows), and each documented requirement that an encoding can break.
TEST(GpuLaunch, ATensorMapsEncodingIsHeldToTheDriversRequirements) {
  // A K-major B of a 256 x 14336 (rows x K) weight read in boxes of 64 k x 256 rows
  TensorMapEncoding e = tensor_map_encoding({2, 14336, 256}, 256 * 14336);
  EXPECT_EQ(e.dims[0], 14336u);
  EXPECT_EQ(e.dims[1], 256u);
  EXPECT_EQ(e.row_stride_bytes, 28672u);
  EXPECT_EQ(e.box[0], 64u);
  EXPECT_EQ(e.box[1], 256u);
  EXPECT_EQ(tensor_map_violation(e, 4096), "");
  // a partial last row counts as a row
  EXPECT_EQ(tensor_map_encoding({0, 100, 64}, 1001).dims[1], 11u);
  auto broken = [&](auto change, uintptr_t address = 4096) {
    TensorMapEncoding x = e;
    change(x);
    return tensor_map_violation(x, address);
  };
  EXPECT_EQ(broken([](TensorMapEncoding&) {}, 4104), "the buffer's address 4104 is not 16-byte aligned");
  EXPECT_EQ(broken([](TensorMapEncoding& x) { x.dims[1] = 0; }), "dimension 1 is 0 elements, not 1 to 2^32");
  EXPECT_EQ(broken([](TensorMapEncoding& x) { x.dims[0] = (uint64_t{1} << 32) + 1; }),
            "dimension 0 is 4294967297 elements, not 1 to 2^32");
  EXPECT_EQ(broken([](TensorMapEncoding& x) { x.row_stride_bytes = 28680; }),
            "the row stride of 28680 bytes is not a multiple of 16 below 2^40");
  EXPECT_EQ(broken([](TensorMapEncoding& x) { x.row_stride_bytes = uint64_t{1} << 40; }),
            "the row stride of 1099511627776 bytes is not a multiple of 16 below 2^40");
  EXPECT_EQ(broken([](TensorMapEncoding& x) { x.row_stride_bytes = 28656; }),
            "the row stride of 28656 bytes is shorter than a row of 14336 elements");
  EXPECT_EQ(broken([](TensorMapEncoding& x) { x.box[1] = 257; }),
            "box dimension 1 is 257 elements, not 1 to 256");
  EXPECT_EQ(broken([](TensorMapEncoding& x) { x.box[1] = 0; }),
            "box dimension 1 is 0 elements, not 1 to 256");
  EXPECT_EQ(broken([](TensorMapEncoding& x) { x.box[0] = 68; }),
            "the box's row of 136 bytes is not a multiple of 16 of at most 128 (the swizzle's span)");
  EXPECT_EQ(broken([](TensorMapEncoding& x) { x.box[0] = 12; }),
            "the box's row of 24 bytes is not a multiple of 16 of at most 128 (the swizzle's span)");
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

// scale_kernel(rows, cols, t) with `lanes` consecutive elements per thread (UPCAST of the columns).
LinearProgram lower_upcast_scale(int64_t rows, int64_t cols, DType t, int lanes) {
  return lower_kernel(scale_kernel(rows, cols, t), "k",
                      {{OptKind::UPCAST, 1, lanes}, {OptKind::LOCAL, 1, 32}, {OptKind::GLOBAL, 0}, {OptKind::GLOBAL, 1}});
}

TEST(CudaRenderer, AlignedRunsOfSixteenBytesAreLoadedAndStoredAsOneVector) {
  // Row r starts at element r * 1024: every run of 4 floats starts at a multiple of 16 bytes.
  std::string f = CudaRenderer().render(lower_upcast_scale(8, 1024, dtypes::float32, 4));
  EXPECT_EQ(occurrences(f, "const float4 vec"), 1u) << f;
  EXPECT_NE(f.find(" = *(const float4*)(data1 + "), std::string::npos) << f;
  EXPECT_NE(f.find("*(float4*)(data0 + "), std::string::npos) << f;
  EXPECT_NE(f.find(" = make_float4("), std::string::npos) << f;
  EXPECT_EQ(f.find("data1["), std::string::npos) << "no scalar access left:\n" << f;
  EXPECT_EQ(f.find("data0["), std::string::npos) << f;
  // 8 bfloat16 elements: one uint4 each way, lanes unpacked from and packed into 32-bit words.
  std::string b = CudaRenderer().render(lower_upcast_scale(8, 1024, dtypes::bfloat16, 8));
  EXPECT_NE(b.find(" = *(const uint4*)(data1 + "), std::string::npos) << b;
  EXPECT_NE(b.find("lg_bits_bf16((unsigned short)(vec"), std::string::npos) << b;
  EXPECT_NE(b.find(" = make_uint4("), std::string::npos) << b;
  // 16 floats per thread: four float4 each way.
  std::string w = CudaRenderer().render(lower_upcast_scale(8, 1024, dtypes::float32, 16));
  EXPECT_EQ(occurrences(w, "const float4 vec"), 4u) << w;
  EXPECT_EQ(occurrences(w, "*(float4*)(data0 + "), 4u) << w;
}

// out[r0, r1] = in[r0 * in_stride + r1 + in_offset] * 2 over (rows, cols), 4 columns per thread.
LinearProgram lower_shifted_copy(int64_t rows, int64_t cols, int64_t in_stride, int64_t in_offset) {
  DType f = dtypes::float32;
  NodeRef r0 = range(rows, 0, AxisType::LOOP), r1 = range(cols, 1, AxisType::LOOP);
  NodeRef k = sink(store(f, r0 * cols + r1, load(1, f, r0 * in_stride + r1 + in_offset) * cnst(f, 2.0)));
  return lower_kernel(k, "k", {{OptKind::UPCAST, 1, 4}, {OptKind::LOCAL, 1, 32}, {OptKind::GLOBAL, 0}, {OptKind::GLOBAL, 1}});
}

TEST(CudaRenderer, RunsThatMayBeMisalignedOrMaskedStayScalar) {
  // Input rows 1026 floats apart: row 1 starts 4104 bytes in, not a multiple of 16 but of 8: two
  // float2 loads. The output's rows (1024 apart) are aligned.
  std::string rows = CudaRenderer().render(lower_shifted_copy(8, 1024, 1026, 0));
  EXPECT_EQ(rows.find("const float4"), std::string::npos) << rows;
  EXPECT_EQ(occurrences(rows, "const float2 vec"), 2u) << rows;
  EXPECT_EQ(occurrences(rows, "data1["), 0u) << rows;
  EXPECT_NE(rows.find("*(float4*)(data0 + "), std::string::npos) << rows;
  // Rows 1025 floats apart: odd, not even 8-byte aligned: scalar.
  std::string odd = CudaRenderer().render(lower_shifted_copy(8, 1024, 1025, 0));
  EXPECT_EQ(odd.find("const float2 vec"), std::string::npos) << odd;
  EXPECT_EQ(odd.find("const float4 vec"), std::string::npos) << odd;
  EXPECT_EQ(occurrences(odd, "data1["), 4u) << odd;
  // Runs that start 2 elements past a multiple of 4: pairs.
  std::string shifted = CudaRenderer().render(lower_shifted_copy(8, 1024, 1024, 2));
  EXPECT_EQ(shifted.find("const float4"), std::string::npos) << shifted;
  EXPECT_EQ(occurrences(shifted, "const float2 vec"), 2u) << shifted;
  std::string aligned = CudaRenderer().render(lower_shifted_copy(8, 1024, 1028, 4));
  EXPECT_NE(aligned.find("const float4"), std::string::npos) << "1028 and 4 are multiples of 4:\n" << aligned;
  // Padded columns are masked (gated loads and stores): scalar.
  std::string padded = CudaRenderer().render(lower_kernel(scale_kernel(8, 1000), "k",
      {{OptKind::PADTO, 1, 128}, {OptKind::UPCAST, 1, 4}, {OptKind::GLOBAL, 0}, {OptKind::GLOBAL, 1}}));
  EXPECT_EQ(padded.find("float4"), std::string::npos) << padded;
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
