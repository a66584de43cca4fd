// The CUDA attention kernels (codegen/render_attention.h) run on this CPU: emulated CUDA (block
// index math, shared tiles, warp shuffles, the launch geometry the CUDA device uses) against the
// C kernels that CPU and CUDACHECK run (tests/tensor/flash_attention_test.cpp checks those against
// matmul and softmax). And NVRTC compiles them at the Llama head dims, within static shared memory.
#include <gtest/gtest.h>

#include <cstring>

#include "base/error.h"
#include "codegen/heuristic_gpu.h"
#include "codegen/render_attention.h"
#include "codegen/render_cuda.h"
#include "ir/attention.h"
#include "ir/build.h"
#include "runtime/buffer.h"
#include "runtime/nvrtc.h"
#include "schedule/schedule.h"
#include "tensor_core_util.h"

namespace lg {
namespace {

using tc_testing::filled;
using tc_testing::Run;

struct Case {
  int64_t B, H, KV, S, T, D;
  bool causal;
  DType t;
};

// A stats input (L, delta) near what a forward pass gives for these inputs' scores.
float stat_value(int64_t i) { return i % 2 == 0 ? 1.0f + static_cast<float>(i % 7) / 8.0f : static_cast<float>(i % 5 - 2) / 8.0f; }

// The one attention kernel of `op` (FLASH_ATTENTION, or FLASH_ATTENTION_GRAD with flags) over
// filled buffers.
Schedule attention_schedule(const Case& c, Op op, int64_t flags) {
  auto buf = [&](DType t, const Shape& s, float (*value)(int64_t)) {
    return make(Op::RESHAPE, t, {filled("CPU", t, s[0] * s[1] * s[2] * s[3], value)}, s);
  };
  std::vector<NodeRef> src{buf(c.t, {c.B, c.H, c.S, c.D}, tc_testing::a_value), buf(c.t, {c.B, c.KV, c.T, c.D}, tc_testing::b_value),
                           buf(c.t, {c.B, c.KV, c.T, c.D}, tc_testing::c_value)};
  if (op == Op::FLASH_ATTENTION_GRAD) {
    src.push_back(buf(c.t, {c.B, c.H, c.S, c.D}, tc_testing::d_value));
    src.push_back(buf(dtypes::float32, {c.B, c.H, c.S, 2}, stat_value));
  }
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {make(op, dtypes::float32, src, flags)}));
  EXPECT_EQ(s.items.size(), 1u);
  EXPECT_TRUE(is_attention_kernel(s.items.at(0).ast));
  return s;
}

std::vector<float> run(const LinearProgram& p, const ScheduleItem& item, Run how) {
  const Node& out = *item.buffers[0];
  std::vector<float> zeros(out.numel(), 0.0f);
  buffer_copy_in(out, zeros.data(), zeros.size() * 4);
  tc_testing::run_program(p, item, how);
  return tc_testing::read(item.buffers[0], dtypes::float32);
}

const Case kCases[] = {
    {1, 2, 2, 13, 13, 16, false, dtypes::float32},  // a partial row block
    {1, 4, 2, 40, 40, 32, true, dtypes::bfloat16},  // grouped queries, causal over two tiles
    {2, 2, 1, 9, 35, 8, false, dtypes::float16},    // more keys than queries, a partial key tile
};

TEST(AttentionCuda, EmulatedKernelsMatchTheCKernels) {
  for (const Case& c : kCases)
    for (auto [op, flags] : {std::pair{Op::FLASH_ATTENTION, 0L}, {Op::FLASH_ATTENTION_GRAD, 0L},
                             {Op::FLASH_ATTENTION_GRAD, kAttentionGradKV}}) {
      flags |= c.causal ? kAttentionCausal : 0;
      Schedule s = attention_schedule(c, op, flags);
      const ScheduleItem& item = s.items.at(0);
      LinearProgram p = lower_kernel(item.ast, item.name, gpu_heuristic_opts(item.ast, true));
      std::vector<float> want = run(p, item, Run::CProgram);
      std::vector<float> got = run(p, item, Run::EmulatedCuda);
      std::vector<double> wd(want.begin(), want.end());
      tc_testing::expect_close(got, wd, 1e-5, item.name);
      double norm = 0;
      for (float x : want) norm += std::abs(x);
      EXPECT_GT(norm, 0.0) << item.name << ": an all-zero output checks nothing";
    }
}

// The kernels at the Llama head dims, every kind and dtype, compile for sm_90 and sm_80 (ptxas
// refuses more than 48 KiB of static shared memory).
TEST(AttentionCuda, NvrtcCompilesEveryKindAtTheLlamaHeadDims) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  for (int64_t d : {64L, 128L})
    for (DType t : {dtypes::bfloat16, dtypes::float16})
      for (auto [op, flags] : {std::pair{Op::FLASH_ATTENTION, kAttentionCausal}, {Op::FLASH_ATTENTION_GRAD, kAttentionCausal},
                               {Op::FLASH_ATTENTION_GRAD, kAttentionCausal | kAttentionGradKV}}) {
        Schedule s = attention_schedule({1, 4, 2, 16, 16, d, true, t}, op, flags);
        const ScheduleItem& item = s.items.at(0);
        std::string src = CudaRenderer().render(lower_kernel(item.ast, item.name, gpu_heuristic_opts(item.ast, true)));
        for (const char* arch : {"sm_90", "sm_80"}) EXPECT_FALSE(NvrtcCompiler(arch).compile(src).empty()) << item.name << " " << arch;
      }
}

// The CUDA renderer refuses head dims past kAttentionCudaMaxDim (its shared tiles would not fit).
TEST(AttentionCuda, HeadDimsPastTheSharedTilesAreAUserError) {
  Schedule s = attention_schedule({1, 1, 1, 8, 8, kAttentionCudaMaxDim * 2, false, dtypes::bfloat16}, Op::FLASH_ATTENTION, 0);
  const ScheduleItem& item = s.items.at(0);
  EXPECT_THROW(CudaRenderer().render(lower_kernel(item.ast, item.name, gpu_heuristic_opts(item.ast, true))), Error);
}

}  // namespace
}  // namespace lg
