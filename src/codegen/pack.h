#pragma once
// Packing of a CPU matmul operand into a thread's own array (Opt PACK, codegen/opt.h): the copy a
// BLAS makes of a B panel before its micro-kernel walks it.
//
// A CPU matmul kernel's vector operand B (loaded as vectors along the output axis the store writes
// contiguously, broadcast to every row of the register tile) is read down a column panel: for each
// reduction step k, the panel's W elements (the vector lanes times the vector copies). Every row
// tile of the outer loop's trip reads the same panel. Read in place, the panel's rows lie one row
// of B apart: for a weight (out, in) read as dX = dY @ W, or an activation (tokens, d) read as
// dW = dY^T @ X, that is a power of two of 2 KiB or more, so all of a panel's lines fall into a few
// cache sets of L1 and L2 and the panel that should stay in L2 is evicted by itself (docs/
// performance.md: 58 against 148 GFLOP/s a thread for the same FFN input gradient).
//
// PACK s: the kernel's one LOAD of argument s, whose value depends on
//   - outer output loops O (LOOP, THREAD, SERIAL: the panel, and for a split reduction its part), and
//   - the ranges T = (t_0 .. t_{d-1}) of the reduction and the register copies (REDUCE, UPCAST,
//     UNROLL) it is read along, ordered reduce ranges first (in loop order), then the others with
//     the lowest id last (the first UPCAST of 16 trips is the vector lanes: codegen/vectorize.h);
// becomes
//   X    = DEFINE_LOCAL of S = prod |t_i| elements (the thread's own array: C renderers declare it
//          on the stack), X[mixed-radix(t)] holding the value at t;
//   copy = COOP loops c_i over each |t_i| in T's order (the lanes innermost: contiguous on both
//          sides) and one STORE X[mixed-radix(c)] = the load with T := c;
//   Xb   = BARRIER(X, the store);
// and the load becomes LOAD(Xb[mixed-radix(T)]): the same values, read from one contiguous block
// (W elements per k step, one step after another). The linearizer places the copy right inside
// the last loop of O to open (codegen/linearize.h), so it runs once per panel and every row tile
// inside reads the array.
// Widening: when the load is of a 16-bit float and its one user is a CAST to float32 (a bf16
// matmul's operand), the array is float32 and holds the CAST: the copy converts each element once,
// vector lanes at a time, and the kernel reads float32. Such a copy pays without an output loop to
// reuse it: the rows a register tile broadcasts are then a broadcast from memory (a load port)
// instead of a shift and a broadcast from a general register per element (codegen/heuristic.cpp).
// A float32 array over kPackBytes stays 16-bit (the copy as loaded; the CAST stays in the kernel).
// A load without the vector lanes (the kernel's first UPCAST: rows a tile broadcasts, read by
// address) orders T by its source's strides instead, the smallest innermost, so its copy reads
// runs of memory.
// Throws OptError when the kernel has GPU ranges, argument s is loaded at several indices or not
// at all, the load does not move along a reduction, its outer loops leave no output loop inside
// them to reuse a copy that does not widen, or the array would exceed kPackBytes or bring the
// kernel's arrays over kPackKernelBytes.
#include <cstdint>
#include <vector>

#include "ir/node.h"

namespace lg {

// The largest array one PACK may use (a thread's stack holds it; L2 is 1-2 MiB a core), and the
// most all of a kernel's arrays may take together (BEAM may pack every input; thread stacks are
// 8 MiB).
inline constexpr int64_t kPackBytes = 512 << 10;
inline constexpr int64_t kPackKernelBytes = 2 << 20;

NodeRef pack_operand(const NodeRef& ast, int64_t slot);

// The element of an array over the trips of `ranges` (the last fastest) that `values` (one per
// range) name: sum_i values[i] * prod_{j > i} |ranges[j]|.
NodeRef mixed_radix(const std::vector<const Node*>& ranges, const std::vector<NodeRef>& values);

}  // namespace lg
