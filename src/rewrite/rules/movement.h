#pragma once
// Tensor-stage cleanups of movement ops: merge chains, drop no-ops, drop CONTIGUOUS of a value that
// already is a contiguous buffer. The scheduler runs them before it decides fusion.
#include "rewrite/matcher.h"

namespace lg {

const PatternMatcher& pm_movement_cleanup();

// BUFFER, or RESHAPE of a BUFFER (row-major, every element): reading it needs no index remapping.
bool is_contiguous_buffer_view(const Node* n);

}  // namespace lg
