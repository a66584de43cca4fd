#pragma once
// BEAM search (BEAM=n): finds an Opt list for one kernel by trying candidates on the device.
//
// Each round extends every list in the beam by one legal Opt, lowers and compiles the candidates in
// parallel (compiled objects go through the disk cache), times each on the kernel's real input
// buffers (a scratch output buffer, so no data changes) after a warm-up run, and keeps the n
// fastest. It stops when a round improves the best time by less than 1%. The winner is cached on
// disk (kind "beam"), keyed by the kernel's structure, the device kind and the compiler, so a
// second run pays nothing. DEBUG=2 prints each round; DEBUG=3 prints the chosen Opts.
#include <vector>

#include "codegen/opt.h"
#include "runtime/device.h"
#include "schedule/schedule.h"

namespace lg {

std::vector<Opt> beam_search(Device& dev, const ScheduleItem& item, int width);

// The Opts BEAM tries as one step from the kernel as it is.
std::vector<Opt> beam_actions(const NodeRef& ast);

}  // namespace lg
