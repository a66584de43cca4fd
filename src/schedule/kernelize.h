#pragma once
// Kernelize: the rewrite that turns one realize point into a kernel AST.
//
// It starts from STORE(INDEX(DEFINE_GLOBAL 0, flat(r0..rn)), AT(point, true, r0..rn)) and pushes AT
// down the tensor graph (top down): through movement ops AT becomes index arithmetic on the loop
// variables, through ALU ops it distributes over the sources, at a REDUCE_AXIS it opens REDUCE
// ranges, at a PAD it adds a validity gate, and at a buffer or another realize point it becomes a
// LOAD. What is left is the kernel stage: no shapes, no movement ops, no AT.
#include <optional>
#include <unordered_map>

#include "ir/node.h"
#include "rewrite/spec.h"

namespace lg {

// Slot pointers start at a multiple of this many bytes into their buffer (KernelizeResult::offsets).
inline constexpr int64_t kSlotAlignBytes = 64;

struct KernelizeResult {
  NodeRef ast;                   // SINK(STORE(...)...), or SINK(ATTENTION(...))
  std::vector<NodeRef> buffers;  // BUFFER nodes by DEFINE_GLOBAL slot; [0, outputs) are written
  std::string name;              // "E_..." / "r_..." from the output and reduce sizes
  // By slot: the element of the buffer where the kernel's pointer for that slot starts (its indices
  // count from there). A view at a large offset (a layer's weight in a flat parameter buffer, an
  // optimizer's run) is read through a moved pointer instead of an offset in the AST, so equal
  // work on other runs of a buffer is the same kernel and compiles once. Offsets are multiples of
  // 64 bytes (kernels may assume aligned slot pointers), and the smallest index on each slot stays
  // at least 0. A buffer read at places far apart has a slot for each (buffers lists it again),
  // except the output buffer, whose one slot starts at its smallest: slots that alias only read.
  std::vector<int64_t> offsets;
  // What the kernel loads: realize points (by their tensor-stage node) and BUFFER leaves. Reading an
  // ASSIGN node means the new value of its buffer; reading the BUFFER itself means the old one.
  std::vector<const Node*> reads;
  // The elements of each loaded BUFFER the kernel may touch (inclusive, from the index bounds): an
  // ASSIGN into one part of a buffer need not wait for readers of another part.
  struct Span {
    const Node* buffer;
    int64_t lo, hi;
  };
  std::vector<Span> spans;
  size_t outputs = 1;  // slots [0, outputs) are written, one STORE each (kernelize_outputs)
};

// point: the realize point; out: its buffer, written from element out_offset on (an ASSIGN into a
// range of a buffer); realized: how every other realize point is read: its buffer, or a contiguous
// range view of one (an ASSIGN into a range).
// A SCATTER_ADD point: one kernel over the values' positions, the scattered axis a SERIAL loop
// innermost (duplicate indices add in order), each position adding its value into out at the
// loaded index: out[..., index[j], ...] += values[j] (skipped when the index is out of range).
KernelizeResult kernelize_scatter(const NodeRef& point, const NodeRef& out,
                                  const std::unordered_map<const Node*, NodeRef>& realized, int64_t out_offset = 0);

KernelizeResult kernelize(const NodeRef& point, const NodeRef& out,
                          const std::unordered_map<const Node*, NodeRef>& realized, int64_t out_offset = 0);

// Several realize points (schedule/multi_output.h decides which) as one kernel of several outputs:
// one STORE per point into outs[k] (slot k) from element out_offsets[k] on, over the loops of the
// first point of the most elements; every other point has its shape, or is a row of it (its
// leading axes, then axes of size 1: a row's maximum beside the row's elements), stored at the
// row's index. A point that another one reads is not loaded but computed in place: the same nodes
// as its own STORE's value, so once. That is right only at the element being written (a row's
// index read through movement ops counts once folded; a read under a gather's or pad's gate is
// computed ungated, as its STORE is); a point read at another element gives nothing (keep the
// kernels apart: its value there may already be overwritten, or not yet written, by another
// thread), and so do shapes that are neither.
std::optional<KernelizeResult> kernelize_outputs(const std::vector<NodeRef>& points,
                                                 const std::vector<NodeRef>& outs,
                                                 const std::unordered_map<const Node*, NodeRef>& realized,
                                                 const std::vector<int64_t>& out_offsets);

// A FLASH_ATTENTION or FLASH_ATTENTION_GRAD point: one ATTENTION kernel (ir/attention.h), a loop
// over its blocks; its sources are realize points or views of whole buffers (schedule/fusion.h),
// read row-major.
KernelizeResult kernelize_attention(const NodeRef& point, const NodeRef& out,
                                    const std::unordered_map<const Node*, NodeRef>& realized);

// The tensor stage: what the front end builds and the scheduler accepts.
const Spec& tensor_spec();
// The kernel stage: what kernelize produces and codegen accepts.
const Spec& kernel_spec();

}  // namespace lg
