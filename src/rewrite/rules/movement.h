#pragma once
// Tensor-stage cleanups of movement ops: merge chains, drop no-ops, drop CONTIGUOUS of a value that
// already is a contiguous buffer. The scheduler runs them before it decides fusion.
#include "rewrite/matcher.h"

namespace lg {

const PatternMatcher& pm_movement_cleanup();

// BUFFER, or RESHAPE of a BUFFER (row-major, every element): reading it needs no index remapping.
bool is_contiguous_buffer_view(const Node* n);

// n as a run of consecutive elements of the row-major value of `base`, starting at element
// `offset`: n is base itself, a RESHAPE of it, or a SHRINK of a 1-D view of it. Otherwise base is n
// and offset 0. Copies read such runs straight from base's buffer (the allreduce's chunks are
// these), so the scheduler realizes base rather than n.
struct ElementRange {
  const Node* base;
  int64_t offset;
};
ElementRange element_range(const Node* n);

}  // namespace lg
