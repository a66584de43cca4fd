#pragma once
// The hand-written attention kernels: the ATTENTION op (ir/ops.def, ir/attention.h) as C (CPU, and
// the CUDACHECK values) and as CUDA. Each renders one block of its kernel per call:
//   Forward  8 query rows of one (b, h): scores against every key (up to the last row's, causal),
//            an online softmax (running max and sum per row), the weighted sum of v; writes the
//            rows' outputs and log-sum-exps
//   GradQ    8 query rows: recomputes P = exp(x - L) from the stats, dS = P (dO.v - delta),
//            dQ = dS k / sqrt(D)
//   GradKV   8 key rows of one (b, kv head), over the query heads that share it and the queries
//            that see them: dV = P^T dO, dK = dS^T q / sqrt(D)
// CUDA: 128 threads per block (kAttentionThreads); keys (queries for GradKV) go through shared
// memory in tiles of 32 as float32, one lane per key of the tile, and the block's outputs are
// spread over its threads. float32 CUDA cores, no tensor cores yet; head dims up to 128
// (kAttentionCudaMaxDim). Every loop and warp shuffle runs alike in every thread of the block.
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

// The statement that runs an ATTENTION node's block; name_of: how the renderer refers to a value.
std::string attention_call(const Node& n, const std::function<std::string(const NodeRef&)>& name_of, bool cuda);

}  // namespace lg
