#pragma once
// The launch geometry of a GPU kernel (CUDA, HIP), read from its linear program. The renderer
// writes the index math from it and the runtime launches with its grid and block, so both agree by
// construction.
//
//   GLOBAL ranges are the grid's axes, LOCAL ranges the block's, and every GROUP range of the
//   kernel is the block's one group axis (codegen/opt.h: Opts GLOBAL, LOCAL, GROUPTOP, GROUPOUT).
//   GLOBAL and LOCAL ranges must sit in the program's outer loop nest (before any statement): their
//   iterations are the kernel's blocks and threads. A GROUP range may open anywhere (a GROUPTOP
//   range where its reduction's loops open, a GROUPOUT range after the row's reductions), but no
//   two GROUP ranges are ever open at the same time and all have the same size: each in turn
//   spreads its iterations over the same threads. The grid and the LOCAL axes are flattened, the
//   range met last in the program varying fastest; the group axis varies fastest of all (its
//   neighbouring threads read neighbouring elements, and warps combine inside it):
//     block b  = blockIdx.x + blockIdx.y * gridDim.x   in [0, blocks)
//     thread t = threadIdx.x                           in [0, threads)
//     range r  = (b or t / r.stride) % r.size          (a GROUP range: stride 1)
//   A grid of more than 2^31-1 blocks is 2-D and may cover more than `blocks`: the kernel returns
//   early for b >= blocks (grid_padded). Every other RANGE stays a loop inside the thread.
//   The hand-written main loops (a BLOCK_MMA's pipeline, attention's dK/dV kernel) keep their
//   tiles in the kernel's dynamic shared memory, `shared_bytes` of it per block: the renderer
//   declares it (LG_DYNAMIC_SHARED) and the runtime launches with it (past 48 KiB after raising
//   the kernel's limit). Generated __shared__ arrays (reductions, LOCAL tiles) are static, not counted.
//   A warp-specialized block matmul (codegen/block_mma.h) adds its producer warpgroup's threads
//   after those of the ranges: they belong to no range and leave after the main loop.
//   A persistent one (`persistent`) is launched with fewer blocks than `blocks`, as many as fit on
//   the GPU at once (cap_persistent_grid, by the runtime): each block runs the kernel's body for
//   b = blockIdx.x, blockIdx.x + gridDim.x, ... below `blocks`, in one loop.
//   A cluster tiling's (`cluster` > 1) blocks run in thread-block clusters of that many consecutive
//   blocks along x (the kernel declares __cluster_dims__): the grid is 1-D and a multiple of it
//   (a persistent one's too: cap_persistent_grid keeps whole clusters).
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/program.h"

namespace lg {

inline constexpr int64_t kGpuMaxThreads = 1024;  // per block, CUDA and HIP

struct GpuAxis {
  const Node* range;
  bool local;      // a thread axis (LOCAL or GROUP), else a grid (block) axis
  bool group;      // a GROUP range: the block's group axis
  bool reduced;    // a GROUP range an accumulator reduces over: its threads combine their values
  int64_t size;    // trips of the range
  int64_t stride;  // of the flattened block or thread index
};

// A TMA tensor map (a `tma` block-matmul tiling, codegen/block_mma.h) that the runtime encodes for
// each launch and passes after the buffers (kernel parameter lg_tmap<i>, 128 bytes): the 16-bit
// buffer of slot `slot` as ceil(elements / ld) rows of ld elements, 2 bytes each, rows ld * 2 bytes
// apart, read in boxes of 64 elements (128 bytes: the 128-byte swizzle's span) by `box_rows` rows.
struct GpuTensorMap {
  int64_t slot, ld, box_rows;
  bool operator==(const GpuTensorMap&) const = default;
};

// cuTensorMapEncodeTiled's arguments for a GpuTensorMap over a buffer of `elements` elements: the
// CUDA runtime passes them (16-bit elements, element strides 1, the 128-byte swizzle, zeros past
// the tensor) and the emulation (tests/runtime/cuda_emulation.h) copies boxes by them.
struct TensorMapEncoding {
  uint64_t dims[2];           // elements along a row (ld), rows (ceil(elements / ld))
  uint64_t row_stride_bytes;  // globalStrides[0]: ld * 2
  uint32_t box[2];            // 64 elements (128 bytes), box_rows rows
};
TensorMapEncoding tensor_map_encoding(const GpuTensorMap& m, int64_t elements);
// The first of cuTensorMapEncodeTiled's requirements (cuda.h's documentation of it, for rank 2,
// no interleave, the 128-byte swizzle) that `e` over a buffer at `address` breaks, or "": the
// address 16-byte aligned; each dimension 1 to 2^32; the row stride a multiple of 16 below 2^40
// and at least a row; each box dimension 1 to 256; the box's row a multiple of 16 bytes and at most
// the swizzle's 128.
std::string tensor_map_violation(const TensorMapEncoding& e, uintptr_t address);

struct LaunchDims {
  std::vector<GpuAxis> axes;  // in program order, one per GLOBAL, LOCAL or GROUP range
  int64_t blocks = 1;         // product of the GLOBAL sizes
  int64_t threads = 1;        // product of the LOCAL sizes and the group size (<= kGpuMaxThreads)
  int64_t group = 1;          // threads of the group axis (1: the kernel has no GROUP range)
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  bool grid_padded = false;  // grid[0] * grid[1] > blocks
  int64_t shared_bytes = 0;  // dynamic shared memory per block (a multiple of 16)
  std::vector<GpuTensorMap> tensor_maps;  // per product of its block matmul: A's, then B's
  bool persistent = false;   // the body loops over the blocks; the grid is cap_persistent_grid's
  int64_t cluster = 1;       // blocks per thread-block cluster (consecutive along x)
};

// A persistent kernel's grid: min(blocks, resident) blocks along x (resident: how many of its
// blocks the GPU runs at once, at least 1), rounded down to whole clusters (at least one). Leaves
// any other kernel as it is.
void cap_persistent_grid(LaunchDims& d, int64_t resident);

// Dynamic shared memory past this needs the kernel's limit raised (cuFuncSetAttribute).
inline constexpr int64_t kGpuDefaultSharedLimit = 48 << 10;

// Aborts (internal error) when a GLOBAL or LOCAL range is not in the outer nest, GROUP ranges
// differ in size or nest, a bound is not a constant, or the block has more than kGpuMaxThreads
// threads.
LaunchDims gpu_launch_dims(const LinearProgram& prog);

}  // namespace lg
