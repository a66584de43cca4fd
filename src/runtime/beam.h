#pragma once
// BEAM search (BEAM=n): finds an Opt list for one kernel by trying candidates on the device.
//
// What is tried is the device's BeamSpace (Device::beam_space): lists to start from and, for each
// list, the lists one step away. The search times every start, keeps the n fastest, and each round
// times every list one step from the beam (each list once per search), keeping the n fastest. It
// stops when a round improves the best time by less than 1%, or after 8 rounds. Candidates are
// lowered and compiled in parallel (compiled objects go through the disk cache) and timed one at a
// time on the kernel's real input buffers (a scratch output buffer, so no data changes) with the
// program's own timer (Program::timed_run: CUDA events on a GPU). The first start is the device's
// heuristic choice, so the result is never slower than the default as measured there. Its output is
// the reference: every other candidate runs on a poisoned output and must match it
// (runtime/beam_check.h); one that does not is reported on stderr and never chosen. The winner is
// cached on disk (kind "beam"), keyed by the kernel's structure, the device kind and the compiler,
// so a second run pays nothing. DEBUG=2 prints each round; DEBUG=3 prints the chosen Opts.
//
// Spaces:
//   CPU (append_beam_space)  from the heuristic's list, a step appends one Opt (beam_actions;
//                            one that is not a PACK goes in front of the list's PACKs, which
//                            stay last: codegen/pack.h)
//   GPU (gpu_beam_space)     the GPU heuristic's lists for other GpuKnobs (codegen/heuristic_gpu.h):
//                            a step doubles or halves one knob or turns one on or off (tensor cores
//                            and their tiling, shared-memory staging, threads per block, register
//                            tile, vector accesses). Every list is one the heuristic makes, so every
//                            candidate has a launch geometry the heuristic knows to be legal; BEAM
//                            does not invent GPU schedules the heuristic cannot express.
#include <memory>
#include <vector>

#include "codegen/heuristic_gpu.h"
#include "codegen/opt.h"
#include "runtime/device.h"
#include "schedule/schedule.h"

namespace lg {

class BeamSpace {
 public:
  virtual ~BeamSpace() = default;
  // The lists the search starts from; the first is the device's default choice.
  virtual std::vector<std::vector<Opt>> starts() = 0;
  // The lists one step from `opts` (a list this space returned). A list may fail to apply
  // (OptError when lowered): the search skips it.
  virtual std::vector<std::vector<Opt>> next(const std::vector<Opt>& opts) = 0;
};

// Width n: the n fastest lists are kept each round.
std::vector<Opt> beam_search(Device& dev, const ScheduleItem& item, BeamSpace& space, int width);
// With the device's space (it must have one: Device::beam_space not null).
std::vector<Opt> beam_search(Device& dev, const ScheduleItem& item, int width);

// The CPU space: starts from `start`; a step appends one of beam_actions.
std::unique_ptr<BeamSpace> append_beam_space(const NodeRef& ast, std::vector<Opt> start);
// The Opts the CPU space appends to the kernel as it is.
std::vector<Opt> beam_actions(const NodeRef& ast);

// The GPU space (runtime/beam_gpu.cpp): starts from the heuristic's list for `defaults` and, where
// the device has tensor cores (defaults.tensor_cores), also from the list without them and the one
// with the smallest tiling (one tile per warp, one warp per block); tensor cores are a knob only
// there.
std::unique_ptr<BeamSpace> gpu_beam_space(const NodeRef& ast, const GpuKnobs& defaults);
// The knob settings one step from k (before deduplication by the lists they give).
std::vector<GpuKnobs> gpu_knob_steps(const GpuKnobs& k, bool tensor_cores_allowed);

}  // namespace lg
