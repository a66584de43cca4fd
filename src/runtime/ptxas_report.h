#pragma once
// What ptxas says of a compiled CUDA kernel (NVRTC with --ptxas-options=-v; PTXAS=1, docs/debugging.md
// "What ptxas says of a kernel"): per function, its registers, spills, stack and static shared
// memory, and ptxas's remarks where it made the wgmma pipeline wait for its registers. The remarks
// name a performance loss that neither the emulation (tests/runtime/cuda_emulation.h) nor a value
// check can see: the kernel computes the right values, its mmas one after another.
//
// Read from the log's lines, in either form ptxas prints them (NVRTC's and nvcc's):
//   ptxas info    : Compiling entry function 'lg_kernel' for 'sm_90a'
//   ptxas info    : Function properties for lg_kernel
//       40 bytes stack frame, 36 bytes spill stores, 64 bytes spill loads
//   ptxas info    : Used 255 registers, used 1 barriers, 32768 bytes smem
//   ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized ...
//                   in the function 'lg_kernel'
// A log without these lines (a virtual architecture's: no ptxas ran) has no functions.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lg {

struct PtxasFunction {
  std::string name;
  int registers = -1;  // -1: the log has no "Used N registers" line for it
  int barriers = 0;
  int64_t stack_bytes = 0, spill_store_bytes = 0, spill_load_bytes = 0;
  int64_t shared_bytes = 0;  // static shared memory ("bytes smem"); dynamic is the launch's
  // ptxas's remarks about wgmma ("(C7511) Potential Performance Loss: ..."), as it wrote them
  std::vector<std::string> wgmma_remarks;
};

struct PtxasReport {
  std::vector<PtxasFunction> functions;  // in the order the log names them
};

PtxasReport parse_ptxas_log(std::string_view log);

// The lines of a compile's log that ptxas wrote (those that begin "ptxas"), each with its newline:
// what parse_ptxas_log reads, without the front end's warnings (what the disk cache keeps).
std::string ptxas_lines(std::string_view log);

// Whether ptxas says the kernel runs slower than written: a function spills registers, or ptxas
// serialized its wgmmas or injected waits for their registers.
bool slower_than_written(const PtxasReport& r);

// One line: each function's "NAME: N registers, no spills" (or "B bytes of spills"), its stack and
// static shared memory where not zero, and when slower_than_written ". WARNING (slower than
// written):" with each spill and each remark (once per code, with how many places). "no ptxas
// report" for a log with none.
std::string describe(const PtxasReport& r);

}  // namespace lg
