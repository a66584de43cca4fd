#pragma once
// The interpreter's ATTENTION op (ir/ops.def): one block of an attention kernel computed from the
// op's definition, in double precision, rows one at a time: every score of the row, its maximum,
// the exponentials and their sum, then the output (two passes, no running rescale). Slow; the
// reference the C and CUDA kernels (codegen/render_attention.h) are checked against.
#include <cstdint>
#include <vector>

#include "ir/attention.h"

namespace lg {

// buffers: the kernel's slots (output first, then q, k, v[, dO, stats]); sizes: their elements.
// Checks every index against its buffer.
void interp_attention(const AttentionKernel& a, DType in, int64_t block, const std::vector<void*>& buffers,
                      const std::vector<int64_t>& sizes);

}  // namespace lg
