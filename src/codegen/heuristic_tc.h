#pragma once
// The tensor-core part of the GPU heuristic (codegen/heuristic_gpu.h, codegen/tensor_core.h).
#include <optional>
#include <string>
#include <vector>

#include "codegen/opt.h"

namespace lg {

// Whether kernels for a CUDA architecture ("sm_90", "compute_80", ...) may use Opt TC: mma.sync
// m16n8k16 with bf16 needs sm_80 or later; TC=0 (base/config.h) turns it off.
bool cuda_tensor_cores(const std::string& arch);
// Whether they may use wgmma (block-matmul tilings with the warpgroup main loop): the arch-specific
// sm_90a target (H100, H200; what the CUDA device compiles for on compute capability 9.0).
bool cuda_wgmma(const std::string& arch);

// How a tensor-core matmul is tiled: at most warp_m x warp_n mma tiles per warp (UPCAST of m/16
// and n/8: A fragments reused along n, B along m) and block_m x block_n warps per block (LOCAL);
// smem: the block's tiles staged in shared memory (Opt SMEM) where they fit. Powers of two.
// run_bytes (0, 8, 16 or 32): each lane reads its fragment elements in runs of that many bytes
// (lane runs): along k with TC's lane runs (tensor_core.h) for both operands, and along m (n) for
// an operand contiguous there, by an UPCAST of m (n) before TC by run_bytes / 2 elements (counted
// in the warp's tiles): lane g's tile row is then that many neighbouring elements, and so are the
// outputs each lane stores. 0: the PTX order (4-byte pairs; what SMEM stages).
// block: a matmul that Opt BLOCK_MMA can take (codegen/block_mma.h: sizes multiples of a block
// tile, operands contiguous along one axis) gets it instead, and the fields above do not apply to
// it; block_tiling: which of block_mma_tilings() (-1: the heuristic's pick, below; where that
// tiling does not apply, by shape, layout or target, the heuristic's pick too).
struct TcTiling {
  int warp_m = 4, warp_n = 8, block_m = 2, block_n = 2;
  bool smem = false;
  int run_bytes = 16;
  bool block = true;
  int block_tiling = -1;
  bool wgmma = false;  // the target has wgmma (cuda_wgmma): block tilings that use it may be taken
  static TcTiling from_config();  // TC_WARP, TC_BLOCK, SMEM, TC_RUN, BLOCK_MMA, BLOCK_MMA_TILE (base/config.h)
  bool operator==(const TcTiling&) const = default;
};

// Opts that put a bf16/fp16 matmul (tc_candidates) on tensor cores, or nullopt when the kernel is
// not one or is too small (m < 16, n < 8 or k < 16). Axes that are not multiples of the tile are
// padded (PADTO 16, 8, 16). Each warp computes up to tiling.warp_m x tiling.warp_n tiles (the
// largest counts that divide the tiles there are), a block up to tiling.block_m x block_n warps;
// every output axis left is a grid axis (GLOBAL). With tiling.block, a matmul BLOCK_MMA takes gets
// the first of the heuristic's block_mma_tilings() that gives at least kBlockMmaMinBlocks blocks,
// else the last that applies (smaller tiles, more blocks); tiling.block_tiling picks one instead
// where it applies.
inline constexpr int64_t kBlockMmaMinBlocks = 128;
std::optional<std::vector<Opt>> tc_heuristic_opts(const NodeRef& scheduled, const TcTiling& tiling = TcTiling::from_config());

}  // namespace lg
