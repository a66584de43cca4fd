#pragma once
// The hand-written main loop of Opt BLOCK_MMA (codegen/block_mma.h) in CUDA C, and its call.
//
// lg_block_mma<...>() runs in every thread of the block together (it has barriers) and leaves the
// thread's accumulators in acc[tm][tn] (an mma tile's C fragment: element e at row g + 8*(e/2),
// column 2t + e%2 of tile (tm, tn) of warp (wm, wn)). Per k tile of BK (a pipeline of `stages`):
//   - copies: the block's A tile (BM x BK) and B tile (BK x BN) go to shared memory in 16-byte
//     pieces along each operand's contiguous axis (consecutive threads, consecutive pieces:
//     coalesced), with cp.async, `stages - 1` k tiles ahead of the mmas;
//   - shared layout: a tile is stored as in memory, rows along the strided axis, the 16-byte
//     chunks of a row permuted by an XOR with the row (so the 8 rows one ldmatrix reads sit in 8
//     different bank groups);
//   - fragments: ldmatrix.x4 reads a 16x16 A fragment or two 16x8 B fragments per instruction
//     (.trans where the tile is stored k-major for A or n-major for B);
//   - one cp.async.wait_group and one __syncthreads per k tile.
// Its stages live in the kernel's dynamic shared memory (a pointer argument), so tiles past
// 48 KiB are possible and the products of one reduction share them.
// lg_block_wgmma<...>() is its sibling for the wgmma tilings (sm_90a): the same copies, tiles in
// the 128-byte swizzle a wgmma descriptor names (K-major or MN-major per operand), and per warpgroup
// of 64 rows wgmma.mma_async reading both from shared memory, one k tile's group of mmas in flight
// across the next barrier (copies two k tiles ahead); the accumulators come out in the same
// C-fragment layout (acc[0][tn]).
// A `specialized` tiling's main loop is warp-specialized: after lg_ws_setup (the mbarriers),
// the producer warpgroup (threads 2 * BM and up) runs lg_ws_produce for each product, copying the
// stages, and leaves the kernel; the consumer warpgroups run lg_ws_consume, the wgmmas, into the
// same accumulator layout. They hand stages to each other through mbarriers. A `persistent` one
// runs once per output tile inside the kernel's loop over its tiles: the mbarriers are set up
// once before it, and each side's place in the ring carries over to the next tile.
// It uses the dialect prelude's primitives (render_cuda.cpp; the test emulation has its own):
// lg_cp_async16, lg_cp_async_commit, lg_cp_async_wait<N>, lg_ldmatrix_x4[_trans],
// lg_mma_m16n8k16_{bf16,f16}; for wgmma lg_fence_proxy_async, lg_wgmma_fence, lg_wgmma_commit,
// lg_wgmma_wait<N>, lg_wgmma_m64n{128,256}k16_{bf16,f16}<TA, TB>; warp-specialized also
// lg_mbarrier_init, lg_fence_mbarrier_init, lg_mbarrier_arrive, lg_mbarrier_wait.
#include <string>
#include <vector>

#include "codegen/block_mma.h"
#include "ir/dtype.h"

namespace lg {

// The template, emitted once before a kernel that has a BLOCK_MMA.
extern const char* const kBlockMmaSource;

// One product's operands as C expressions: the pointers and the block's offsets.
struct BlockMmaOperands {
  std::string a, a_off, b, b_off;
};

// The calls for one BLOCK_MMA: declares `acc` (lg_mma_f32x4[TM][TN]) and fills it with the sum of
// the products (one main loop each). wm, wn, lane: the thread's warp and lane; t: the thread's
// index in the block (every thread of the block 0..threads-1 runs them); smem: the block's dynamic
// shared memory (codegen/gpu_launch.h: block_mma_shared_bytes of it).
// A persistent tiling's calls are made once per tile, inside the kernel's loop over them, and go
// on to the next tile where another tiling's producer leaves (`continue`).
std::string block_mma_call(const BlockMmaArg& arg, DType input, const std::string& acc,
                           const std::vector<BlockMmaOperands>& operands, const std::string& wm, const std::string& wn,
                           const std::string& lane, const std::string& t, const std::string& smem);

// A persistent tiling's state that outlives the tiles, which the kernel declares before its loop
// over them: the thread's place in the ring of stages (kBlockMmaPersistentPipe) and the mbarriers
// (lg_ws_setup, run by every thread of the block).
inline constexpr const char* kBlockMmaPersistentPipe = "lg_pipe";
std::string block_mma_persistent_setup(const BlockMmaArg& arg, const std::string& t, const std::string& smem);
// What a persistent tiling's kernel runs after its loop over the tiles: in clusters, the producer
// thread's wait for the last releases (lg_ws_drain); else nothing.
std::string block_mma_persistent_teardown(const BlockMmaArg& arg, const std::string& t,
                                          const std::string& smem);

}  // namespace lg
