#include "base/error.h"
#include "ir/attention.h"
#include "ir/build.h"
#include "rewrite/rules/movement.h"
#include "schedule/kernelize.h"

namespace lg {

// Where a source of an attention point is read: its buffer and the element its rows start at.
// Realize points are read through their buffer, or the run of one an ASSIGN wrote; other sources
// are whole-buffer views (fusion realizes every other source). Kernels read whole 16-byte chunks:
// a run must start at a slot boundary (KernelizeResult::offsets).
struct SourceRead {
  NodeRef buffer;
  int64_t offset;
};
static SourceRead source_read(const Node* s, const std::unordered_map<const Node*, NodeRef>& realized,
                              std::vector<const Node*>& reads) {
  ElementRange r{};
  if (auto it = realized.find(s); it != realized.end()) {
    reads.push_back(s);
    r = element_range(it->second.get());
  } else {
    r = element_range(s);
    LG_CHECK(r.base->op == Op::BUFFER && r.offset == 0 && is_contiguous_buffer_view(s),
             "attention: a source is neither realized nor a whole buffer");
    reads.push_back(r.base);
  }
  LG_CHECK(r.base->op == Op::BUFFER, "attention: a source realized into ", op_name(r.base->op));
  LG_USER_CHECK(r.offset * static_cast<int64_t>(itemsize(s->dtype)) % kSlotAlignBytes == 0, "flash_attention: a source ",
                "of ", s->numel(), " elements is an assign into a run of a buffer starting at element ", r.offset,
                ", not at a multiple of ", kSlotAlignBytes, " bytes; read it through .contiguous()");
  return {NodeRef::share(r.base), r.offset};
}

KernelizeResult kernelize_attention(const NodeRef& point, const NodeRef& out,
                                    const std::unordered_map<const Node*, NodeRef>& realized) {
  const Node& p = *point;
  int64_t flags = p.get_arg<int64_t>();
  const Shape& q = p.src[0]->shape;
  const Shape& k = p.src[1]->shape;
  AttentionKernel a;
  a.kind = p.op == Op::FLASH_ATTENTION ? AttentionKind::Forward
           : (flags & kAttentionGradKV) ? AttentionKind::GradKV
                                        : AttentionKind::GradQ;
  a.B = q[0], a.H = q[1], a.S = q[2], a.D = q[3], a.KV = k[1], a.T = k[2];
  a.causal = (flags & kAttentionCausal) != 0;

  KernelizeResult r;
  r.buffers.push_back(out);
  r.offsets.push_back(0);
  for (const NodeRef& s : p.src) {
    SourceRead read = source_read(s.get(), realized, r.reads);
    r.buffers.push_back(read.buffer);
    r.offsets.push_back(read.offset);
  }
  std::vector<NodeRef> src{range(a.blocks(), 0, AxisType::LOOP)};
  for (size_t slot = 0; slot < r.buffers.size(); slot++)
    src.push_back(make(Op::DEFINE_GLOBAL, r.buffers[slot]->dtype.as_ptr(), {}, static_cast<int64_t>(slot)));
  r.ast = make(Op::SINK, dtypes::void_, {make(Op::ATTENTION, dtypes::void_, std::move(src), a.arg())});
  verify_stage(r.ast, kernel_spec(), "after kernelize");
  r.name = str("attn_", a.label(), "_", a.B, "_", a.H, "_", a.KV, "_", a.S, "_", a.T, "_", a.D, a.causal ? "_causal" : "");
  return r;
}

}  // namespace lg
