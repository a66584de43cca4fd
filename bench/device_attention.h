#pragma once
// `lazygrad bench attention`: the fused attention (Tensor::flash_attention, docs/gpu.md "Attention
// kernels") against attention built from matmul and softmax (the Llama model's default), timed in
// the same run on any device. One line per sequence length and path:
//   attention <device> <dtype> B=<b> H=<h> KV=<kv> S=<s> D=<d> causal=<yes|no> path=<fused|matmul>
//             fwd_ms=<ms> fwd_tflops=<TFLOP/s> step_ms=<ms> step_tflops=<TFLOP/s> check=<ok|FAIL|none>
//             max_rel_err=<e>
// then `ratio fused/matmul step=<x>` when both ran. FLOPs are the usual count of attention
// (FlashAttention's): forward 4 B H S T D (half of it causal), forward and backward 3.5 times that,
// whatever the kernels recompute. step: forward and the gradients of q, k and v (of the sum of the
// output). A path that fails (out of memory at long sequences, say) prints why and the bench goes on.
// check: the fused output at 16 sampled rows against a float64 computation from the inputs read
// back (a FAIL exits non-zero); the matmul path's output against the fused one.
// Each path is captured by a Jit (tensor/jit.h) and replayed, so the host schedules nothing inside
// the timed runs. Runs on a GPU are asynchronous: each timed run is `repeats` back-to-back replays
// followed by a read of one element, which waits for all of them.
#include <cstdint>
#include <string>
#include <vector>

namespace lg::bench {

struct DeviceAttentionOptions {
  std::string device = "CUDA";
  std::string dtype = "bf16";  // bf16, fp16 or fp32
  int64_t batch = 1, heads = 32, kv_heads = 8, head_dim = 128;  // llama3.1-8b's attention
  std::vector<int64_t> seqs = {2048, 8192};
  bool causal = true;
  int repeats = 3;
  bool matmul = true;  // also time the matmul + softmax path
};

void run_device_attention(const DeviceAttentionOptions& o);

}  // namespace lg::bench
