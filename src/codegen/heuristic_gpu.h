#pragma once
// The hand-written optimization choice for GPU kernels (CUDA, HIP) when BEAM is off and NOOPT is
// not set. It only returns Opts; apply_opts does the work, gpu_launch_dims reads the result.
#include <vector>

#include "codegen/heuristic_tc.h"
#include "codegen/opt.h"

namespace lg {

// The heuristic's choices as numbers; BEAM on a GPU searches them (runtime/beam.h), so every list
// it times is one this heuristic makes: a launch geometry it knows is legal.
struct GpuKnobs {
  bool tensor_cores = false;  // a bf16/fp16 matmul goes on tensor cores (Opt TC) where it can
  TcTiling tc;                // ... tiled so
  int block_threads = 256;    // most threads per block: LOCAL splits, GROUPTOP and row groups (32..1024)
  int register_tile = 4;      // outputs per thread along a reused axis of a reduction (UPCAST; 1: none)
  bool vector = true;         // elementwise kernels: 16 bytes per thread along the contiguous axis
  int64_t shared_limit = 48 << 10;  // most shared memory per block the device gives (BEAM skips block tilings past it)
  bool atomic_scatter = true;       // a scatter-add's positions run in parallel (Opt ATOMIC; ATOMIC_SCATTER)
  // The defaults (tc from TC_WARP, TC_BLOCK, SMEM); tensor_cores: the device can (cuda_tensor_cores);
  // wgmma: it has wgmma too (cuda_wgmma).
  static GpuKnobs defaults(bool tensor_cores, bool wgmma = false);
  bool operator==(const GpuKnobs&) const = default;
};

// Threads: LOCAL splits of the output axes, starting from the one the store writes contiguously
// (neighbouring threads touch neighbouring elements: coalesced), up to knobs.block_threads threads
// per block; an axis with no divisor of at least 32 is first padded (PADTO) to a multiple of 32.
// A reduction whose threads would each read a strided row (no load contiguous along that output
// axis; row sums, NT matmuls, full sums) is split over a group of up to knobs.block_threads
// threads along a reduce axis some load reads contiguously (GROUPTOP: coalesced reads, combined in
// shared memory). Other kernels with a reduction get a register tile: UPCAST by
// knobs.register_tile of an output axis that some load does not move along (each loaded value
// feeds that many accumulators). Elementwise kernels (knobs.vector) get a run of 16 bytes per
// thread along the contiguous axis (UPCAST 4 float32 / 8 bfloat16: one vector load or store,
// codegen/gpu_vector_access.h). Every output axis left is GLOBAL: one grid block per
// combination.
// Row kernels (a REDUCE that reads only some output axes: softmax, RMS norm) get the row schedule
// instead: one block per row, whose group of threads reduces the row together (GROUPTOP) and then
// writes its elements (GROUPOUT), so each reduction runs once per row. heuristic_gpu.cpp says why.
// knobs.tensor_cores (CUDA, sm_80 and later, TC=1): a bf16/fp16 matmul gets tensor cores instead
// (codegen/heuristic_tc.h).
// A scatter-add (knobs.atomic_scatter) first gets Opt ATOMIC (codegen/atomic_scatter.h): its
// scattered axis becomes an output axis like the others, its store an atomic add; the rest of the
// list is the elementwise schedule of that kernel.
std::vector<Opt> gpu_heuristic_opts(const NodeRef& ast, const GpuKnobs& knobs);
inline std::vector<Opt> gpu_heuristic_opts(const NodeRef& ast, bool tensor_cores = false) {
  return gpu_heuristic_opts(ast, GpuKnobs::defaults(tensor_cores));
}

}  // namespace lg
