#pragma once
// Kernels of several outputs: elementwise ASSIGNs of one shape on one device that read each other
// or the same inputs become one kernel with a STORE each (kernelize_outputs), so what they share is
// read once and a value one writes and another reads is not stored and loaded back. An optimizer
// step is the case it is for: AdamW's m, v, parameter and 16-bit copy updates are one pass over
// memory (30 bytes per parameter) instead of four (46). MULTI_OUTPUT=0 keeps a kernel each.
//
// Row reductions (schedule/fusion.h is_row_reduce) of one shape on one device of which one reads
// the other group the same way (never with ASSIGNs): a cross-entropy's row maximum (realized, since
// the loss and the gradient read it too) and its sum of exponentials, which reads it, are one
// kernel. Each row is read from memory once, by the maximum's loop, and again from cache by the
// sum's: in the mini training step, 148 -> 86 ms a step for the LM head's row passes.
//
// Row consumers join such a group on the CPU (and INTERP): elementwise kernels over its rows that
// read a member, either a row's values (the loss per row, the gradient's factor per row) or the
// row's elements (the cross-entropy's gradient, rows of the logits): one kernel stores the row
// values once per row and writes the elements while the row is in cache (codegen/linearize.h).
// In the mini step the gradient of each loss chunk's logits no longer reads them from memory again,
// and the logits' last reader is this kernel, so they are freed before the next chunk's are made
// (tensor/composite.cpp realizes the loss per row so that it joins): docs/performance.md. One wider
// shape per group. GPU row kernels (launch and thread groups) keep their consumers apart.
//
// Entries join a group only when the result is safe to run as one kernel:
//  - each writes a buffer no other member writes, and no member reads the old value of a buffer
//    another member writes (a thread may overwrite it before another reads it; the zeroing of a
//    gradient buffer that the update reads stays apart);
//  - a member read by another is read at the element being written (else kernelize_outputs gives
//    nothing and the group stays apart);
//  - no dependency path leaves the group and comes back into it (the group must stay orderable).
#include <vector>

#include "schedule/plan.h"

namespace lg {

// Replaces the members of every group with one entry (at the first member's place), in place.
// realized: how every realize point is read (schedule.cpp's read_of).
void merge_outputs(std::vector<Planned>& plan, const std::unordered_map<const Node*, NodeRef>& realized);

}  // namespace lg
