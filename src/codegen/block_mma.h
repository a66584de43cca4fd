#pragma once
// Block-tiled tensor-core matmuls: Opt BLOCK_MMA (codegen/opt.h) and the BLOCK_MMA op (ir/ops.def).
//
// Opt TC maps a matmul onto mma.sync with every fragment loaded by its own lane from global memory.
// Fast GEMMs do it differently: a block's threads copy its A and B tiles into shared memory with
// coalesced 16-byte asynchronous copies (cp.async), several k tiles ahead (a pipeline of stages),
// and the warps read their mma fragments from there with ldmatrix. That main loop is written by
// hand (codegen/render_block_mma.h, as tinygrad registers hand-written GEMMs for its Llama run);
// Opt BLOCK_MMA decides where it applies and what every thread does with its results, so the
// kernel's epilogue (a cast, a residual add, the store's layout) stays generated.
//
// The operands must be plain 16-bit loads whose index is linear in m and k (n and k) with one of the
// two strides 1: element (m, k) of A at a_off + m*a_m + k*a_k (a_m or a_k is 1), (k, n) of B at
// b_off + n*b_n + k*b_k; a_off and b_off are the same for every thread of a block (they may depend
// on the kernel's other output axes, e.g. a batch or an attention head) and, with the other stride,
// multiples of 8 elements (16 bytes, so every copy is one aligned 16-byte piece). k may be several
// reduce axes that merge into one (each outer axis's stride the inner one's size times its stride,
// in both operands: grouped-query attention's dK and dV sum over the query heads and positions).
// The reduction may sum up to four such products (x @ W1^T and x @ W3^T share x, so the backward
// sums dH1 @ W1 + dH3 @ W3 in one reduction): the main loop runs once per product into the same
// accumulators.
//
// The kernel after the Opt (one thread per warp lane; every output axis but m and n a grid axis):
//   GLOBAL blk (M/BM * N/BN blocks; in groups of up to 8 block rows, so blocks that run together
//   share A and B panels in L2), LOCAL wm (warps_m), wn (warps_n), lane (32);
//   UPCAST tm (TM = BM/warps_m/16 mma tiles), tn (TN = BN/warps_n/8), e (4 elements per tile);
//   m = bm*BM + row, row = wm*(BM/warps_m) + tm*16 + lane/4 + 8*(e/2)
//   n = bn*BN + col, col = wn*(BN/warps_n) + tn*8 + 2*(lane%4) + e%2   (the PTX C fragment)
// and the reduction is BLOCK_MMA(row, col, wm, wn, lane, tm, tn, e, then per product p: A_p,
// a_off_p + bm*BM*a_m_p, B_p, b_off_p + bn*BN*b_n_p).
#include <vector>

#include "ir/node.h"

namespace lg {

// How a block tiles its outputs: BM x BN outputs per block, warps_m x warps_n warps, BK k per
// pipeline stage, `stages` k tiles in flight. wgmma: the main loop issues sm_90's warpgroup mmas
// (wgmma.mma_async m64nBNk16, both operands read from shared memory by descriptor) instead of
// ldmatrix and mma.sync; then BK is 64 (a row of a tile is one 128-byte swizzle atom), each warp
// holds 16 rows (warps_m = BM / 16, warps_n = 1: four warps, one warpgroup, per 64 rows); an
// operand contiguous along m or n is an MN-major tile (wgmma's transpose), as the PTX ISA allows
// for 16-bit types, so every layout the block matmul takes has it.
// specialized (wgmma only): the block has one more warpgroup, kBlockMmaProducerThreads threads
// that only copy tiles (the producer), and the warps above only compute (the consumers); they
// hand stages to each other through mbarriers instead of a barrier of the whole block per k tile
// (codegen/render_block_mma.h). The producer threads come after the consumers' (threads
// 32 * warps_m * warps_n and up), hold no outputs and leave the kernel after the main loop.
// tma (specialized only): one producer thread copies each operand's tile with TMA (a bulk tensor
// copy per 64 x rows box, the 128-byte swizzle done by the copy engine, completion counted in
// bytes on the stage's mbarrier) from a tensor map the runtime encodes per launch
// (codegen/gpu_launch.h: LaunchDims::tensor_maps); an operand contiguous along m or n is stored as
// 64-wide slabs (each box one 64 x 64 slab).
// persistent (tma only): the grid is the blocks that fit on the GPU at once (LaunchDims::persistent,
// the runtime sizes it), and each block walks the output tiles b, b + grid, ... in one loop; its
// mbarriers and both sides' place in the ring of stages carry over from tile to tile, so the
// producer copies the next tile's stages while the consumers store this tile's outputs, and no
// block starts with an empty pipeline.
// cluster (tma only): blocks run in thread-block clusters of `cluster` blocks
// (sm_90's __cluster_dims__) that hold neighbouring block rows of one block column, so they share
// B's tile: block r of a cluster copies slice r of it (BN / cluster rows of B) by TMA multicast into
// every block of the cluster, and a stage is free again only once every block's consumers are done
// with it (they arrive on each block's `empty` mbarrier). Each block reads its A tile and
// 1 / cluster of B's from L2 instead of all of B's. Persistent too: the grid is whole clusters, and
// a cluster's blocks walk the tile pairs b, b + grid, ... together.
struct BlockMmaTiling {
  int bm, bn, bk, warps_m, warps_n, stages;
  bool wgmma = false;
  bool specialized = false;
  bool tma = false;
  bool persistent = false;
  int cluster = 1;
  bool operator==(const BlockMmaTiling&) const = default;
};
inline constexpr int kBlockMmaProducerThreads = 128;
// The threads of a block of tiling t: its warps' and, when specialized, the producer's.
int64_t block_mma_threads(const BlockMmaTiling& t);
// Its tiles in the kernel's dynamic shared memory: stages * (BM + BN) * BK 16-bit elements (and,
// for wgmma, 1 KiB more to align the tiles to the 1024-byte swizzle pattern; specialized, two
// 8-byte mbarriers per stage after the tiles).
int64_t block_mma_shared_bytes(const BlockMmaTiling& t);

// The tilings Opt BLOCK_MMA's amount picks from. The heuristic's (the first
// kBlockMmaHeuristicTilings, each 48 KiB of shared memory, which every GPU gives a kernel):
// 0 is 128 x 128 (4 warps of 64 x 64, 3 stages of 32 k); then 128 x 64, 64 x 128 and 64 x 64 for
// smaller matmuls. Then, for BEAM and BLOCK_MMA_TILE (base/config.h), larger tiles in more shared
// memory (each tile fetched feeds more mmas, fewer barriers per k): 128 x 256 and 256 x 128 (8 warps
// of 64 x 64, 3 stages of 32 k: 72 KiB); 128 x 128 with 64 k per stage (96 KiB); 128 x 256 and
// 256 x 128 with 64 k (144 KiB); 128 x 128 with 4 stages of 32 k (64 KiB). Then the wgmma main
// loop (sm_90a only: GPUs that have it, codegen/heuristic_tc.h cuda_wgmma), 4 stages of 64 k
// (one in the mmas, two copied ahead): 128 x 256 (two warpgroups of 64 x 256: 193 KiB) and
// 128 x 128 (two of 64 x 128: 129 KiB). Then 12, the 128 x 256 wgmma tiling warp-specialized: a
// producer warpgroup copies all 4 stages ahead while the two consumer warpgroups compute; and 13,
// the same with its copies by TMA; 14, tiling 13 persistent; 15, tiling 13 in clusters of 2 blocks
// that share B's tile (TMA multicast); 16, tiling 15 persistent. A TMA tiling takes only operands
// whose rows the tensor map can describe: each tile lies within one row of ld elements of its
// buffer (every offset term along the strided axes a multiple of ld, and the contiguous extent
// plus the constant offset's column at most ld). A cluster tiling takes only kernels whose one grid
// axis is the block matmul's (no batch or head axis) with an even number of block rows.
const std::vector<BlockMmaTiling>& block_mma_tilings();
inline constexpr int kBlockMmaHeuristicTilings = 4;

// One product's operand layout (above).
struct BlockMmaProduct {
  int64_t a_m, a_k, b_n, b_k;
  bool operator==(const BlockMmaProduct&) const = default;
};

// BLOCK_MMA's arg (a Shape): K, the tiling (bm, bn, bk, warps_m, warps_n, stages, then 0 for
// mma.sync, 1 for wgmma, 2 for warp-specialized wgmma, 3 for that with TMA, 4 for that persistent,
// 5 for that with TMA in clusters of 2, 6 for that persistent),
// then a_m, a_k, b_n, b_k of each product.
struct BlockMmaArg {
  int64_t k;
  BlockMmaTiling tiling;
  std::vector<BlockMmaProduct> products;
  Shape to_shape() const;
  static BlockMmaArg from_shape(const Shape& s);
};
// BLOCK_MMA's sources before the products' (row, col, wm, wn, lane, tm, tn, e), and per product.
inline constexpr size_t kBlockMmaThreadSources = 8, kBlockMmaProductSources = 4;

// A TMA tiling's tensor maps (codegen/gpu_launch.h) for one of its BLOCK_MMA nodes: per product,
// A's and B's buffer slot, row length and box rows (a tile contiguous along k is one box of 64 k by
// BM or BN rows; one contiguous along m or n is 64-wide slabs, boxes of 64 k rows). In a cluster
// tiling B's K-major box is BN / cluster rows, the slice each block multicasts.
struct GpuTensorMap;
std::vector<GpuTensorMap> block_mma_tensor_maps(const Node& block_mma);

// Opt BLOCK_MMA c t: the matmul tc_candidates(ast)[c] on tiling t (above). Throws OptError when
// the kernel is not one (a padded k, reduce axes that do not merge, an operand that is not a plain
// linear 16-bit load), a size is not a multiple of its tile, or an operand's layout does not allow
// aligned 16-byte copies.
NodeRef apply_block_mma(const NodeRef& ast, int choice, int tiling);

}  // namespace lg
