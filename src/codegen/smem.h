#pragma once
// Shared-memory staging of a tensor-core kernel's mma operands (Opt SMEM, codegen/opt.h).
//
// After Opt TC and the Opts that tile it, every WMMA of the kernel reads fragment j of A (a_j,
// j < 8) and of B (b_j, j < 4) as an expression of
//   - the block's ranges (GLOBAL, LOOP) and the k step (REDUCE): the same in every thread of a
//     block at one time;
//   - the thread's own ranges T = (t_0 .. t_{d-1}): the LOCAL ranges (warps, and the lane, whose id
//     is the highest) and the UPCAST/UNROLL ranges it depends on, in id order (the lane last).
// A slot is one combination of T, s = mixed-radix(t_0 .. t_{d-1}) with the last fastest; there
// are S = prod |t_i| slots, and the S*F fragment values (F = 8 for A, 4 for B) are exactly the
// block's BM x 16 (A) or 16 x BN (B) tile for the k step. Staging makes, per operand:
//   X    = DEFINE_LOCAL of S*F elements: X[s*F + j] holds fragment j at slot s;
//   copy = a COOP range c over the S slots (the block's threads share it: thread i runs
//          c = i, i + threads, ...) and F STOREs X[c*F + j] = x_j with T := the digits of c;
//   Xb   = BARRIER(X, the F stores): the copy done by every thread of the block;
// and each x_j becomes LOAD(Xb[s(T)*F + j]). So the values the mma reads are those it read before,
// now each loaded once from global memory per block and k step (not once per warp that uses it).
// The linearizer places the copy loop, preceded by a barrier (the previous k step's reads are
// done), right before the first read, inside the k loop. A C renderer runs the COOP loop whole in
// every thread (its threads are loops: each fills its own copy of the tile), which gives the same
// values.
#include "ir/node.h"

namespace lg {

// Static shared memory a block may use without opting in (CUDA).
inline constexpr int64_t kSharedMemoryBytes = 48 * 1024;

// Opt SMEM: stages the A and B fragments of the kernel's WMMAs (above). Throws OptError when the
// kernel has no WMMA, is staged already, its fragments depend on a GROUP range, or the tiles need
// more than kSharedMemoryBytes.
NodeRef stage_tc_operands(const NodeRef& ast);

// The bytes of shared memory the DEFINE_LOCALs of a kernel (or program) use.
int64_t shared_memory_bytes(const NodeRef& ast);

}  // namespace lg
