#pragma once
// The scheduler's working list (schedule.cpp): one entry per kernel or copy before they are ordered,
// with what each reads and writes, and the dependencies between entries.
#include <vector>

#include "schedule/kernelize.h"
#include "schedule/schedule.h"

namespace lg {

struct Planned {
  ScheduleItem item;
  // The realize points it computes: one, or several for a kernel of several outputs (point k
  // written into item.buffers[k]).
  std::vector<const Node*> points;
  std::vector<const Node*> reads;            // BUFFER nodes and realize points the item reads
  std::vector<KernelizeResult::Span> spans;  // elements of BUFFERs it may read (none listed: all)
  std::vector<int64_t> offsets;              // by point: the first element it writes in its buffer
};

// Does entry j read elements [lo, hi] of buffer b (its old value)?
bool reads_span(const Planned& j, const Node* b, int64_t lo, int64_t hi);

// next[a]: the entries that must run after entry a: those that read a realize point of a, and the
// ASSIGNs of a that overwrite a buffer entry j reads (then j -> a). An entry never follows itself.
std::vector<std::vector<size_t>> dependency_edges(const std::vector<Planned>& plan);

}  // namespace lg
