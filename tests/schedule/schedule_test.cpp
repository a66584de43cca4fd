// The scheduler on hand-built tensor-stage graphs: kernel counts, fusion decisions, buffers, order.
#include <gtest/gtest.h>

#include "base/config.h"
#include "common/tensor_stage.h"
#include "ir/build.h"
#include "ir/graph.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

using namespace testing_util;

TEST(Schedule, ElementwiseChainAndReductionAreOneKernel) {
  NodeRef a = buffer({4, 8}), b = buffer({4, 8}), c = buffer({4, 8});
  Schedule s = create_schedule(sink({reduce(a * b + c, Op::ADD, {1})}));
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].name, "r_4_1__8");
  EXPECT_EQ(s.items[0].buffers.size(), 4u);  // output + a, b, c
  EXPECT_EQ(count(s.items[0].ast, Op::LOAD), 3);
  EXPECT_EQ(count(s.items[0].ast, Op::REDUCE), 1);
}

TEST(Schedule, ReductionFusesIntoFollowingElementwise) {
  NodeRef a = buffer({4, 8});
  NodeRef r = reduce(a, Op::ADD, {1});
  Schedule s = create_schedule(sink({r * broadcast(scalar(2), {4, 1})}));
  EXPECT_EQ(s.items.size(), 1u);
}

TEST(Schedule, ReductionConsumedThroughExpandGetsItsOwnKernel) {
  // A column max broadcast down the columns: fused, it would be recomputed for every row.
  NodeRef x = buffer({4, 8});
  NodeRef m = reduce(x, Op::MAX, {0});
  NodeRef shifted = x + alu(Op::NEG, make(Op::EXPAND, x->dtype, {m}, Shape{4, 8}));
  Schedule s = create_schedule(sink({shifted}));
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].name, "r_1_8__4");
  EXPECT_EQ(s.items[1].name, "E_4_8");
  EXPECT_EQ(s.items[1].buffers.size(), 3u);  // reads x and the realized max
}

TEST(Schedule, RowReductionsBroadcastAlongTheirRowsShareTheConsumersKernel) {
  // softmax over rows: max and sum of exp per row, then every element; one kernel, reading x once
  // per row (each reduction runs once per row, before the loop over the row's elements).
  NodeRef x = buffer({4, 8});
  NodeRef m = reduce(x, Op::MAX, {1});
  NodeRef e = alu(Op::EXP2, x + alu(Op::NEG, make(Op::EXPAND, x->dtype, {m}, Shape{4, 8})));
  NodeRef sum = reduce(e, Op::ADD, {1});
  NodeRef y = e * make(Op::EXPAND, x->dtype, {alu(Op::RECIPROCAL, sum)}, Shape{4, 8});
  Schedule s = create_schedule(sink({y}));
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].buffers.size(), 2u);  // writes y, reads x
  EXPECT_EQ(count(s.items[0].ast, Op::REDUCE), 2) << to_string(s.items[0].ast);  // max and sum, each once
}

// Each output's kernel, fused, would compute the row reduction again from x: it is realized once,
// and on INTERP (as on the CPU) its two readers, row consumers, share its kernel
// (schedule/multi_output.h): one kernel of three outputs; MULTI_OUTPUT=0 gives three kernels.
void expect_realized_once(const std::vector<NodeRef>& outputs) {
  for (int on = 0; on < 2; on++) {
    config().multi_output = on == 1;
    Schedule s = create_schedule(sink(outputs));
    int reduces = 0;
    for (const ScheduleItem& it : s.items) reduces += count(it.ast, Op::REDUCE);
    EXPECT_EQ(reduces, 1);
    ASSERT_EQ(s.items.size(), on ? 1u : 3u);
    EXPECT_EQ(s.items[0].outputs, on ? 3u : 1u);
  }
  config().multi_output = true;
}

TEST(Schedule, ARowReductionReadByTwoOutputsIsRealizedOnce) {
  NodeRef x = buffer({4, 8});
  NodeRef m = reduce(x, Op::MAX, {1});
  NodeRef mx = make(Op::EXPAND, x->dtype, {m}, Shape{4, 8});
  expect_realized_once({x + mx, x * mx});
}

TEST(Schedule, ReductionWithTwoConsumersIsRealizedOnce) {
  NodeRef x = buffer({4, 8});
  NodeRef r = reduce(x, Op::ADD, {1});
  expect_realized_once({r + r * r, alu(Op::NEG, r)});
}

TEST(Schedule, NestedReductionsWithoutExpandShareAKernel) {
  NodeRef x = buffer({4, 8});
  Schedule s = create_schedule(sink({reduce(reduce(x, Op::ADD, {1}), Op::ADD, {0})}));
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(count(s.items[0].ast, Op::REDUCE), 2);
}

TEST(Schedule, ViewOfABufferNeedsNoKernel) {
  NodeRef x = buffer({4, 8});
  NodeRef view = make(Op::PERMUTE, x->dtype, {x}, Shape{1, 0});
  Schedule s = create_schedule(sink({view}));
  EXPECT_TRUE(s.items.empty());
  EXPECT_EQ(s.outputs[0], view);
}

TEST(Schedule, ContiguousCopiesAViewButNotABuffer) {
  NodeRef x = buffer({4, 8});
  NodeRef view = make(Op::PERMUTE, x->dtype, {x}, Shape{1, 0});
  EXPECT_EQ(create_schedule(sink({make(Op::CONTIGUOUS, x->dtype, {view})})).items.size(), 1u);
  Schedule s = create_schedule(sink({make(Op::CONTIGUOUS, x->dtype, {x})}));
  EXPECT_TRUE(s.items.empty());
  EXPECT_EQ(s.outputs[0], x);
}

TEST(Schedule, OutputsAreViewsOfNewBuffersWithTheRootsShape) {
  NodeRef a = buffer({3, 5});
  Schedule s = create_schedule(sink({a * a}));
  ASSERT_EQ(s.items.size(), 1u);
  const NodeRef& out = s.outputs[0];
  EXPECT_EQ(out->op, Op::RESHAPE);
  EXPECT_EQ(out->shape, (Shape{3, 5}));
  EXPECT_EQ(out->src[0], s.items[0].buffers[0]);
  EXPECT_EQ(out->src[0]->get_arg<BufferArg>().size, 15);
}

TEST(Schedule, EqualComputationsOnDifferentBuffersShareOneAst) {
  NodeRef a = buffer({16}), b = buffer({16}), c = buffer({16}), d = buffer({16});
  Schedule s1 = create_schedule(sink({a * b}));
  Schedule s2 = create_schedule(sink({c * d}));
  EXPECT_EQ(s1.items[0].ast, s2.items[0].ast);
  EXPECT_NE(s1.items[0].buffers[1], s2.items[0].buffers[1]);
}

TEST(Schedule, ZeroSizedOutputNeedsNoKernel) {
  NodeRef a = buffer({0, 4});
  Schedule s = create_schedule(sink({a * a}));
  EXPECT_TRUE(s.items.empty());
  EXPECT_EQ(s.outputs[0]->numel(), 0);
}

TEST(Schedule, ReadersOfABuffersOldValueRunBeforeTheAssignThatOverwritesIt) {
  NodeRef w = buffer({8});
  NodeRef update = make(Op::ASSIGN, w->dtype, {w, w * broadcast(scalar(2), {8})});
  NodeRef old_reader = w + broadcast(scalar(1), {8});
  Schedule s = create_schedule(sink({update, old_reader}));
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[1].buffers[0], w);  // the ASSIGN, last
  EXPECT_EQ(s.outputs[0], w);           // the assigned tensor is the target buffer
}

TEST(Schedule, ReadersOfTheAssignedValueRunAfterTheAssign) {
  NodeRef w = buffer({8});
  NodeRef update = make(Op::ASSIGN, w->dtype, {w, w * broadcast(scalar(2), {8})});
  Schedule s = create_schedule(sink({update + broadcast(scalar(1), {8})}));
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].buffers[0], w);
}

TEST(Schedule, CopyBetweenDevicesIsACopyItem) {
  NodeRef a = buffer({8});
  NodeRef moved = make(Op::COPY, a->dtype, {a, device_node("INTERP:1")});
  Schedule s = create_schedule(sink({moved}));
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].kind, ScheduleItem::Kind::Copy);
  EXPECT_EQ(s.items[0].buffers[1], a);
  EXPECT_EQ(s.items[0].buffers[0]->device_name(), "INTERP:1");
}

TEST(Schedule, CopyOfAPermutedViewRealizesItFirst) {
  NodeRef a = buffer({4, 8});
  NodeRef view = make(Op::PERMUTE, a->dtype, {a}, Shape{1, 0});
  Schedule s = create_schedule(sink({make(Op::COPY, a->dtype, {view, device_node("INTERP:1")})}));
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].kind, ScheduleItem::Kind::Kernel);
  EXPECT_EQ(s.items[1].kind, ScheduleItem::Kind::Copy);
}

TEST(Schedule, PaddedInputsAreGatedLoads) {
  NodeRef a = buffer({4});
  NodeRef padded = make(Op::PAD, a->dtype, {a}, Pairs{{2, 1}});
  Schedule s = create_schedule(sink({padded * padded}));
  ASSERT_EQ(s.items.size(), 1u);
  int gated = 0;
  for (const Node* n : toposort(s.items[0].ast)) gated += n->op == Op::INDEX && n->src.size() == 3;
  EXPECT_EQ(gated, 1);  // one load (shared by both uses), with a validity gate
}

TEST(Schedule, Debug2PrintsTheKernelList) {
  NodeRef a = buffer({4, 8});
  config().debug = 2;
  testing::internal::CaptureStderr();
  create_schedule(sink({reduce(a * a, Op::ADD, {1})}));
  std::string err = testing::internal::GetCapturedStderr();
  config().debug = 0;
  EXPECT_NE(err.find("schedule: 1 items"), std::string::npos) << err;
  EXPECT_NE(err.find("kernel r_4_1__8"), std::string::npos) << err;
}

TEST(Schedule, KernelsPassTheKernelSpecUnderSpec1) {
  config().spec = 1;
  NodeRef x = buffer({4, 8});
  NodeRef m = reduce(x, Op::MAX, {1});
  NodeRef y =
      make(Op::PAD, x->dtype, {x + make(Op::EXPAND, x->dtype, {m}, Shape{4, 8})}, Pairs{{1, 1}, {0, 2}});
  Schedule s = create_schedule(sink({y}));
  config().spec = 0;
  EXPECT_EQ(s.items.size(), 2u);
}

}  // namespace
}  // namespace lg
