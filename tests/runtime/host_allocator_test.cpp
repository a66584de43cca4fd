// HostAllocator (runtime/host_allocator.h): a freed mapping comes back whole for its own size; a
// new size is made of pooled pages moved in whole huge pages (their old values show it: nothing was
// faulted or zeroed), the rest is fresh memory (zeros); the pool's counts add up.
#include "runtime/host_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "base/config.h"

namespace lg {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Writes word i = seed + i over the buffer's 8-byte words.
void fill(void* p, size_t bytes, uint64_t seed) {
  auto* w = static_cast<uint64_t*>(p);
  for (size_t i = 0; i < bytes / 8; i++) w[i] = seed + i;
}
// The number of 8-byte words in [from, from + bytes) of p that differ from seed + i (i counted
// from `from`'s word).
size_t mismatches(const void* p, size_t from, size_t bytes, uint64_t seed) {
  const auto* w = static_cast<const uint64_t*>(p) + from / 8;
  size_t bad = 0;
  for (size_t i = 0; i < bytes / 8; i++) bad += w[i] != seed + i;
  return bad;
}
size_t nonzero_bytes(const void* p, size_t from, size_t bytes) {
  const auto* b = static_cast<const unsigned char*>(p) + from;
  size_t n = 0;
  for (size_t i = 0; i < bytes; i++) n += b[i] != 0;
  return n;
}

TEST(HostAllocator, SmallBuffersAreZeroedHeapMemory) {
  HostAllocator a;
  void* p = a.alloc(1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_EQ(nonzero_bytes(p, 0, 1000), 0u);
  std::memset(p, 0xff, 1000);
  a.free(p, 1000);
  void* q = a.alloc(1000);  // the heap may hand the same memory back: zeroed again
  EXPECT_EQ(nonzero_bytes(q, 0, 1000), 0u);
  a.free(q, 1000);
}

TEST(HostAllocator, AFreedMappingComesBackWholeForItsOwnSize) {
  HostAllocator::release_pool();
  HostAllocator a;
  const size_t bytes = 8 * kMiB + 4096 * 3 + 100;  // not a whole number of pages
  void* p = a.alloc(bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % HostAllocator::kHugePage, 0u);
  fill(p, bytes, 7);
  HostAllocator::Stats before = HostAllocator::stats();
  a.free(p, bytes);
  EXPECT_EQ(HostAllocator::stats().pooled, before.pooled + 8 * kMiB + 4 * 4096);
  void* q = a.alloc(bytes);
  HostAllocator::Stats after = HostAllocator::stats();
  EXPECT_EQ(q, p);
  EXPECT_EQ(mismatches(q, 0, bytes, 7), 0u);
  EXPECT_EQ(after.reused, before.reused + 8 * kMiB + 4 * 4096);
  EXPECT_EQ(after.fresh, before.fresh);
  EXPECT_EQ(after.pooled, before.pooled);
  a.free(q, bytes);
}

TEST(HostAllocator, ANewSizeTakesPooledPagesInWholeHugePagesAndTheRestFresh) {
  HostAllocator::release_pool();
  HostAllocator a;
  const size_t old_bytes = 16 * kMiB, new_bytes = 24 * kMiB + 4096;
  void* p = a.alloc(old_bytes);
  fill(p, old_bytes, 1000);
  a.free(p, old_bytes);
  HostAllocator::Stats before = HostAllocator::stats();
  void* q = a.alloc(new_bytes);
  HostAllocator::Stats after = HostAllocator::stats();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % HostAllocator::kHugePage, 0u);
  EXPECT_EQ(after.recycled - before.recycled, old_bytes);  // all of the old mapping
  EXPECT_EQ(after.fresh - before.fresh, 8 * kMiB + 4096);  // the rest
  EXPECT_EQ(after.pooled, 0u);
  EXPECT_EQ(mismatches(q, 0, old_bytes, 1000), 0u);  // the old pages, moved with their values
  EXPECT_EQ(nonzero_bytes(q, old_bytes, new_bytes - old_bytes), 0u);  // fresh memory reads zeros
  fill(q, new_bytes, 5);  // every page of the new range is writable
  EXPECT_EQ(mismatches(q, 0, new_bytes, 5), 0u);
  a.free(q, new_bytes);
}

TEST(HostAllocator, WithRecyclePagesOffANewSizeIsAllFresh) {
  HostAllocator::release_pool();
  HostAllocator a;
  void* p = a.alloc(16 * kMiB);
  a.free(p, 16 * kMiB);
  config().recycle_pages = false;  // RECYCLE_PAGES=0: the A/B switch
  HostAllocator::Stats before = HostAllocator::stats();
  void* q = a.alloc(24 * kMiB);
  HostAllocator::Stats after = HostAllocator::stats();
  config().recycle_pages = true;
  EXPECT_EQ(after.recycled, before.recycled);
  EXPECT_EQ(after.fresh - before.fresh, 24 * kMiB);
  EXPECT_EQ(after.pooled, 16 * kMiB);
  EXPECT_EQ(nonzero_bytes(q, 0, 24 * kMiB), 0u);
  a.free(q, 24 * kMiB);
}

TEST(HostAllocator, ALargerPooledMappingIsSplitAtAHugePageAndItsRestStaysPooled) {
  HostAllocator::release_pool();
  HostAllocator a;
  const size_t old_bytes = 32 * kMiB, new_bytes = 7 * kMiB;  // 3 whole huge pages and 1 MiB
  auto* p = static_cast<char*>(a.alloc(old_bytes));
  fill(p, old_bytes, 42);
  a.free(p, old_bytes);
  HostAllocator::Stats before = HostAllocator::stats();
  void* q = a.alloc(new_bytes);
  HostAllocator::Stats mid = HostAllocator::stats();
  EXPECT_EQ(mid.recycled - before.recycled, 6 * kMiB);
  EXPECT_EQ(mid.fresh - before.fresh, 1 * kMiB);
  EXPECT_EQ(mid.pooled, 26 * kMiB);
  EXPECT_EQ(mismatches(q, 0, 6 * kMiB, 42), 0u);
  // The rest is pooled as a mapping of its own size, starting where the moved piece ended.
  void* r = a.alloc(26 * kMiB);
  EXPECT_EQ(r, p + 6 * kMiB);
  EXPECT_EQ(mismatches(r, 0, 26 * kMiB, 42 + 6 * kMiB / 8), 0u);
  EXPECT_EQ(HostAllocator::stats().reused - mid.reused, 26 * kMiB);
  a.free(q, new_bytes);
  a.free(r, 26 * kMiB);
}

TEST(HostAllocator, MappingsUnderAHugePageAreNotSplitAndThePoolCanBeReleased) {
  HostAllocator::release_pool();
  HostAllocator a;
  void* small = a.alloc(3 * kMiB / 2);  // 1.5 MiB: under a huge page, so never a recycling source
  a.free(small, 3 * kMiB / 2);
  HostAllocator::Stats before = HostAllocator::stats();
  void* q = a.alloc(4 * kMiB);
  HostAllocator::Stats after = HostAllocator::stats();
  EXPECT_EQ(after.recycled, before.recycled);
  EXPECT_EQ(after.fresh - before.fresh, 4 * kMiB);
  EXPECT_EQ(after.pooled, 3 * kMiB / 2);
  a.free(q, 4 * kMiB);
  HostAllocator::release_pool();
  EXPECT_EQ(HostAllocator::stats().pooled, 0u);
}

}  // namespace
}  // namespace lg
