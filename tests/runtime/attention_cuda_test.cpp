// The CUDA attention kernels (codegen/render_attention.h) run on this CPU: emulated CUDA (block
// index math, shared tiles, warp shuffles, the launch geometry the CUDA device uses) against the
// C kernels that CPU and CUDACHECK run (tests/tensor/flash_attention_test.cpp checks those against
// matmul and softmax). And NVRTC compiles them at the Llama head dims: static shared memory within
// 48 KiB, and dK/dV's tiles in dynamic shared memory (the emulation gives a kernel exactly its
// launch's bytes, before a guard page).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "codegen/gpu_launch.h"
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

// The stats input (B, H, S, 2) of a backward pass over these inputs: each row's log-sum-exp of its
// scores (q = a_value, k = b_value, exact in 16 bits), so P <= 1 as after a forward pass, and a
// delta of a few eighths.
NodeRef stats_buffer(const Case& c) {
  std::vector<float> st(static_cast<size_t>(c.B * c.H * c.S * 2));
  for (int64_t b = 0; b < c.B; b++)
    for (int64_t h = 0; h < c.H; h++)
      for (int64_t s = 0; s < c.S; s++) {
        int64_t row = (b * c.H + h) * c.S + s, kv = b * c.KV + h / (c.H / c.KV);
        std::vector<double> x;
        for (int64_t t = 0; t < c.T && !(c.causal && t > s); t++) {
          double dot = 0;
          for (int64_t e = 0; e < c.D; e++) dot += tc_testing::a_value(row * c.D + e) * tc_testing::b_value((kv * c.T + t) * c.D + e);
          x.push_back(dot / std::sqrt(static_cast<double>(c.D)));
        }
        double m = *std::max_element(x.begin(), x.end()), sum = 0;
        for (double v : x) sum += std::exp(v - m);
        st[row * 2] = static_cast<float>(m + std::log(sum));
        st[row * 2 + 1] = static_cast<float>(row % 5 - 2) / 8.0f;
      }
  NodeRef buf = new_buffer(device_node("CPU"), dtypes::float32, static_cast<int64_t>(st.size()));
  buffer_copy_in(*buf, st.data(), st.size() * 4);
  return make(Op::RESHAPE, dtypes::float32, {buf}, Shape{c.B, c.H, c.S, 2});
}

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
    src.push_back(stats_buffer(c));
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
    {1, 4, 2, 40, 40, 32, true, dtypes::bfloat16},   // a partial row block, grouped queries, causal over two key tiles
    {2, 2, 1, 9, 35, 8, false, dtypes::float16},     // more keys than queries, a partial key tile
    {1, 2, 1, 70, 70, 16, true, dtypes::bfloat16},   // two row blocks (64 + 6), two 64-key tensor-core tiles
    {1, 2, 2, 20, 130, 64, false, dtypes::float16},  // three 64-key tiles, tensor cores at head dim 64
    {1, 2, 1, 24, 24, 48, true, dtypes::bfloat16},   // 6 chunks of 16 bytes per row: tiles not swizzled
};

// One kernel of case c as emulated CUDA against the C program, with or without tensor cores.
void expect_emulation_matches(const Case& c, Op op, int64_t flags, bool tensor_cores) {
  Schedule s = attention_schedule(c, op, flags | (c.causal ? kAttentionCausal : 0));
  const ScheduleItem& item = s.items.at(0);
  std::vector<Opt> opts = gpu_heuristic_opts(item.ast, tensor_cores);
  LinearProgram p = lower_kernel(item.ast, item.name, opts);
  AttentionKernel a = AttentionKernel::from_arg(apply_opts(item.ast, opts)->src[0]->get_arg<Shape>());
  EXPECT_EQ(a.tensor_cores, tensor_cores) << item.name;
  bool tc = attention_uses_tensor_cores(a, c.t);
  EXPECT_EQ(tc, CudaRenderer().render(p).find(str("lg_attention_", a.label(), "_tc<")) != std::string::npos) << item.name;
  std::vector<float> want = run(p, item, Run::CProgram);
  std::vector<float> got = run(p, item, Run::EmulatedCuda);
  std::vector<double> wd(want.begin(), want.end());
  // tensor cores: P and dS are rounded to the 16-bit dtype as mma operands (ir/ops.def)
  tc_testing::expect_close(got, wd, tc ? 8e-3 : 1e-5, item.name);
  double norm = 0;
  for (float x : want) norm += std::abs(x);
  EXPECT_GT(norm, 0.0) << item.name << ": an all-zero output checks nothing";
}

constexpr std::pair<Op, int64_t> kKinds[] = {
    {Op::FLASH_ATTENTION, 0}, {Op::FLASH_ATTENTION_GRAD, 0}, {Op::FLASH_ATTENTION_GRAD, kAttentionGradKV}};

// Every case as the CUDA heuristic of a GPU with tensor cores (sm_80 and later) schedules it.
TEST(AttentionCuda, EmulatedKernelsMatchTheCKernels) {
  for (const Case& c : kCases)
    for (auto [op, flags] : kKinds) expect_emulation_matches(c, op, flags, true);
}

// Without tensor cores (TC=0, or a GPU before sm_80) 16-bit inputs go to the CUDA-core kernels (the
// float32 ones differ only in how an element is read).
TEST(AttentionCuda, WithoutTensorCoresSixteenBitInputsUseTheCudaCoreKernels) {
  for (auto [op, flags] : kKinds) expect_emulation_matches(kCases[0], op, flags, false);
}

// The kernels at the Llama head dims, every kind and dtype (float32: the CUDA-core kernels),
// compile for sm_90 and sm_80 (ptxas refuses more than 48 KiB of static shared memory).
TEST(AttentionCuda, NvrtcCompilesEveryKindAtTheLlamaHeadDims) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  for (int64_t d : {64L, 128L})
    for (DType t : {dtypes::bfloat16, dtypes::float16, dtypes::float32})  // tensor cores, and CUDA cores
      for (auto [op, flags] : {std::pair{Op::FLASH_ATTENTION, kAttentionCausal}, {Op::FLASH_ATTENTION_GRAD, kAttentionCausal},
                               {Op::FLASH_ATTENTION_GRAD, kAttentionCausal | kAttentionGradKV}}) {
        Schedule s = attention_schedule({1, 4, 2, 16, 16, d, true, t}, op, flags);
        const ScheduleItem& item = s.items.at(0);
        std::string src = CudaRenderer().render(lower_kernel(item.ast, item.name, gpu_heuristic_opts(item.ast, true)));
        for (const char* arch : {"sm_90", "sm_80"}) EXPECT_FALSE(NvrtcCompiler(arch).compile(src).empty()) << item.name << " " << arch;
      }
}

// The dK/dV tensor-core kernel keeps k, v and two stages of q and dO tiles in dynamic shared memory
// (64 KiB at head dim 128, past the 48 KiB of static); the others (and every CUDA-core kernel) ask
// for none.
TEST(AttentionCuda, OnlyTheTensorCoreGradKVKernelTakesDynamicSharedMemory) {
  for (int64_t d : {64L, 128L})
    for (DType t : {dtypes::bfloat16, dtypes::float32})
      for (auto [op, flags] : kKinds) {
        Schedule s = attention_schedule({1, 4, 2, 16, 16, d, true, t}, op, flags | kAttentionCausal);
        const ScheduleItem& item = s.items.at(0);
        LinearProgram p = lower_kernel(item.ast, item.name, gpu_heuristic_opts(item.ast, true));
        const bool dkv_tc = flags == kAttentionGradKV && t != dtypes::float32;
        EXPECT_EQ(gpu_launch_dims(p).shared_bytes, dkv_tc ? 512 * d : 0) << item.name << " " << name(t);
        EXPECT_EQ(CudaRenderer().render(p).find("LG_DYNAMIC_SHARED(lg_dsmem);") != std::string::npos, dkv_tc) << item.name;
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
