#pragma once
// The arg flags of FLASH_ATTENTION and FLASH_ATTENTION_GRAD (ir/ops.def), and their shapes.
//   q (B, H, S, D), k and v (B, KV, T, D): H a multiple of KV; query head h reads kv head h / (H/KV).
//   FLASH_ATTENTION        -> (B, H, S, D+1) float32: the output rows, then each row's log-sum-exp
//   FLASH_ATTENTION_GRAD   dO (B, H, S, D), stats (B, H, S, 2) -> dQ (B, H, S, D) float32, or with
//                          kAttentionGradKV (B, KV, T, 2D) float32: dK, then dV
#include <cstdint>

#include "ir/node.h"

namespace lg {

inline constexpr int64_t kAttentionCausal = 1;  // key t > query s is masked (S == T)
inline constexpr int64_t kAttentionGradKV = 2;  // FLASH_ATTENTION_GRAD: dK and dV (without: dQ)

// One attention kernel (the ATTENTION kernel op's arg): which of the three, and its sizes. Its
// blocks each take kRows consecutive query rows (Forward, GradQ) or key rows (GradKV) of one
// (batch, head) (kv head for GradKV): block = (b * heads() + head) * row_blocks() + row block.
enum class AttentionKind : int64_t { Forward = 0, GradQ = 1, GradKV = 2 };
struct AttentionKernel {
  static constexpr int64_t kRows = 64;
  AttentionKind kind = AttentionKind::Forward;
  int64_t B = 0, H = 0, KV = 0, S = 0, T = 0, D = 0;
  bool causal = false;
  bool tensor_cores = false;  // set by Opt TC (GPU heuristic: CUDA, sm_80 and later, TC=1)

  int64_t heads() const { return kind == AttentionKind::GradKV ? KV : H; }
  int64_t row_blocks() const { return ((kind == AttentionKind::GradKV ? T : S) + kRows - 1) / kRows; }
  int64_t blocks() const { return B * heads() * row_blocks(); }
  // Its DEFINE_GLOBALs after the output: q, k, v (Forward) and dO, stats (gradients).
  int inputs() const { return kind == AttentionKind::Forward ? 3 : 5; }
  const char* label() const;  // "fwd", "dq", "dkv"
  Shape arg() const;
  static AttentionKernel from_arg(const Shape& a);
};

// A kernel AST (kernel stage) that is an ATTENTION kernel: its schedule is fixed (one loop over
// its blocks; on GPUs that loop is the grid), so heuristics and BEAM leave it alone.
bool is_attention_kernel(const NodeRef& ast);

// Output shape of a FLASH_ATTENTION or FLASH_ATTENTION_GRAD node; aborts (internal error) on
// sources the Tensor front end would have refused (tensor.h: flash_attention).
Shape attention_shape(Op op, const std::vector<NodeRef>& src, int64_t flags);

}  // namespace lg
