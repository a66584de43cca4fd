#pragma once
// The hand-written optimization choice for GPU kernels (CUDA, HIP) when BEAM is off and NOOPT is
// not set. It only returns Opts; apply_opts does the work, gpu_launch_dims reads the result.
#include <vector>

#include "codegen/opt.h"

namespace lg {

// Threads: LOCAL splits of the output axes, starting from the one the store writes contiguously
// (neighbouring threads touch neighbouring elements: coalesced), up to kGpuBlockThreads threads
// per block; an axis with no divisor of at least 32 is first padded (PADTO) to a multiple of 32.
// A reduction whose threads would each read a strided row (no load contiguous along that output
// axis; row sums, NT matmuls, full sums) is split over a group of up to 256 threads along a reduce
// axis some load reads contiguously (GROUPTOP: coalesced reads, combined in shared memory). Other
// kernels with a reduction get a register tile: UPCAST by 4 of an output axis that some load does
// not move along (each loaded value feeds 4 accumulators). Elementwise kernels get a run of 16
// bytes per thread along the contiguous axis (UPCAST 4 float32 / 8 bfloat16: one vector load or
// store, codegen/gpu_vector_access.h). Every output axis left is GLOBAL: one grid block per
// combination.
// Row kernels (a REDUCE that reads only some output axes: softmax, RMS norm) get the row schedule
// instead: one block per row, whose group of threads reduces the row together (GROUPTOP) and then
// writes its elements (GROUPOUT), so each reduction runs once per row. heuristic_gpu.cpp says why.
// tensor_cores (CUDA, sm_80 and later, TC=1): a bf16/fp16 matmul gets tensor cores instead
// (codegen/heuristic_tc.h).
std::vector<Opt> gpu_heuristic_opts(const NodeRef& ast, bool tensor_cores = false);

inline constexpr int kGpuBlockThreads = 256;

}  // namespace lg
