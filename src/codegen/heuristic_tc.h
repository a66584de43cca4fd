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

// Opts that put a bf16/fp16 matmul (tc_candidates) on tensor cores, or nullopt when the kernel is
// not one or is too small (m < 16, n < 8 or k < 16). Axes that are not multiples of the tile are
// padded (PADTO 16, 8, 16). Each warp computes up to 2 x 4 tiles (32 x 32 outputs: UPCAST of m/16
// and n/8, A fragments reused along n, B along m), a block up to 2 x 2 warps (LOCAL); every output
// axis left is a grid axis (GLOBAL).
std::optional<std::vector<Opt>> tc_heuristic_opts(const NodeRef& scheduled);

}  // namespace lg
