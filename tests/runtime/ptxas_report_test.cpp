// What ptxas says of a kernel (runtime/ptxas_report.h, NvrtcCompiler::resource_report, PTXAS=1):
// the parser on logs ptxas wrote (NVRTC's and nvcc's forms), hand-written kernels that must and
// must not draw its remarks through NVRTC (so the check below can fail), and every wgmma tiling of
// the block matmul in the three layouts a training step multiplies in: ptxas neither serializes
// their wgmmas nor spills. Such a loss computes the right values, so no emulated or compiled test
// sees it; on a GPU it costs the matmul most of its speed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "base/config.h"
#include "base/error.h"
#include "codegen/render_cuda.h"
#include "ir/build.h"
#include "ir/graph.h"
#include "runtime/nvrtc.h"
#include "runtime/program_build.h"
#include "runtime/ptxas_report.h"
#include "runtime/realize.h"
#include "runtime/tensor_core_util.h"

namespace lg {
namespace {

using namespace tc_testing;

// NVRTC's log (CUDA 13.0) of a kernel whose wgmma accumulator is read before the group's wait:
// the remarks repeat per place, and name the function.
constexpr const char* kSerializedLog =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'neg' for 'sm_90a'\n"
    "ptxas info    : Function properties for neg\n"
    "ptxas info    : (C7519) warpgroup.arrive is injected in around line 69 by compiler to allow use of "
    "registers "
    "in GMMA in function 'neg'\n"
    "ptxas info    : (C7519) warpgroup.arrive is injected in around line 88 by compiler to allow use of "
    "registers "
    "in GMMA in function 'neg'\n"
    "ptxas info    : (C7517) warpgroup.wait is injected in around line 67 by compiler to allow use of "
    "registers "
    "defined by GMMA in function 'neg'\n"
    "ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
    "insufficient register resources for the wgmma pipeline in the function 'neg'\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 30 registers, used 0 barriers\n"
    "ptxas info    : Compile time = 232.463 ms\n";

// nvcc's log of the fused attention's dK/dV kernel at head dim 128 (the frame line without the
// "ptxas ." prefix), and of its forward kernel (static shared memory, no frame line at all).
constexpr const char* kSpillLog =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'lg_kernel' for 'sm_90a'\n"
    "ptxas info    : Function properties for lg_kernel\n"
    "    40 bytes stack frame, 36 bytes spill stores, 64 bytes spill loads\n"
    "ptxas info    : Used 255 registers, used 1 barriers, 40 bytes cumulative stack size\n";
constexpr const char* kSharedLog =
    "ptxas info    : Compiling entry function 'lg_kernel' for 'sm_90a'\n"
    "ptxas info    : Function properties for lg_kernel\n"
    "ptxas info    : Used 208 registers, used 1 barriers, 32768 bytes smem\n";

TEST(PtxasReport, ReadsTheWgmmaRemarksAndTheFunctionTheyName) {
  PtxasReport r = parse_ptxas_log(kSerializedLog);
  ASSERT_EQ(r.functions.size(), 1u);
  const PtxasFunction& f = r.functions[0];
  EXPECT_EQ(f.name, "neg");
  EXPECT_EQ(f.registers, 30);
  EXPECT_EQ(f.barriers, 0);
  EXPECT_EQ(f.spill_store_bytes + f.spill_load_bytes + f.stack_bytes, 0);
  ASSERT_EQ(f.wgmma_remarks.size(), 4u);
  EXPECT_EQ(f.wgmma_remarks[3].rfind(
                "(C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized", 0),
            0u)
      << f.wgmma_remarks[3];
  EXPECT_TRUE(slower_than_written(r));
  const std::string d = describe(r);
  EXPECT_EQ(
      d.rfind("neg: 30 registers, no spills. WARNING (slower than written): ptxas: (C7511) Potential", 0), 0u)
      << d;
  EXPECT_NE(d.find("(C7519) warpgroup.arrive is injected in around line 69 by compiler to allow use of "
                   "registers in GMMA "
                   "in function 'neg' (2 places)."),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("(C7517)"), std::string::npos) << d;
}

// The cache keeps ptxas's lines of a log, not the front end's warnings before them.
TEST(PtxasReport, KeepsPtxasLinesOnly) {
  const std::string log =
      std::string(
          "lg_kernel.cu(238): warning #177-D: variable \"v10\" was declared but never referenced\n"
          "    const int32_t v10 = (int32_t)(v2 + ((int32_t)1ll));\n\n") +
      kSerializedLog + "ptxas info    : Used 30 registers, used 0 barriers";
  const std::string lines = ptxas_lines(log);
  EXPECT_EQ(lines.rfind("ptxas info    : 0 bytes gmem\n", 0), 0u) << lines;
  EXPECT_EQ(lines.find("warning #177"), std::string::npos);
  EXPECT_EQ(lines.back(), '\n');
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 11);  // the 10 of kSerializedLog and the last
  EXPECT_EQ(describe(parse_ptxas_log(lines)), describe(parse_ptxas_log(kSerializedLog)));
  EXPECT_EQ(ptxas_lines("no ptxas here\n"), "");
}

TEST(PtxasReport, ReadsSpillsStackAndSharedMemoryInEitherForm) {
  PtxasReport r = parse_ptxas_log(kSpillLog);
  ASSERT_EQ(r.functions.size(), 1u);
  EXPECT_EQ(r.functions[0].registers, 255);
  EXPECT_EQ(r.functions[0].barriers, 1);
  EXPECT_EQ(r.functions[0].stack_bytes, 40);
  EXPECT_EQ(r.functions[0].spill_store_bytes, 36);
  EXPECT_EQ(r.functions[0].spill_load_bytes, 64);
  EXPECT_TRUE(slower_than_written(r));
  EXPECT_EQ(describe(r),
            "lg_kernel: 255 registers, 100 bytes of spills, 40 bytes of stack. WARNING (slower than "
            "written): lg_kernel "
            "spills registers (36 bytes stored, 64 loaded).");

  r = parse_ptxas_log(kSharedLog);
  ASSERT_EQ(r.functions.size(), 1u);
  EXPECT_EQ(r.functions[0].shared_bytes, 32768);
  EXPECT_FALSE(slower_than_written(r));
  EXPECT_EQ(describe(r), "lg_kernel: 208 registers, no spills, 32768 bytes of static shared memory");

  // a log with no ptxas lines (PTX for a virtual architecture; NVRTC said nothing)
  r = parse_ptxas_log("");
  EXPECT_TRUE(r.functions.empty());
  EXPECT_FALSE(slower_than_written(r));
  EXPECT_EQ(describe(r), "no ptxas report");
}

// One wgmma m64n8k16 a loop step (the descriptors are never dereferenced: ptxas only compiles it).
// TOUCH: the accumulator is written between the mma and its group's wait, which ptxas can only
// compile by waiting for the mma there (C7517) and serializing the pipeline (C7511).
std::string wgmma_kernel(bool touch) {
  return std::string(R"(typedef unsigned long long uint64_t;
extern "C" __global__ void __launch_bounds__(128) probe(float* out, uint64_t da, uint64_t db, int n) {
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  for (int i = 0; i < n; i++) {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(da + i), "l"(db));
)") + (touch ? "    d0 += 1.0f;\n" : "") +
         R"(    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  }
  out[threadIdx.x] = d0 + d1 + d2 + d3;
}
)";
}

// 64 live accumulators in at most 32 registers (1024 threads, 2 blocks an SM): ptxas must spill.
constexpr const char* kSpillingKernel = R"(
extern "C" __global__ void __launch_bounds__(1024, 2) probe(float* out, const float* in, int n) {
  float acc[64];
#pragma unroll
  for (int j = 0; j < 64; j++) acc[j] = in[j * 1024 + threadIdx.x];
  for (int i = 0; i < n; i++)
#pragma unroll
    for (int j = 0; j < 64; j++) acc[j] = acc[j] * acc[(j + 1) % 64] + in[i];
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 64; j++) s += acc[j];
  out[threadIdx.x] = s;
}
)";

TEST(PtxasReport, NvrtcReportsASerializedWgmmaAndASpillAndNotTheirCleanTwins) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  NvrtcCompiler sm90a("sm_90a");
  std::optional<ResourceReport> serialized = sm90a.resource_report(wgmma_kernel(true));
  ASSERT_TRUE(serialized.has_value());
  EXPECT_TRUE(serialized->warning) << serialized->text;
  EXPECT_NE(serialized->text.find("wgmma.mma_async instructions are serialized"), std::string::npos)
      << serialized->text;
  std::optional<ResourceReport> clean = sm90a.resource_report(wgmma_kernel(false));
  ASSERT_TRUE(clean.has_value());
  EXPECT_FALSE(clean->warning) << clean->text;
  EXPECT_EQ(clean->text.rfind("probe: ", 0), 0u) << clean->text;
  EXPECT_NE(clean->text.find(" registers, no spills"), std::string::npos) << clean->text;
  std::optional<ResourceReport> spilled = sm90a.resource_report(kSpillingKernel);
  ASSERT_TRUE(spilled.has_value());
  EXPECT_TRUE(spilled->warning) << spilled->text;
  EXPECT_NE(spilled->text.find("probe spills registers"), std::string::npos) << spilled->text;
  // PTX has no ptxas report: the driver assembles it when it loads
  EXPECT_FALSE(NvrtcCompiler("compute_90a").resource_report(wgmma_kernel(true)).has_value());
}

// Every wgmma tiling (10-16) of a bf16 matmul with a bf16 result, as a step's products are:
// a @ b, a @ W^T (a layer's forward) and a^T @ b (a weight's gradient).
TEST(PtxasReport, NoWgmmaTilingIsSerializedOrSpillsInAnyLayout) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  NvrtcCompiler sm90a("sm_90a");
  for (auto [a_t, b_t] : {std::pair{false, false}, {false, true}, {true, false}}) {
    Schedule s = create_schedule(matmul_graph("CPU", {1, 256, 256, 128, dtypes::bfloat16, true, a_t, b_t}));
    for (int tiling = 10; tiling <= 16; tiling++) {
      SCOPED_TRACE(str("tiling ", tiling, a_t ? " a^T @ b" : b_t ? " a @ W^T" : " a @ b"));
      std::optional<ResourceReport> r = sm90a.resource_report(
          CudaRenderer().render(lower_kernel(s.items.at(0).ast, "k", {{OptKind::BLOCK_MMA, 0, tiling}})));
      ASSERT_TRUE(r.has_value());
      EXPECT_FALSE(r->warning) << r->text;
      EXPECT_NE(r->text.find(" registers, no spills"), std::string::npos) << r->text;
    }
  }
}

// PTXAS=1: a line per CUDA kernel as it is loaded, on a device that compiles without a GPU.
TEST(PtxasReport, PtxasOnPrintsALinePerLoadedCudaKernel) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  setenv("PTXAS", "1", 1);
  config_reload();
  testing::internal::CaptureStderr();
  std::vector<NodeRef> outs = realize(matmul_graph("CUDACHECK", {1, 64, 64, 32, dtypes::bfloat16}));
  const std::string err = testing::internal::GetCapturedStderr();
  unsetenv("PTXAS");
  config_reload();
  EXPECT_FALSE(outs.empty());
  EXPECT_NE(err.find("ptxas CUDACHECK r_1_64_64__32: lg_kernel: "), std::string::npos) << err;
  EXPECT_NE(err.find(" registers, no spills"), std::string::npos) << err;
}

}  // namespace
}  // namespace lg
