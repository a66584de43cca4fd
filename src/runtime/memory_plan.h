#pragma once
// Memory planning for a fixed list of steps: buffers whose lifetimes do not overlap share memory.
//
//   plan_memory(buffers, alignment):
//     buffers[i] is live from step first to step last (inclusive) and needs bytes.
//     Returns offsets into one arena such that two buffers whose lifetimes overlap never overlap
//     in memory; every offset is a multiple of alignment.
// The heuristic is greedy by size (largest first, lowest fitting offset), as in TFLite's arena
// planner: not optimal, but within a small factor on the chains and trees a training step makes.
#include <cstddef>
#include <vector>

namespace lg {

struct BufferLifetime {
  size_t bytes;
  size_t first, last;  // steps that use the buffer; first <= last
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // by buffer
  size_t arena_bytes = 0;       // the planned peak: max(offset + bytes)
};

MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers, size_t alignment = 64);

}  // namespace lg
