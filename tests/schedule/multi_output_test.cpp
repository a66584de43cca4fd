// Kernels of several outputs (schedule/multi_output.h) on hand-built graphs: which ASSIGNs merge,
// which stay apart and why, and what the merged kernel loads and stores.
#include <gtest/gtest.h>

#include "base/config.h"
#include "base/error.h"
#include "common/tensor_stage.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

using namespace testing_util;

NodeRef assign(const NodeRef& target, const NodeRef& value) {
  return make(Op::ASSIGN, target->dtype, {target, value});
}

// The slot of `buf` in a kernel item, or -1.
int slot_of(const ScheduleItem& it, const NodeRef& buf) {
  for (size_t k = 0; k < it.buffers.size(); k++)
    if (it.buffers[k] == buf) return static_cast<int>(k);
  return -1;
}

// Loads through slot k.
int loads_of_slot(const NodeRef& ast, int k) {
  int n = 0;
  for (const Node* x : toposort(ast)) n += x->op == Op::LOAD && x->src[0]->src[0]->get_arg<int64_t>() == k;
  return n;
}

TEST(MultiOutput, AnAssignReadingAnotherOnesNewValueSharesItsKernel) {
  NodeRef m = buffer({64}), p = buffer({64}), g = buffer({64});
  NodeRef m_new = assign(m, m * broadcast(scalar(0.9), {64}) + g);
  NodeRef p_new = assign(p, p - m_new);
  Schedule s = create_schedule(sink({m_new, p_new}));
  ASSERT_EQ(s.items.size(), 1u);
  const ScheduleItem& it = s.items[0];
  EXPECT_EQ(it.outputs, 2u);
  EXPECT_EQ(it.name, "E_64");
  EXPECT_EQ(it.buffers[0], m);
  EXPECT_EQ(it.buffers[1], p);
  EXPECT_EQ(count(it.ast, Op::STORE), 2);
  // m, p (their old values, each through its own output slot) and g: m's new value is not loaded.
  EXPECT_EQ(count(it.ast, Op::LOAD), 3);
  EXPECT_EQ(loads_of_slot(it.ast, 0), 1);
  EXPECT_EQ(loads_of_slot(it.ast, 1), 1);
  EXPECT_EQ(s.outputs[0], m);
  EXPECT_EQ(s.outputs[1], p);
}

TEST(MultiOutput, AssignsSharingAnInputLoadItOnce) {
  NodeRef m = buffer({64}), v = buffer({64}), g = buffer({64});
  NodeRef m_new = assign(m, m + g);
  NodeRef v_new = assign(v, v + g * g);
  Schedule s = create_schedule(sink({m_new, v_new}));
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].outputs, 2u);
  EXPECT_EQ(loads_of_slot(s.items[0].ast, slot_of(s.items[0], g)), 1);
}

TEST(MultiOutput, UnrelatedAssignsStayApart) {
  NodeRef a = buffer({64}), b = buffer({64}), x = buffer({64}), y = buffer({64});
  Schedule s = create_schedule(sink({assign(a, x + x), assign(b, y * y)}));
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].outputs, 1u);
  EXPECT_EQ(s.items[1].outputs, 1u);
}

TEST(MultiOutput, AssignsOfOtherShapesStayApart) {
  NodeRef a = buffer({64}), b = buffer({8, 8}), g = buffer({64});
  Schedule s =
      create_schedule(sink({assign(a, a + g), assign(b, b + make(Op::RESHAPE, g->dtype, {g}, Shape{8, 8}))}));
  EXPECT_EQ(s.items.size(), 2u);
}

// The gradient buffer's zeroing overwrites what the update reads: in one kernel a thread could
// zero an element before another thread's read of it (or, vectorized, its own).
TEST(MultiOutput, AnAssignToABufferAnotherReadsStaysApartAndRunsAfterIt) {
  NodeRef m = buffer({64}), g = buffer({64});
  NodeRef m_new = assign(m, m + g);
  NodeRef g_zero = assign(g, broadcast(scalar(0), {64}));
  Schedule s = create_schedule(sink({m_new, g_zero}));
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].buffers[0], m);
  EXPECT_EQ(s.items[1].buffers[0], g);
}

// b reads a's new value one element over: element i of a may not be written yet (or already
// overwritten by a later step's thread) when it is read, so the two kernels stay apart.
TEST(MultiOutput, AnAssignReadingAnotherAtOtherElementsStaysApart) {
  NodeRef a = buffer({64}), b = buffer({64}), g = buffer({64});
  NodeRef a_new = assign(a, a + g);
  NodeRef shifted =
      make(Op::PAD, a->dtype, {make(Op::SHRINK, a->dtype, {a_new}, Pairs{{1, 64}})}, Pairs{{0, 1}});
  NodeRef b_new = assign(b, g + shifted);
  Schedule s = create_schedule(sink({a_new, b_new}));
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].buffers[0], a);
  EXPECT_EQ(s.items[1].buffers[0], b);
  EXPECT_EQ(s.items[1].outputs, 1u);
}

// b reads a's new value directly and through a reduction of it: merged, a and b would be one
// kernel that has to run both before and after the reduction's.
TEST(MultiOutput, AssignsWithAKernelBetweenThemStayApart) {
  NodeRef a = buffer({64}), b = buffer({64}), g = buffer({64});
  NodeRef a_new = assign(a, a + g);
  NodeRef total = reduce(a_new, Op::ADD, {0});  // (1,), its own kernel: read through an EXPAND
  NodeRef b_new = assign(b, a_new * make(Op::EXPAND, total->dtype, {total}, Shape{64}));
  Schedule s = create_schedule(sink({a_new, b_new}));
  ASSERT_EQ(s.items.size(), 3u);
  EXPECT_EQ(s.items[0].buffers[0], a);
  EXPECT_EQ(s.items[1].name, "r_1__64");
  EXPECT_EQ(s.items[2].buffers[0], b);
}

// AdamW's shape: m and v from g, p from m and v, a 16-bit copy of p: one kernel of four outputs
// that reads p, m, v and g once each and no new value back.
TEST(MultiOutput, AnOptimizerStepIsOneKernel) {
  NodeRef p = buffer({256}), m = buffer({256}), v = buffer({256}), g = buffer({256});
  NodeRef half = buffer({256}, dtypes::bfloat16);
  NodeRef m_new = assign(m, m * broadcast(scalar(0.9), {256}) + g * broadcast(scalar(0.1), {256}));
  NodeRef v_new = assign(v, v * broadcast(scalar(0.95), {256}) + g * g * broadcast(scalar(0.05), {256}));
  NodeRef p_new =
      assign(p, p - m_new * alu(Op::RECIPROCAL, alu(Op::SQRT, v_new) + broadcast(scalar(1e-8), {256})));
  NodeRef half_new = assign(half, cast(p_new, dtypes::bfloat16));
  Schedule s = create_schedule(sink({m_new, v_new, p_new, half_new}));
  ASSERT_EQ(s.items.size(), 1u);
  const ScheduleItem& it = s.items[0];
  EXPECT_EQ(it.outputs, 4u);
  EXPECT_EQ(count(it.ast, Op::STORE), 4);
  EXPECT_EQ(count(it.ast, Op::LOAD), 4);
  EXPECT_EQ(slot_of(it, half), 3);
  EXPECT_EQ(it.buffers.size(), 5u);  // four outputs and g
}

TEST(MultiOutput, Off) {
  config().multi_output = false;
  NodeRef m = buffer({64}), p = buffer({64}), g = buffer({64});
  NodeRef m_new = assign(m, m + g);
  Schedule s = create_schedule(sink({m_new, assign(p, p - m_new)}));
  config().multi_output = true;
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].buffers[0], m);
}

TEST(MultiOutput, Debug2ListsEveryOutput) {
  NodeRef m = buffer({64}), p = buffer({64}), g = buffer({64});
  NodeRef m_new = assign(m, m + g);
  config().debug = 2;
  testing::internal::CaptureStderr();
  create_schedule(sink({m_new, assign(p, p - m_new)}));
  std::string err = testing::internal::GetCapturedStderr();
  config().debug = 0;
  std::string m_desc = str("buf#", m->get_arg<BufferArg>().uid, " "),
              p_desc = str("buf#", p->get_arg<BufferArg>().uid, " ");
  size_t out = err.find("out "), in = err.find("  in");
  ASSERT_NE(out, std::string::npos) << err;
  EXPECT_LT(err.find(m_desc, out), in) << err;
  EXPECT_LT(err.find(p_desc, out), in) << err;
}

TEST(MultiOutput, KernelsPassTheKernelSpecUnderSpec1) {
  config().spec = 1;
  NodeRef m = buffer({64}), p = buffer({64}), g = buffer({64});
  NodeRef m_new = assign(m, m + g);
  Schedule s = create_schedule(sink({m_new, assign(p, p - m_new)}));
  config().spec = 0;
  EXPECT_EQ(s.items.size(), 1u);
}

// Row consumers (a row group's elementwise readers, on CPU and INTERP): x * max, read at its own
// row, joins the kernel of the row max and sum; a reader of the max at another row (its rows
// flipped) makes kernelize_outputs refuse, and the group is then kernelized without its consumers
// (the max and sum stay one kernel), the flipped reader on its own.
TEST(MultiOutput, ARowConsumerReadingAnotherRowLeavesTheRowGroupWhole) {
  NodeRef x = buffer({4, 8});
  NodeRef m = reduce(x, Op::MAX, {1});
  NodeRef e = alu(Op::EXP2, x - make(Op::EXPAND, x->dtype, {m}, Shape{4, 8}));
  NodeRef sum = reduce(e, Op::ADD, {1});
  NodeRef own = x * make(Op::EXPAND, x->dtype, {m}, Shape{4, 8});
  Schedule s = create_schedule(sink({m, sum, own}));
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].outputs, 3u);
  NodeRef flipped = make(Op::FLIP, m->dtype, {m}, Shape{1, 0});
  NodeRef other = x * make(Op::EXPAND, x->dtype, {flipped}, Shape{4, 8});
  s = create_schedule(sink({m, sum, other}));
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].outputs, 2u);
  EXPECT_EQ(s.items[1].outputs, 1u);
}

}  // namespace
}  // namespace lg
