// kernel_cost (schedule/kernel_cost.h): the FLOPs and bytes of kernels the scheduler makes from
// Tensor programs, against counts by hand.
#include "schedule/kernel_cost.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ir/attention.h"
#include "ir/build.h"
#include "ir/graph.h"
#include "tensor/tensor.h"

namespace lg {
namespace {

// The schedule of t's kernels; the one writing t is last.
Schedule schedule_of(const Tensor& t) { return create_schedule(make(Op::SINK, dtypes::void_, {t.node()})); }

const ScheduleItem& last_kernel(const Schedule& s) {
  for (size_t i = s.items.size(); i-- > 0;)
    if (s.items[i].kind == ScheduleItem::Kind::Kernel) return s.items[i];
  ADD_FAILURE() << "no kernel";
  return s.items.at(0);
}

TEST(KernelCost, AMatmulIsTwoMnkFlopsAndItsOperandsAndOutputInBytes) {
  const int64_t M = 24, K = 40, N = 16;
  // Batched, so the CPU's panel copy of a 2-D weight (tensor/reduce.cpp) stays out.
  Tensor a = Tensor::randn({1, M, K}).realize(), b = Tensor::randn({1, K, N}).realize();
  Schedule s = schedule_of(a.matmul(b));
  KernelCost c = kernel_cost(last_kernel(s));
  EXPECT_EQ(c.flops, 2.0 * M * N * K);
  EXPECT_EQ(c.bytes, 4.0 * (M * K + K * N + M * N));
}

TEST(KernelCost, ElementwiseOpsCountOncePerElementTheirValueDependsOn) {
  Tensor x = Tensor::randn({8, 1}).realize(), y = Tensor::randn({1, 6}).realize();
  // (8, 6): x.exp() depends on the row only (8 exps), the product and the sum on both (48 each).
  Schedule s = schedule_of(x.exp() * y + y);
  KernelCost c = kernel_cost(last_kernel(s));
  double exps = 0;  // exp is lowered to EXP2 of x times log2(e): a MUL and an EXP2 per row
  for (const Node* n : toposort(last_kernel(s).ast)) exps += n->op == Op::EXP2;
  ASSERT_EQ(exps, 1);
  EXPECT_EQ(c.flops, 8 * 2 + 48 * 2);
  EXPECT_EQ(c.bytes, 4.0 * (8 + 6 + 48)) << "x and y read once (one LOAD of y), the output written once";
}

// A kernel of several outputs (schedule/multi_output.h): each STORE counts its own slot's element
// size (a float32 and a bfloat16 output), each input once.
TEST(KernelCost, EveryOutputCountsItsOwnElementSize) {
  Tensor p = Tensor::randn({64}).realize(), g = Tensor::randn({64}).realize();
  Tensor half = Tensor::zeros({64}, dtypes::bfloat16).contiguous().realize();
  Tensor p_new = p.assign(p + g * 0.5f);
  Tensor half_new = half.assign(p_new.cast(dtypes::bfloat16));
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {p_new.node(), half_new.node()}));
  ASSERT_EQ(s.items.size(), 1u);
  ASSERT_EQ(s.items[0].outputs, 2u);
  KernelCost c = kernel_cost(s.items[0]);
  EXPECT_EQ(c.flops, 64 * 2);
  EXPECT_EQ(c.bytes, 64.0 * (4 + 4 + 4 + 2)) << "p and g read, p and its bf16 copy written";
}

TEST(KernelCost, CastsAndIndexArithmeticAreNoFlops) {
  Tensor x = Tensor::randn({64}).realize();
  Schedule s = schedule_of(x.cast(dtypes::bfloat16));
  KernelCost c = kernel_cost(last_kernel(s));
  EXPECT_EQ(c.flops, 0);
  EXPECT_EQ(c.bytes, 64.0 * 4 + 64.0 * 2);
  Schedule t = schedule_of(Tensor::arange(100) * 3);
  EXPECT_EQ(kernel_cost(last_kernel(t)).flops, 0) << "integers";
}

TEST(KernelCost, AnInputReadThroughABroadcastIsCountedOnceAtMostItsSize) {
  Tensor x = Tensor::randn({5, 1}).realize();
  Schedule s = schedule_of(x.expand({5, 7}).sum(1));
  KernelCost c = kernel_cost(last_kernel(s));
  EXPECT_EQ(c.flops, 35) << "the REDUCE adds once per (row, column)";
  EXPECT_EQ(c.bytes, 4.0 * (5 + 5));
}

TEST(KernelCost, AttentionCountsItsProducts) {
  const int64_t B = 1, H = 4, KV = 2, S = 128, D = 16;
  Tensor q = Tensor::randn({B, H, S, D}).realize(), k = Tensor::randn({B, KV, S, D}).realize(),
         v = Tensor::randn({B, KV, S, D}).realize();
  for (bool causal : {false, true}) {
    Schedule s = schedule_of(q.flash_attention(k, v, causal));
    auto it = std::find_if(s.items.begin(), s.items.end(), [](const ScheduleItem& i) {
      return i.kind == ScheduleItem::Kind::Kernel && is_attention_kernel(i.ast);
    });
    ASSERT_NE(it, s.items.end());
    const ScheduleItem& item = *it;
    double pairs = causal ? S * (S + 1) / 2.0 : double(S * S);
    KernelCost c = kernel_cost(item);
    EXPECT_EQ(c.flops, 4.0 * B * H * D * pairs) << causal;
    EXPECT_EQ(c.bytes, 4.0 * (B * H * S * (D + 1) + B * H * S * D + 2 * B * KV * S * D)) << "every slot once";
    // The backward pass: dQ 3 products per pair, dK and dV 4 (of every query head).
    Tensor w = Tensor::randn({B, H, S, D}).realize();
    std::vector<Tensor> g = Tensor::gradients((q.flash_attention(k, v, causal) * w).sum(), {q, k, v});
    Schedule back = create_schedule(make(Op::SINK, dtypes::void_, {g[0].node(), g[1].node(), g[2].node()}));
    int seen = 0;
    for (const ScheduleItem& i : back.items) {
      if (i.kind != ScheduleItem::Kind::Kernel || !is_attention_kernel(i.ast)) continue;
      AttentionKind kind = AttentionKernel::from_arg(i.ast->src[0]->get_arg<Shape>()).kind;
      double products = kind == AttentionKind::Forward ? 2 : kind == AttentionKind::GradQ ? 3 : 4;
      EXPECT_EQ(kernel_cost(i).flops, 2 * products * B * H * D * pairs) << static_cast<int>(kind);
      seen |= 1 << static_cast<int>(kind);
    }
    EXPECT_EQ(seen, 7) << "forward, dQ and dK dV";
  }
}

}  // namespace
}  // namespace lg
