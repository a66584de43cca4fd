#pragma once
// Turning a lowered kernel into a loaded Program on a device: render, compile through the disk
// cache, load. Shared by realize (one program per kernel) and BEAM search (many candidates).
#include <memory>
#include <string>
#include <vector>

#include "codegen/program.h"
#include "runtime/device.h"
#include "schedule/schedule.h"

namespace lg {

struct BuiltProgram {
  std::unique_ptr<Program> program;
  bool compiled = false;  // the compiler ran (a disk cache miss)
};

BuiltProgram build_program(Device& dev, const LinearProgram& prog);

// build_program in three steps, so that a schedule's new kernels compile several at once
// (runtime/realize.cpp): render (the source, and the binary if the disk cache has it), compile
// (the device's compiler, on any thread; the binary goes to the disk cache), load (on the caller's
// thread: loading may need the device's context).
struct PendingProgram {
  LinearProgram prog;
  std::string source;
  std::vector<uint8_t> binary;
  bool needs_compile = false;  // rendered source the disk cache did not have
};
PendingProgram render_program(Device& dev, LinearProgram prog);
void compile_program(Device& dev, PendingProgram& p);
BuiltProgram load_program(Device& dev, PendingProgram& p);

// compile_program for many at once (realize's new kernels, BEAM's candidates). A source rendered
// alike for several devices with one compiler identity (a kernel on CPU:0 and CPU:1) compiles
// once. Per compiler identity the sources are dealt into groups of about equal bytes (the largest
// first, each to the lightest group: threads() groups, more where they would pass 512 KiB of
// source) where the compiler batches (Compiler::batches), else one source a group; each group is
// one Compiler::compile_many call, the groups on the thread pool, a worker taking the next group
// as it finishes one. The
// binaries go to the disk cache. The first exception (a user error) is rethrown after all groups.
void compile_programs(const std::vector<std::pair<Device*, PendingProgram*>>& programs);

// The Opts a kernel runs with on dev: none with NOOPT=1, BEAM search with BEAM=n (n > 0) where the
// device has a search space for it (Device::beam_space), else the device's heuristic.
std::vector<Opt> choose_opts(Device& dev, const ScheduleItem& item);

}  // namespace lg
