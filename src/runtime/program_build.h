#pragma once
// Turning a lowered kernel into a loaded Program on a device: render, compile through the disk
// cache, load. Shared by realize (one program per kernel) and BEAM search (many candidates).
#include <memory>

#include "codegen/program.h"
#include "runtime/device.h"
#include "schedule/schedule.h"

namespace lg {

struct BuiltProgram {
  std::unique_ptr<Program> program;
  bool compiled = false;  // the compiler ran (a disk cache miss)
};

BuiltProgram build_program(Device& dev, const LinearProgram& prog);

// The Opts a kernel runs with on dev: none with NOOPT=1, BEAM search with BEAM=n (n > 0) where the
// device has a search space for it (Device::beam_space), else the device's heuristic.
std::vector<Opt> choose_opts(Device& dev, const ScheduleItem& item);

}  // namespace lg
