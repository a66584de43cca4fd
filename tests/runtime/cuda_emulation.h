#pragma once
// Runs CUDA source from the CUDA renderer on this machine's CPU, for tests: the parts of a kernel
// that CUDACHECK never executes (block and thread index math, grid padding, the shared-memory
// combine of GROUPTOP, the store guard) run here with the launch geometry the CUDA device uses.
//
// How: the renderer's CUDA prelude is replaced by a host shim (threadIdx/blockIdx as globals,
// __shared__ as static storage, dynamic shared memory as exactly the launch's bytes before a guard
// page, warp shuffles through a block-wide buffer, 16-bit floats as the C
// prelude's bit arithmetic, mma.sync and ldmatrix per warp from the PTX ISA's fragment layouts,
// cp.async written into shared memory only at the wait that covers it, TMA copies only at a wait
// on their mbarrier), the file is compiled by
// the host C++ compiler into a shared object, and each block runs as block[0] fibers (ucontext) on
// the calling thread, one block after another (so static storage is the block's shared memory):
// each fiber runs to its next __syncthreads (where it waits for the block's other unfinished
// threads), failed mbarrier wait (where it tries again next round) or mbarrier arrival (where it
// lets the threads behind it run first), then the next fiber, thread 0 first; a round in which no
// thread moves is a deadlock, reported as a broken protocol. A wgmma.wait_group returns once all
// 128 threads of the warpgroup are at it. A kernel declaring thread-block clusters runs one
// cluster at a time, its blocks' fibers together, each block with its own dynamic shared memory
// (static storage is then the cluster's: the cluster block matmul has none), the second block
// started once the first can no longer move alone.
// Slow (every emulated mma.sync and ldmatrix is two barriers) and only for small kernels.
#include <string>
#include <vector>

#include "codegen/program.h"

namespace lg::testing_util {

// Renders prog for CUDA, compiles it for the host and runs it once over `buffers` (one host
// pointer per DEFINE_GLOBAL slot). Compile errors fail with the compiler's message (gtest FAIL).
// warp_shuffle false: GROUPTOP combines through shared memory only (the HIP renderer's way).
// sizes: each buffer's elements, which a kernel reading through TMA tensor maps needs (the
// emulated copies read zeros past a tensor's rows, as the copy engine does).
// A persistent kernel (codegen/gpu_launch.h) runs on kEmulatedResidentBlocks blocks (clusters of
// blocks, in clusters), as if that many fit on the GPU: each walks several tiles, and (with a tile
// count not a multiple of 3) not all the same number.
inline constexpr int64_t kEmulatedResidentBlocks = 3;
void emulate_cuda(const LinearProgram& prog, const std::vector<void*>& buffers, bool warp_shuffle = true,
                  const std::vector<int64_t>& sizes = {});

}  // namespace lg::testing_util
