// plan_memory: buffers live at the same time never share bytes; disjoint lifetimes share.
#include "runtime/memory_plan.h"

#include <gtest/gtest.h>

namespace lg {
namespace {

bool overlap_in_memory(const MemoryPlan& p, const std::vector<BufferLifetime>& b, size_t i, size_t j) {
  return p.offsets[i] < p.offsets[j] + b[j].bytes && p.offsets[j] < p.offsets[i] + b[i].bytes;
}

void expect_valid(const MemoryPlan& p, const std::vector<BufferLifetime>& b, size_t alignment) {
  for (size_t i = 0; i < b.size(); i++) {
    EXPECT_EQ(p.offsets[i] % alignment, 0u);
    EXPECT_LE(p.offsets[i] + b[i].bytes, p.arena_bytes);
    for (size_t j = 0; j < i; j++)
      if (b[i].first <= b[j].last && b[j].first <= b[i].last) {
        EXPECT_FALSE(overlap_in_memory(p, b, i, j)) << i << " and " << j;
      }
  }
}

TEST(MemoryPlan, ChainOfTwoStepLifetimesNeedsTwoBuffers) {
  std::vector<BufferLifetime> b;
  for (size_t k = 0; k < 8; k++) b.push_back({256, k, k + 1});
  MemoryPlan p = plan_memory(b);
  expect_valid(p, b, 64);
  EXPECT_EQ(p.arena_bytes, 512u);
}

TEST(MemoryPlan, BuffersLiveTogetherGetDisjointAlignedRanges) {
  std::vector<BufferLifetime> b = {{100, 0, 3}, {10, 1, 2}, {70, 2, 3}};
  MemoryPlan p = plan_memory(b, 64);
  expect_valid(p, b, 64);
  EXPECT_EQ(p.arena_bytes, 266u);  // largest first: 100 -> [0,100), 70 -> [128,198), 10 -> [256,266)
}

TEST(MemoryPlan, SmallBufferFillsAGapBetweenLargerOnes) {
  // a [0,1] and c [2,3] share offset 0; b [1,2] overlaps both and sits above; d lives only with a,
  // so it reuses b's bytes before b starts.
  std::vector<BufferLifetime> b = {{128, 0, 1}, {128, 1, 2}, {128, 2, 3}, {64, 0, 0}};
  MemoryPlan p = plan_memory(b, 64);
  expect_valid(p, b, 64);
  EXPECT_EQ(p.arena_bytes, 256u);
}

}  // namespace
}  // namespace lg
