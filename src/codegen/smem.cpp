#include "codegen/smem.h"

#include <algorithm>

#include "base/error.h"
#include "codegen/opt.h"
#include "codegen/tensor_core.h"
#include "ir/build.h"
#include "ir/graph.h"

namespace lg {
namespace {

const RangeArg& rarg(const Node* r) { return r->get_arg<RangeArg>(); }

bool is_thread_own(AxisType t) { return t == AxisType::LOCAL || t == AxisType::UPCAST || t == AxisType::UNROLL; }

// The thread's own ranges (smem.h: T) the fragments depend on, in id order.
std::vector<NodeRef> thread_ranges(const std::vector<NodeRef>& fragments) {
  std::vector<NodeRef> t;
  const NodeRef root = make(Op::SINK, dtypes::void_, fragments);  // alive while its order is walked
  for (const Node* n : toposort(root)) {
    if (n->op != Op::RANGE) continue;
    AxisType type = rarg(n).type;
    if (type == AxisType::GROUP || type == AxisType::COOP || type == AxisType::SERIAL)
      throw OptError(str("SMEM: an mma fragment depends on a ", axis_type_name(type), " range"));
    if (is_thread_own(type)) t.push_back(NodeRef::share(n));
  }
  std::sort(t.begin(), t.end(), [](const NodeRef& a, const NodeRef& b) { return rarg(a.get()).id < rarg(b.get()).id; });
  return t;
}

// mixed-radix(values) over the sizes of ranges t, the last digit fastest.
NodeRef slot_of(const std::vector<NodeRef>& t, const std::vector<NodeRef>& values) {
  NodeRef s = index_const(0);
  for (size_t i = 0; i < t.size(); i++) s = s * t[i]->src[0]->const_as_int() + values[i];
  return s;
}

// The digits of slot c: value i is (c / (product of the sizes after i)) % size i.
std::vector<NodeRef> digits_of(const std::vector<NodeRef>& t, const NodeRef& c) {
  std::vector<NodeRef> d(t.size());
  int64_t stride = 1;
  for (size_t i = t.size(); i-- > 0;) {
    int64_t size = t[i]->src[0]->const_as_int();
    d[i] = (c / stride) % size;
    stride *= size;
  }
  return d;
}

struct StagedOperand {
  std::vector<std::pair<NodeRef, NodeRef>> reads;  // fragment -> its LOAD from shared memory
  int64_t bytes = 0;
};

// One operand's staging (smem.h): fragments x_0..x_{F-1}; local array `local_id`, copy range id `copy_id`.
StagedOperand stage_operand(const std::vector<NodeRef>& x, int64_t local_id, int64_t copy_id) {
  std::vector<NodeRef> t = thread_ranges(x);
  int64_t slots = 1;
  for (const NodeRef& r : t) slots *= r->src[0]->const_as_int();
  int64_t f = static_cast<int64_t>(x.size());
  DType dt = x[0]->dtype;
  NodeRef local = make(Op::DEFINE_LOCAL, dt.as_ptr(), {}, BufferArg{static_cast<uint64_t>(local_id), slots * f});
  NodeRef c = range(slots, copy_id, AxisType::COOP);
  std::vector<std::pair<NodeRef, NodeRef>> at_c;
  std::vector<NodeRef> d = digits_of(t, c);
  for (size_t i = 0; i < t.size(); i++) at_c.emplace_back(t[i], d[i]);
  std::vector<NodeRef> barrier_src{local};
  for (int64_t j = 0; j < f; j++) {
    NodeRef idx = make(Op::INDEX, dt.as_ptr(), {local, c * f + j});
    barrier_src.push_back(make(Op::STORE, dtypes::void_, {idx, substitute(x[j], at_c)}));
  }
  NodeRef staged = make(Op::BARRIER, dt.as_ptr(), std::move(barrier_src));
  StagedOperand out;
  NodeRef slot = slot_of(t, t);
  for (int64_t j = 0; j < f; j++)
    out.reads.emplace_back(x[j], make(Op::LOAD, dt, {make(Op::INDEX, dt.as_ptr(), {staged, slot * f + j})}));
  out.bytes = slots * f * itemsize(dt);
  return out;
}

}  // namespace

NodeRef stage_tc_operands(const NodeRef& ast) {
  std::vector<const Node*> wmmas;
  int64_t next_id = 0;
  for (const Node* n : toposort(ast)) {
    if (n->op == Op::WMMA) wmmas.push_back(n);
    if (n->op == Op::BARRIER || n->op == Op::DEFINE_LOCAL) throw OptError("SMEM: the kernel is staged already");
    if (n->op == Op::RANGE && rarg(n).id < kTcLaneRangeId) next_id = std::max(next_id, rarg(n).id + 1);
  }
  if (wmmas.empty()) throw OptError("SMEM: the kernel has no tensor-core mma (Opt TC first)");
  // Before expand_upcasts every WMMA of the kernel reads the same fragments (apply_tensor_core).
  for (const Node* w : wmmas)
    if (!std::equal(w->src.begin() + 1, w->src.begin() + 13, wmmas[0]->src.begin() + 1))
      throw OptError("SMEM: the kernel's mmas read different fragments");
  const auto& s = wmmas[0]->src;
  // Copy ranges get ids above the other Opts' new ranges (LOCAL adds 1000000) and below the lane.
  StagedOperand a = stage_operand({s.begin() + 1, s.begin() + 9}, 0, next_id + 2000000);
  StagedOperand b = stage_operand({s.begin() + 9, s.begin() + 13}, 1, next_id + 2000001);
  if (a.bytes + b.bytes > kSharedMemoryBytes)
    throw OptError(str("SMEM: the tiles need ", a.bytes + b.bytes, " bytes of shared memory (at most ", kSharedMemoryBytes, ")"));
  a.reads.insert(a.reads.end(), b.reads.begin(), b.reads.end());
  return substitute(ast, a.reads);
}

int64_t shared_memory_bytes(const NodeRef& ast) {
  int64_t bytes = 0;
  for (const Node* n : toposort(ast))
    if (n->op == Op::DEFINE_LOCAL) bytes += n->get_arg<BufferArg>().size * itemsize(n->dtype.base());
  return bytes;
}

}  // namespace lg
