// The GPU compilers and devices on a machine that may have no GPU: NVRTC compiles what the CUDA
// renderer writes (skipped without the CUDA toolkit), hipcc compiles the HIP renderer's (skipped
// without hipcc), the compile-check devices compute what the interpreter computes, and the CUDA
// device reports a missing driver as a user error. Kernels running on a real GPU are checked by
// the CUDA op harness (tests/CMakeLists.txt, tests/runtime/cuda_harness.sh).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>

#include <unistd.h>

#include "base/config.h"
#include "codegen/heuristic_gpu.h"
#include "codegen/program.h"
#include "codegen/render_cuda.h"
#include "codegen/render_hip.h"
#include "common/realized_values.h"
#include "common/user_error.h"
#include "ir/build.h"
#include "runtime/buffer.h"
#include "runtime/compile_check.h"
#include "runtime/cpu.h"
#include "runtime/cuda_api.h"
#include "runtime/disk_cache.h"
#include "runtime/hipcc.h"
#include "runtime/nvrtc.h"
#include "runtime/program_build.h"
#include "runtime/realize.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

using testing_util::error_of;

#define SKIP_WITHOUT_NVRTC()                                          \
  do {                                                                \
    std::string why;                                                  \
    if (!nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;  \
  } while (0)
#define SKIP_WITHOUT_HIPCC() \
  if (!hipcc_available()) GTEST_SKIP() << "hipcc is not on PATH (Debian: apt-get install hipcc)"

NodeRef input(const std::string& device, DType t, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  NodeRef b = new_buffer(device_node(device), dtypes::float32, n);
  std::vector<float> host(n);
  for (int64_t i = 0; i < n; i++) host[i] = 0.25f * static_cast<float>((i * 7) % 11 - 5);
  buffer_copy_in(*b, host.data(), host.size() * 4);
  NodeRef v = shape.size() == 1 ? b : make(Op::RESHAPE, dtypes::float32, {b}, shape);
  return t == dtypes::float32 ? v : cast(v, t);
}

// softmax(a @ b) over rows, in dtype t (as the front end would build it, without the Tensor).
NodeRef softmax_of_matmul(const std::string& device, DType t) {
  NodeRef a = input(device, t, {16, 12}), b = input(device, t, {12, 40});
  NodeRef x = make(Op::EXPAND, t, {make(Op::RESHAPE, t, {a}, Shape{16, 1, 12})}, Shape{16, 40, 12});
  NodeRef bt = make(Op::PERMUTE, t, {b}, Shape{1, 0});
  NodeRef y = make(Op::EXPAND, t, {make(Op::RESHAPE, t, {bt}, Shape{1, 40, 12})}, Shape{16, 40, 12});
  NodeRef mm = make(Op::RESHAPE, t, {make(Op::REDUCE_AXIS, t, {x * y}, ReduceArg{Op::ADD, {2}})}, Shape{16, 40});
  NodeRef mx = make(Op::REDUCE_AXIS, t, {mm}, ReduceArg{Op::MAX, {1}});
  NodeRef e = alu(Op::EXP2, mm - make(Op::EXPAND, t, {mx}, Shape{16, 40}));
  NodeRef s = make(Op::REDUCE_AXIS, t, {e}, ReduceArg{Op::ADD, {1}});
  return cast(e * alu(Op::RECIPROCAL, make(Op::EXPAND, t, {s}, Shape{16, 40})), dtypes::float32);
}

std::vector<float> compute(const std::string& device, DType t) {
  return testing_util::realized_float32(softmax_of_matmul(device, t));
}

// The linear program of the first kernel of x on device with the GPU heuristic.
LinearProgram first_kernel(const NodeRef& x) {
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {x}));
  return lower_kernel(s.items[0].ast, s.items[0].name, gpu_heuristic_opts(s.items[0].ast));
}

TEST(Nvrtc, CompilesTheCudaRenderersKernelsToACubin) {
  SKIP_WITHOUT_NVRTC();
  NvrtcCompiler nvrtc("sm_90");
  for (DType t : {dtypes::float32, dtypes::bfloat16, dtypes::float16}) {
    std::vector<uint8_t> cubin = nvrtc.compile(CudaRenderer().render(first_kernel(softmax_of_matmul("CPU", t))));
    ASSERT_GE(cubin.size(), 4u);
    EXPECT_EQ(std::string(cubin.begin(), cubin.begin() + 4), "\x7f" "ELF") << name(t);
  }
}

TEST(Nvrtc, CompilesSixteenByteVectorLoadsAndStores) {
  SKIP_WITHOUT_NVRTC();
  NvrtcCompiler nvrtc("sm_90");
  for (DType t : {dtypes::float32, dtypes::bfloat16, dtypes::float16}) {
    NodeRef x = input("CPU", t, {8, 1024});
    std::string src = CudaRenderer().render(first_kernel(x * x));
    EXPECT_NE(src.find(t == dtypes::float32 ? "make_float4(" : "make_uint4("), std::string::npos) << src;
    EXPECT_GE(nvrtc.compile(src).size(), 4u) << name(t);
  }
}

TEST(Nvrtc, VirtualArchitectureGivesPtx) {
  SKIP_WITHOUT_NVRTC();
  std::vector<uint8_t> ptx = NvrtcCompiler("compute_80").compile(CudaRenderer().render(first_kernel(input("CPU", dtypes::float32, {64}) * input("CPU", dtypes::float32, {64}))));
  std::string text(ptx.begin(), ptx.end());
  EXPECT_NE(text.find(".target sm_80"), std::string::npos);
  EXPECT_NE(text.find(".entry lg_kernel"), std::string::npos);
}

TEST(Nvrtc, KeyNamesVersionArchitectureAndOptions) {
  SKIP_WITHOUT_NVRTC();
  std::string k = NvrtcCompiler("sm_80").key();
  EXPECT_NE(k.find("nvrtc "), std::string::npos) << k;
  EXPECT_NE(k.find("--gpu-architecture=sm_80"), std::string::npos) << k;
  EXPECT_NE(k.find("--fmad=false"), std::string::npos) << k;
  EXPECT_NE(NvrtcCompiler("sm_90").key(), k);
}

TEST(Nvrtc, MalformedArchitectureIsAUserError) {
  SKIP_WITHOUT_NVRTC();
  EXPECT_NE(error_of([] { NvrtcCompiler("hopper"); }).find("not of the form sm_90, sm_90a or compute_90 (set CUDA_ARCH)"), std::string::npos);
}

TEST(NvrtcDeathTest, CompileErrorsShowTheLogAndTheSource) {
  SKIP_WITHOUT_NVRTC();
  EXPECT_DEATH(NvrtcCompiler("sm_90").compile("extern \"C\" __global__ void lg_kernel() { int x = ; }\n"),
               "nvrtcCompileProgram failed(.|\n)*expected an expression(.|\n)*--- source ---(.|\n)*int x = ;");
}

// CUDACHECK's C programs (what runs on this machine) are compiled together before the schedule's
// kernels load, and each load takes its program from there: every kernel's C program is compiled
// once, also with CACHE=0 (where load once built each again, alone). fp16: kernels no other test of
// this binary loads on CUDACHECK (programs are kept per kernel for the process).
TEST(CudaCheck, EachCProgramIsCompiledOnceAlsoWithoutTheDiskCache) {
  SKIP_WITHOUT_NVRTC();
  struct Restore {
    ~Restore() { config().cache = true; }
  } restore;
  config().cache = false;
  size_t checked = compile_checked_kernels(), compiles = cpu_compiles(), runs = cpu_compiler_runs();
  std::vector<float> got = compute("CUDACHECK", dtypes::float16);
  size_t kernels = compile_checked_kernels() - checked;
  EXPECT_GE(kernels, 2u);
  EXPECT_EQ(cpu_compiles() - compiles, kernels);
  EXPECT_LE(cpu_compiler_runs() - runs, kernels);
  std::vector<float> want = compute("INTERP", dtypes::float16);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-2) << i;
}

TEST(CudaCheck, ComputesWhatTheInterpreterComputesAndEveryKernelWentThroughNvrtc) {
  SKIP_WITHOUT_NVRTC();
  for (DType t : {dtypes::float32, dtypes::bfloat16}) {
    size_t checked = compile_checked_kernels(), built = programs_built();
    std::vector<float> got = compute("CUDACHECK", t);
    // Every program built for CUDACHECK loaded a non-empty NVRTC output.
    EXPECT_GT(programs_built(), built);
    EXPECT_EQ(compile_checked_kernels() - checked, programs_built() - built);
    std::vector<float> want = compute("INTERP", t);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], t == dtypes::float32 ? 1e-6 : 1e-2) << i;
  }
}

// CUDANULL compiles every kernel through NVRTC and runs none: the softmax's output keeps the
// zeros of fresh memory.
TEST(CudaNull, CompilesEveryKernelAndRunsNone) {
  SKIP_WITHOUT_NVRTC();
  size_t checked = compile_checked_kernels(), built = programs_built();
  std::vector<float> got = compute("CUDANULL", dtypes::float32);
  EXPECT_GT(programs_built(), built);
  EXPECT_EQ(compile_checked_kernels() - checked, programs_built() - built);
  EXPECT_EQ(got, std::vector<float>(got.size(), 0.0f));
}

// Its buffers are address space only, so a model bigger than this machine's memory compiles:
// twice the physical memory is handed out, and the pages written are the only ones used.
TEST(CudaNull, BuffersAreAddressSpaceOnly) {
  SKIP_WITHOUT_NVRTC();
  size_t bytes = 2 * static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  Allocator& a = get_device("CUDANULL").allocator();
  char* p = static_cast<char*>(a.alloc(bytes));
  ASSERT_NE(p, nullptr);
  const char hello[] = "first and last page";
  a.copy_in(p, hello, sizeof hello);
  a.copy_in(p + bytes - sizeof hello, hello, sizeof hello);
  char back[sizeof hello];
  a.copy_out(back, p + bytes - sizeof hello, sizeof hello);
  EXPECT_STREQ(back, hello);
  a.free(p, bytes);
}

// Reductions `ops` over the rows of a (rows, cols) input, in dtype t, as float32.
std::vector<float> row_reductions(const std::string& device, DType t, int64_t rows, int64_t cols, const std::vector<Op>& ops) {
  NodeRef x = input(device, t, {rows, cols});
  std::vector<NodeRef> outs;
  for (Op op : ops) {
    auto full = [&](double c) {
      NodeRef k = make(Op::RESHAPE, t, {cnst(t, c, device_node(device))}, Shape{1, 1});
      return make(Op::EXPAND, t, {k}, Shape{rows, cols});
    };
    NodeRef v = op == Op::MUL ? x * full(0.0625) + full(1.0) : x;  // products of factors near 1
    outs.push_back(cast(make(Op::REDUCE_AXIS, t, {v}, ReduceArg{op, {1}}), dtypes::float32));
  }
  std::vector<NodeRef> done = realize(make(Op::SINK, dtypes::void_, outs));
  std::vector<float> all;
  for (const NodeRef& out : done) {
    std::vector<float> host(out->numel());
    const Node* b = out->op == Op::BUFFER ? out.get() : out->src[0].get();
    buffer_copy_out(*b, host.data(), host.size() * 4);
    all.insert(all.end(), host.begin(), host.end());
  }
  return all;
}

TEST(CudaCheck, ReductionsSplitOverThreadGroupsMatchTheInterpreter) {
  SKIP_WITHOUT_NVRTC();
  // 1000 columns: padded to 1024 and split over 256 threads (GROUPTOP); 4096: no padding. A
  // bfloat16 sum or product rounds after every op, so its value depends on the order: only MAX,
  // which does not, is compared in bfloat16.
  for (int64_t cols : {1000, 4096}) {
    std::vector<Op> ops{Op::ADD, Op::MAX, Op::MUL};
    std::vector<float> got = row_reductions("CUDACHECK", dtypes::float32, 6, cols, ops);
    std::vector<float> want = row_reductions("INTERP", dtypes::float32, 6, cols, ops);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-4 + 1e-5 * std::abs(want[i])) << cols << " " << i;
  }
  EXPECT_EQ(row_reductions("CUDACHECK", dtypes::bfloat16, 6, 4096, {Op::MAX}),
            row_reductions("INTERP", dtypes::bfloat16, 6, 4096, {Op::MAX}));
}

// softmax over the rows of a (rows, cols) input, as float32 on the host.
std::vector<float> softmax_rows(const std::string& device, int64_t rows, int64_t cols) {
  DType t = dtypes::float32;
  NodeRef x = input(device, t, {rows, cols});
  auto expand = [&](const NodeRef& r) { return make(Op::EXPAND, t, {r}, Shape{rows, cols}); };
  NodeRef e = alu(Op::EXP2, x - expand(make(Op::REDUCE_AXIS, t, {x}, ReduceArg{Op::MAX, {1}})));
  NodeRef y = e * alu(Op::RECIPROCAL, expand(make(Op::REDUCE_AXIS, t, {e}, ReduceArg{Op::ADD, {1}})));
  NodeRef out = realize(make(Op::SINK, dtypes::void_, {y}))[0];
  std::vector<float> host(out->numel());
  buffer_copy_out(out->op == Op::BUFFER ? *out : *out->src[0], host.data(), host.size() * 4);
  return host;
}

// A 128k-vocabulary softmax row: the GPU row schedule reduces each row once (in the block), so
// CUDACHECK runs it in a second or so; recomputing the row's max and sum for every element (the
// schedule before the row schedule) was 2 * 131072^2 exponentials, many minutes on a CPU.
TEST(CudaCheck, SoftmaxOver128kWideRowsRunsInSecondsAndMatchesTheInterpreter) {
  SKIP_WITHOUT_NVRTC();
  auto start = std::chrono::steady_clock::now();
  std::vector<float> got = softmax_rows("CUDACHECK", 2, 131072);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<float> want = softmax_rows("INTERP", 2, 131072);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) ASSERT_NEAR(got[i], want[i], 1e-9 + 1e-5 * want[i]) << i;
  EXPECT_LT(seconds, 60.0) << "NVRTC compile and one pass over 2 x 131072 elements";
}

TEST(CudaCheck, CompiledKernelsAreInTheDiskCacheUnderTheNvrtcKey) {
  SKIP_WITHOUT_NVRTC();
  Device& dev = get_device("CUDACHECK");
  LinearProgram p = first_kernel(input("CUDACHECK", dtypes::float32, {96}) + input("CUDACHECK", dtypes::float32, {96}));
  build_program(dev, p);
  std::string source = dev.renderer()->render(p);
  auto hit = cache_get("kernels", dev.compiler()->key() + "\n" + source);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(std::string(hit->begin(), hit->begin() + 4), "\x7f" "ELF");
}

TEST(Cuda, MissingDriverOrGpuIsAUserError) {
  std::string why;
  if (cuda_driver_available(&why)) GTEST_SKIP() << "a CUDA driver is present; the CUDA op harness tests the device";
  std::string e = error_of([] { get_device("CUDA"); });
  EXPECT_NE(e.find("CUDA: "), std::string::npos) << e;
  EXPECT_EQ(e, error_of([] { get_device("CUDA:1"); }));
}

TEST(Cuda, AFaultingKernelsStatusSaysHowToFindTheKernelAndNamesTheWatchdog) {
  // cuda.h: CUDA_ERROR_ILLEGAL_ADDRESS 700, _ILLEGAL_INSTRUCTION 715 (a trap), _LAUNCH_FAILED 719
  for (int status : {700, 710, 714, 715, 716, 717, 718, 719}) {
    std::string hint = cu_kernel_fault_hint(status);
    EXPECT_NE(hint.find("DEBUG=1"), std::string::npos) << status << hint;
    EXPECT_NE(hint.find("mbarrier watchdog"), std::string::npos) << status << hint;
  }
  // CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY 2, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES 701, _NOT_READY 600
  for (int status : {0, 2, 600, 701}) EXPECT_EQ(cu_kernel_fault_hint(status), "") << status;
}

TEST(Hipcc, CompilesTheHipRenderersKernelsForGfx90aAndGfx940) {
  SKIP_WITHOUT_HIPCC();
  HipccCompiler hipcc;
  for (DType t : {dtypes::float32, dtypes::bfloat16, dtypes::float16}) {
    std::vector<uint8_t> bundle = hipcc.compile(HipRenderer().render(first_kernel(softmax_of_matmul("CPU", t))));
    std::string bytes(bundle.begin(), bundle.end());
    EXPECT_EQ(bytes.rfind("__CLANG_OFFLOAD_BUNDLE__", 0), 0u) << name(t);
    EXPECT_NE(bytes.find("gfx90a"), std::string::npos);
    EXPECT_NE(bytes.find("gfx940"), std::string::npos);
  }
}

TEST(HipCheck, ComputesWhatTheInterpreterComputes) {
  SKIP_WITHOUT_HIPCC();
  size_t checked = compile_checked_kernels();
  std::vector<float> got = compute("HIPCHECK", dtypes::float32), want = compute("INTERP", dtypes::float32);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
  EXPECT_GT(compile_checked_kernels(), checked);
}

}  // namespace
}  // namespace lg
