#pragma once
// The launch geometry of a GPU kernel (CUDA, HIP), read from its linear program. The renderer
// writes the index math from it and the runtime launches with its grid and block, so both agree by
// construction.
//
//   GLOBAL ranges are the grid's axes and LOCAL ranges the block's (codegen/opt.h: Opts GLOBAL,
//   LOCAL and GROUPTOP). Output ranges must sit in the program's outer loop nest (before any
//   statement); a LOCAL range that an accumulator reduces over (GROUPTOP) sits where its
//   reduction's loops open. Each set is flattened, the range met last in the program varying
//   fastest:
//     block b  = blockIdx.x + blockIdx.y * gridDim.x   in [0, blocks)
//     thread t = threadIdx.x                           in [0, threads)
//     range r  = (b or t / r.stride) % r.size
//   A grid of more than 2^31-1 blocks is 2-D and may cover more than `blocks`: the kernel returns
//   early for b >= blocks (grid_padded). Every other RANGE stays a loop inside the thread.
#include <cstdint>
#include <vector>

#include "codegen/program.h"

namespace lg {

inline constexpr int64_t kGpuMaxThreads = 1024;  // per block, CUDA and HIP

struct GpuAxis {
  const Node* range;
  bool local;      // a block (thread) axis, else a grid (block) axis
  bool reduced;    // a LOCAL range an accumulator reduces over: its threads combine their values
  int64_t size;    // trips of the range
  int64_t stride;  // of the flattened block or thread index
};

struct LaunchDims {
  std::vector<GpuAxis> axes;  // in program order
  int64_t blocks = 1;         // product of the GLOBAL sizes
  int64_t threads = 1;        // product of the LOCAL sizes (<= kGpuMaxThreads)
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  bool grid_padded = false;  // grid[0] * grid[1] > blocks
};

// Aborts (internal error) when a GLOBAL or unreduced LOCAL range is not in the outer nest, a bound
// is not a constant, or the block has more than kGpuMaxThreads threads.
LaunchDims gpu_launch_dims(const LinearProgram& prog);

}  // namespace lg
