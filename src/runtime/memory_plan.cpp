#include "runtime/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"

namespace lg {
namespace {

bool lifetimes_overlap(const BufferLifetime& a, const BufferLifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}

size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers, size_t alignment) {
  LG_CHECK(alignment > 0, "alignment 0");
  for (const BufferLifetime& b : buffers) LG_CHECK(b.first <= b.last, "lifetime ends before it starts");
  // Largest first; ties by first use, then index, so the plan is deterministic.
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> placed;  // buffers with an offset, in placement order
  for (size_t i : order) {
    // Placed buffers live at the same time as i, by offset: i goes into the first gap that fits.
    std::vector<size_t> conflicts;
    for (size_t j : placed)
      if (lifetimes_overlap(buffers[i], buffers[j])) conflicts.push_back(j);
    std::sort(conflicts.begin(), conflicts.end(),
              [&](size_t a, size_t b) { return plan.offsets[a] < plan.offsets[b]; });
    size_t offset = 0;
    for (size_t j : conflicts) {
      if (offset + buffers[i].bytes <= plan.offsets[j]) break;
      offset = std::max(offset, align_up(plan.offsets[j] + buffers[j].bytes, alignment));
    }
    plan.offsets[i] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + buffers[i].bytes);
    placed.push_back(i);
  }
  return plan;
}

}  // namespace lg
