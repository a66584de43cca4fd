#pragma once
// Opt ATOMIC (codegen/opt.h): a scatter-add whose scattered axis runs in parallel.
//
// The scheduler writes a SCATTER_ADD (the embedding's gradient: table[ids[t], c] += g[t, c]) as one
// kernel, SINK(STORE(i, LOAD(i) + v)), whose scattered axis t is a SERIAL loop (schedule/kernelize.h
// kernelize_scatter): every thread walks all of t in order, so two positions with the same id add
// in a fixed order, and only the other axes (c) are parallel. On a GPU that is a few blocks each
// making one dependent read-modify-write of memory per position (the `llama3.1-8b` step's
// S_8192_4096: 2 blocks, 8192 round trips).
//
// ATOMIC rewrites the kernel to SINK(STORE[ADD](i, v)): the store adds v to the element atomically
// (ir/node.h is_atomic_add: the GPU preludes' lg_atomic_add, CUDA's atomicAdd and HIP's
// unsafeAtomicAdd; the C prelude's compare-and-swap loop; the interpreter's add), and t becomes an ordinary
// output axis (LOOP, the outermost), so the other Opts spread it over threads and blocks like any elementwise
// axis. The sum is the same; the order in which a repeated id's values are added is not fixed any more, so
// float results may differ in their last bits from run to run.
//
// It applies to a kernel of one STORE whose value is the LOAD of the same INDEX plus a value, with
// exactly one SERIAL range, every other range LOOP or REDUCE (ATOMIC comes first), and a stored
// dtype that atomic_add_dtype accepts.
#include "ir/node.h"

namespace lg {

// The element types an atomic add stores: float32, float64, int32 (what CUDA's and HIP's atomic
// adds take on every architecture lazygrad targets).
bool atomic_add_dtype(DType t);

// Whether Opt ATOMIC applies to this kernel (above).
bool is_serial_scatter(const NodeRef& ast);

// The kernel with its scatter made atomic; OptError when is_serial_scatter is false.
NodeRef apply_atomic_scatter(const NodeRef& ast);

}  // namespace lg
