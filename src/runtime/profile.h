#pragma once
// PROFILE=n: where a run's kernel time went. Every kernel launch (realize and Jit replays) is
// timed alone on its device (Program::timed_run: CUDA events around the launch, then a wait; the
// host clock on the CPU, whose kernels are synchronous) and summed per kernel (device and AST).
// At exit stderr gets the table: the n longest kernels by total time (PROFILE=1: 25) with their
// launches, total and mean time, share of the kernel time, and GFLOP/s and GB/s from their
// kernel_cost (schedule/kernel_cost.h); then the rest in one line and the totals. Launches run one
// at a time (the wait), so the sum is kernel time without overlap or launch gaps, not wall time,
// and the run is slower than without PROFILE. Copies and allreduce transfers are not in it.
// PROFILE_CSV=path records the same and writes every row to path at exit (profile_csv). On a
// device that runs nothing (CUDANULL) the times are 0 but the costs are the step's.
#include <cstddef>
#include <string>
#include <vector>

#include "ir/node.h"
#include "runtime/device.h"
#include "schedule/kernel_cost.h"

namespace lg {

struct ProfileRow {
  std::string device, name;
  NodeRef ast;
  KernelCost cost;  // of one launch
  int64_t blocks = 0, threads = 0;  // a GPU program's grid blocks and threads per block (0: a host program)
  size_t launches = 0;
  double seconds = 0;  // all launches
};

// Runs p once with args. With PROFILE set, timed and added to the row of (device, ast); the
// row's cost comes from ast and args.sizes at its first launch.
void run_program(Program& p, const KernelArgs& args, const std::string& device, const std::string& name,
                 const NodeRef& ast);
// What was recorded so far, the longest total time first.
std::vector<ProfileRow> profile_rows();
void clear_profile();
// The table PROFILE prints at exit: the `top` longest rows, the rest summed, the totals.
std::string profile_table(size_t top);
// Every row as CSV (PROFILE_CSV writes it at exit): a header, then device, kernel, launches,
// seconds (all launches), flops_per_launch, bytes_per_launch, blocks, threads (per block; both 0
// for a host program); the longest first. Kernel names hold no commas. tools/roofline.py reads it.
std::string profile_csv();
// Writes profile_csv() to path atomically (a temporary file renamed over it); "" or why not.
std::string write_profile_csv(const std::string& path);

}  // namespace lg
