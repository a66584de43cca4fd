// Capture and replay at the runtime level: realize() under a CaptureSession records each item with
// its program; a ReplayPlan reruns the recording on new input buffers, copies included.
#include <gtest/gtest.h>

#include "ir/build.h"
#include "runtime/buffer.h"
#include "runtime/capture.h"
#include "runtime/realize.h"
#include "runtime/replay.h"

namespace lg {
namespace {

NodeRef filled(const std::string& device, std::vector<float> values) {
  NodeRef b = new_buffer(device_node(device), dtypes::float32, static_cast<int64_t>(values.size()));
  buffer_copy_in(*b, values.data(), values.size() * sizeof(float));
  return b;
}

std::vector<float> read(const NodeRef& b) {
  std::vector<float> out(static_cast<size_t>(b->get_arg<BufferArg>().size));
  buffer_copy_out(*b, out.data(), out.size() * sizeof(float));
  return out;
}

// SINK(COPY(a * b, INTERP:1)): a kernel into a new buffer, then a copy of it to another device.
NodeRef product_on_second_device(const NodeRef& a, const NodeRef& b) {
  return make(Op::SINK, dtypes::void_, {make(Op::COPY, dtypes::float32, {a * b, device_node("INTERP:1")})});
}

TEST(Capture, RecordsEachItemWithItsProgramInExecutionOrder) {
  NodeRef a = filled("INTERP", {1, 2, 3}), b = filled("INTERP", {4, 5, 6});
  Capture c;
  {
    CaptureSession session;
    EXPECT_EQ(CaptureSession::active(), &session);
    realize(product_on_second_device(a, b));
    c = session.take();
  }
  EXPECT_EQ(CaptureSession::active(), nullptr);
  ASSERT_EQ(c.items.size(), 2u);
  EXPECT_EQ(c.items[0].item.kind, ScheduleItem::Kind::Kernel);
  EXPECT_NE(c.items[0].program, nullptr);
  EXPECT_EQ(c.items[1].item.kind, ScheduleItem::Kind::Copy);
  EXPECT_EQ(c.items[1].program, nullptr);
  EXPECT_GT(c.first_new_uid, b->get_arg<BufferArg>().uid);
  EXPECT_GE(c.items[0].item.buffers[0]->get_arg<BufferArg>().uid, c.first_new_uid);
}

TEST(Replay, RerunsTheRecordingOnNewInputsAndPlansTheIntermediate) {
  NodeRef a = filled("INTERP", {1, 2, 3}), b = filled("INTERP", {4, 5, 6});
  Capture c;
  std::vector<NodeRef> out;
  {
    CaptureSession session;
    out = realize(product_on_second_device(a, b));
    c = session.take();
  }
  ReplayPlan plan(std::move(c), {a}, {out[0]});
  EXPECT_EQ(plan.item_count(), 2u);
  EXPECT_EQ(plan.planned_buffer_count(), 1u);  // a * b on INTERP; b is kept (older than the capture)
  EXPECT_EQ(plan.intermediate_bytes(), 12u);
  size_t schedules = schedules_created(), programs = programs_built();
  plan.run({filled("INTERP", {-1, 0, 10})});
  EXPECT_EQ(read(out[0]), (std::vector<float>{-4, 0, 60}));
  EXPECT_EQ(schedules_created(), schedules);
  EXPECT_EQ(programs_built(), programs);
}

}  // namespace
}  // namespace lg
