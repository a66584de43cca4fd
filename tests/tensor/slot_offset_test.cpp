// Kernels read views at large offsets of a buffer through moved slot pointers
// (schedule/kernelize.h, ScheduleItem::offsets): equal work on other runs of a buffer is the same
// kernel, far-apart runs of one buffer are slots of their own, and unaligned offsets stay in the
// index. Values are checked on every device the tensor tests run on.
#include <gtest/gtest.h>

#include "ir/node.h"
#include "schedule/schedule.h"
#include "tensor/tensor.h"

namespace lg {
namespace {

// 0, 1, ..., 4095 in one realized float32 buffer.
Tensor flat4096() { return Tensor::arange(0, 4096, 1, dtypes::float32).contiguous().realize(); }

Schedule schedule_of(const Tensor& t) { return create_schedule(make(Op::SINK, dtypes::void_, {t.node()})); }

std::vector<float> iota(float from, int n, float scale = 1) {
  std::vector<float> v(n);
  for (int i = 0; i < n; i++) v[i] = scale * (from + static_cast<float>(i));
  return v;
}

TEST(SlotOffsets, RunsOfABufferAtAlignedOffsetsShareOneKernel) {
  Tensor flat = flat4096();
  Tensor first = flat.slice(0, 0, 1024) * 2, third = flat.slice(0, 2048, 3072) * 2;
  Schedule a = schedule_of(first), b = schedule_of(third);
  ASSERT_EQ(a.items.size(), 1u);
  ASSERT_EQ(b.items.size(), 1u);
  EXPECT_EQ(a.items[0].ast, b.items[0].ast);
  EXPECT_EQ(b.items[0].offsets, (std::vector<int64_t>{0, 2048}));
  EXPECT_EQ(third.to_vector<float>(), iota(2048, 1024, 2));
}

TEST(SlotOffsets, FarApartReadsOfOneBufferAreSlotsOfTheirOwn) {
  Tensor flat = flat4096();
  Tensor sum1 = flat.slice(0, 0, 1024) + flat.slice(0, 2048, 3072);
  Tensor sum2 = flat.slice(0, 1024, 2048) + flat.slice(0, 3072, 4096);
  Schedule a = schedule_of(sum1), b = schedule_of(sum2);
  ASSERT_EQ(b.items.size(), 1u);
  const ScheduleItem& item = b.items[0];
  ASSERT_EQ(item.buffers.size(), 3u);
  EXPECT_EQ(item.buffers[1], item.buffers[2]) << "the same buffer in two slots";
  EXPECT_EQ(item.offsets, (std::vector<int64_t>{0, 1024, 3072}));
  EXPECT_EQ(a.items[0].ast, item.ast);
  std::vector<float> want(1024);
  for (int i = 0; i < 1024; i++) want[i] = static_cast<float>(1024 + i + 3072 + i);
  EXPECT_EQ(sum2.to_vector<float>(), want);
}

// float32: 16 elements are the 64-byte granule; an offset of 1 keeps the pointer at the start and
// the offset in the index, an offset of 17 moves the pointer by 16.
TEST(SlotOffsets, OffsetsMoveThePointerByWholeAlignedGranules) {
  Tensor flat = flat4096();
  Tensor one = flat.slice(0, 1, 1025) * 2, seventeen = flat.slice(0, 17, 1041) * 2;
  EXPECT_EQ(schedule_of(one).items[0].offsets, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(schedule_of(seventeen).items[0].offsets, (std::vector<int64_t>{0, 16}));
  EXPECT_EQ(schedule_of(one).items[0].ast, schedule_of(seventeen).items[0].ast);
  EXPECT_EQ(one.to_vector<float>(), iota(1, 1024, 2));
  EXPECT_EQ(seventeen.to_vector<float>(), iota(17, 1024, 2));
}

// An assign into a run writes through a moved output pointer; the run before it keeps its values.
TEST(SlotOffsets, AnAssignIntoARunWritesThroughAMovedPointer) {
  Tensor flat = flat4096();
  Tensor run = flat.slice(0, 2048, 3072);
  run.assign(run * -1);
  Schedule s = schedule_of(run);
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].offsets, (std::vector<int64_t>{2048}));
  run.realize();
  std::vector<float> got = flat.to_vector<float>();
  for (int i = 0; i < 4096; i++) ASSERT_EQ(got[i], i >= 2048 && i < 3072 ? -i : i) << i;
}

// A kernel that writes one run of a buffer and reads another run of it keeps one slot for that
// buffer (a second pointer to what it writes would alias it), at the smaller of the two.
TEST(SlotOffsets, TheWrittenBufferIsOneSlot) {
  Tensor flat = flat4096();
  Tensor run = flat.slice(0, 2048, 3072);
  run.assign(flat.slice(0, 1024, 2048) * 2);
  Schedule s = schedule_of(run);
  ASSERT_EQ(s.items.size(), 1u);
  EXPECT_EQ(s.items[0].buffers.size(), 1u);
  EXPECT_EQ(s.items[0].offsets, (std::vector<int64_t>{1024}));
  run.realize();
  std::vector<float> got = flat.to_vector<float>();
  for (int i = 0; i < 4096; i++) ASSERT_EQ(got[i], i >= 2048 && i < 3072 ? 2 * (i - 1024) : i) << i;
}

}  // namespace
}  // namespace lg
