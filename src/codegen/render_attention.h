#pragma once
// The hand-written attention kernels: the ATTENTION op (ir/ops.def, ir/attention.h) as C (CPU, and
// the CUDACHECK values) and as CUDA. Each renders one block of its kernel per call, 64 rows:
//   Forward  64 query rows of one (b, h): scores against every key (up to the block's last row,
//            causal), their softmax (CUDA: online, a running max and sum per row; C: two passes),
//            the weighted sum of v; writes the rows' outputs and log-sum-exps
//   GradQ    64 query rows: recomputes P = exp(x - L) from the stats, dS = P (dO.v - delta),
//            dQ = dS k / sqrt(D)
//   GradKV   64 key rows of one (b, kv head), over the query heads that share it and the queries
//            that see them: dV = P^T dO, dK = dS^T q / sqrt(D)
// CUDA: 128 threads per block (kAttentionThreads). With tensor cores (Opt TC), 16-bit inputs and
// a head dim that is a multiple of 16 all three run on tensor cores (mma.sync, FlashAttention-2's structure; P and dS
// are rounded to the input dtype as mma operands). Otherwise float32 CUDA cores, 8 rows per pass:
// tiles of 32 keys (queries for GradKV) widened to float32 in shared memory, one lane per key for
// the scores, the outputs spread over the block's threads. Head dims up to 128
// (kAttentionCudaMaxDim). Every loop, barrier and warp shuffle runs alike in every thread.
#include <cstdint>
#include <functional>
#include <string>

#include "ir/attention.h"
#include "ir/dtype.h"

namespace lg {

inline constexpr int64_t kAttentionThreads = 128;
inline constexpr int64_t kAttentionCudaMaxDim = 128;

// The kernel functions for inputs of dtype `in` (bf16, fp16 or float32), placed before the kernel.
std::string attention_c_source(DType in);
std::string attention_cuda_source(DType in);

// Whether the CUDA kernel of a (inputs of dtype in) runs on tensor cores: Opt TC marked it (the
// device has them), 16-bit inputs and a head dim that is a multiple of 16
// (lg_attention_{fwd,dq,dkv}_tc).
bool attention_uses_tensor_cores(const AttentionKernel& a, DType in);

// The dynamic shared memory its CUDA kernel takes (codegen/gpu_launch.h), 0 for those whose
// tiles are static __shared__ arrays: the dK/dV tensor-core kernel's k and v rows and two stages
// of q and dO tiles (64 KiB at head dim 128); the call passes it as `lg_dsmem`.
int64_t attention_cuda_shared_bytes(const AttentionKernel& a, DType in);

// The statement that runs an ATTENTION node's block; name_of: how the renderer refers to a value.
std::string attention_call(const Node& n, const std::function<std::string(const NodeRef&)>& name_of, bool cuda);

}  // namespace lg
