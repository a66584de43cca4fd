#pragma once
// The scheduler: turns a tensor-stage graph into an ordered list of kernels and copies over buffers.
//
//   create_schedule(SINK(t1, t2, ...)):
//     0. "lower allreduce": ALLREDUCE nodes become copies and add kernels (allreduce.h)
//     1. "tensor cleanup" rewrite: merge and drop no-op movement ops, drop CONTIGUOUS of a buffer
//     2. find realize points (fusion decides kernel boundaries; see fusion.h)
//     3. give every realize point a buffer; "kernelize" each one: movement ops become index
//        arithmetic over RANGE loop variables, realized inputs become LOADs (kernelize.h)
//     3b. merge elementwise ASSIGNs that read each other or the same inputs into kernels of several
//        outputs (multi_output.h)
//     4. order kernels by their buffer dependencies (readers of a buffer before an ASSIGN to it)
// DEBUG=2 prints the resulting kernel list.
#include <string>
#include <vector>

#include "ir/node.h"

namespace lg {

struct ScheduleItem {
  enum class Kind { Kernel, Copy };
  Kind kind = Kind::Kernel;
  // Kernel: SINK(STORE(INDEX(DEFINE_GLOBAL k, ...), value)...), a STORE into each output slot k.
  // Buffers are DEFINE_GLOBAL slots, so equal computations on different buffers share one AST (and
  // one compiled program).
  NodeRef ast;
  // BUFFER nodes by slot; [0, outputs) are written. Copy: [0] destination, [1] source.
  std::vector<NodeRef> buffers;
  std::string name;  // "E_4_8" (elementwise) or "r_4__8" (reduce): output axes, then reduced axes
  // Copy: the destination's whole size in elements, read from element src_offset of the source.
  int64_t src_offset = 0;
  // Kernel: by slot, the element of the buffer the slot's pointer starts at (schedule/kernelize.h:
  // views at large offsets run through moved pointers; empty or 0: the buffer's start).
  std::vector<int64_t> offsets;
  // Kernel: how many slots it writes, the first ones (several: schedule/multi_output.h). Copy: 1.
  size_t outputs = 1;
};

struct Schedule {
  std::vector<ScheduleItem> items;  // in execution order
  // outputs[i]: what sink source i is once the items ran: a BUFFER, or movement ops over one.
  std::vector<NodeRef> outputs;
};

Schedule create_schedule(const NodeRef& sink);
// Number of create_schedule calls so far (tests check that JIT replays schedule nothing).
size_t schedules_created();

// "KIND name  out: buf (shape) dtype  in: ..." lines, as DEBUG=2 prints them.
std::string describe(const Schedule& s);

// True when n is a BUFFER or movement ops over one (a view: reading it needs no kernel).
bool is_buffer_view(const Node* n);
// RESHAPE(CONTIGUOUS(x)): once scheduled, a view of the CONTIGUOUS's buffer.
bool is_reshaped_contiguous(const Node* n);
// The BUFFER under a view, or null.
const Node* view_base(const Node* n);

}  // namespace lg
