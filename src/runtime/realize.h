#pragma once
// Realize: schedule a graph, lower and load each kernel (cached per device and kernel AST), and run
// the items in order. DEBUG=1 prints each item with its run time. While a CaptureSession
// (capture.h) is active on the calling thread, every item run is also recorded with its program.
#include <vector>

#include "ir/node.h"
#include "runtime/device.h"
#include "schedule/schedule.h"

namespace lg {

// Computes every source of sink; returns, per source, the BUFFER (or a view of one) holding it.
std::vector<NodeRef> realize(const NodeRef& sink);

// The arguments of a kernel item: each slot's memory from its offset on (ScheduleItem::offsets),
// with the elements left from there. outs: the memory to use for the first slots (the outputs)
// instead of their buffers' (BEAM's scratch outputs; the same offsets apply).
KernelArgs kernel_args(const ScheduleItem& item, const std::vector<void*>& outs = {});

// Number of kernels lowered and loaded so far (the program cache's misses).
size_t programs_built();

}  // namespace lg
