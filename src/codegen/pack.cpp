#include "codegen/pack.h"

#include <algorithm>
#include <limits>

#include "base/error.h"
#include "codegen/access.h"
#include "codegen/opt.h"
#include "ir/build.h"
#include "ir/graph.h"

namespace lg {
namespace {

const RangeArg& rarg(const Node* r) { return r->get_arg<RangeArg>(); }
int64_t rsize(const Node* r) { return r->src[0]->const_as_int(); }
bool by_id(const Node* a, const Node* b) { return rarg(a).id < rarg(b).id; }

// The loops the linearizer opens around every store of a CPU kernel, in the order it opens them.
bool is_output_loop(AxisType t) {
  return t == AxisType::LOOP || t == AxisType::THREAD || t == AxisType::SERIAL || t == AxisType::LOCAL;
}
bool is_inner(AxisType t) { return t == AxisType::REDUCE || t == AxisType::UPCAST || t == AxisType::UNROLL; }

// The CAST to float32 that is the only user of a 16-bit float load (a bf16 matmul widens each
// operand element before its FMA), or null.
const Node* widening_cast(const NodeRef& ast, const Node* load) {
  if (!is_float(load->dtype) || itemsize(load->dtype) != 2) return nullptr;
  UserMap u = user_map(ast);
  const std::vector<int>& users = u.users[u.index_of(load)];
  if (users.size() != 1) return nullptr;
  const Node* cast = u.order[users[0]];
  return cast->op == Op::CAST && cast->dtype == dtypes::float32 ? cast : nullptr;
}

}  // namespace

NodeRef mixed_radix(const std::vector<const Node*>& ranges, const std::vector<NodeRef>& values) {
  NodeRef s = index_const(0);
  for (size_t i = 0; i < ranges.size(); i++) s = s * rsize(ranges[i]) + values[i];
  return s;
}

NodeRef pack_operand(const NodeRef& ast, int64_t slot) {
  std::vector<const Node*> loads, loops;
  const Node* lanes = nullptr;  // the kernel's first UPCAST: the vector lanes (codegen/vectorize.h)
  int64_t next_id = 0, locals = 0, local_bytes = 0;
  for (const Node* n : toposort(ast)) {
    if (n->op == Op::RANGE) {
      AxisType t = rarg(n).type;
      if (t == AxisType::UPCAST && (!lanes || rarg(n).id < rarg(lanes).id)) lanes = n;
      if (!is_output_loop(t) && !is_inner(t) && t != AxisType::COOP)  // COOP: another PACK's copy
        throw OptError(str("PACK needs CPU loops, not a ", axis_type_name(t), " range"));
      if (is_output_loop(t)) loops.push_back(n);
      next_id = std::max(next_id, rarg(n).id + 1);
    }
    if (n->op == Op::WMMA || n->op == Op::BLOCK_MMA || n->op == Op::ATTENTION)
      throw OptError("PACK of a GPU kernel");
    if (n->op == Op::DEFINE_LOCAL) {
      locals++;
      local_bytes += n->get_arg<BufferArg>().size * itemsize(n->dtype.base());
    }
    if (n->op == Op::LOAD && n->src[0]->op == Op::INDEX && n->src[0]->src[0]->op == Op::DEFINE_GLOBAL &&
        n->src[0]->src[0]->get_arg<int64_t>() == slot)
      loads.push_back(n);
  }
  if (loads.size() != 1)
    throw OptError(str("PACK needs one load of argument ", slot, ", the kernel has ", loads.size()));
  const NodeRef load = NodeRef::share(loads[0]);
  std::vector<const Node*> outer, t;
  for (const Node* n : toposort(load)) {
    if (n->op != Op::RANGE) continue;
    if (rarg(n).type == AxisType::COOP) throw OptError(str("PACK: argument ", slot, " is packed already"));
    (is_output_loop(rarg(n).type) ? outer : t).push_back(n);
  }
  if (std::none_of(t.begin(), t.end(), [](const Node* r) { return rarg(r).type == AxisType::REDUCE; }))
    throw OptError(str("PACK: argument ", slot, " is not read along a reduction"));
  // The copy runs inside the last of its outer loops to open; the loops after it reuse it. A loop
  // of one trip is no loop (the linearizer opens none: an output axis a tile used up).
  std::sort(loops.begin(), loops.end(), by_id);
  size_t inside = 0;
  for (size_t i = 0; i < loops.size(); i++)
    if (rsize(loops[i]) > 1 && std::find(outer.begin(), outer.end(), loops[i]) != outer.end()) inside = i + 1;
  int64_t reuse = 1;
  for (size_t i = inside; i < loops.size(); i++) reuse *= rsize(loops[i]);
  int64_t elements = 1;
  for (const Node* r : t) elements *= rsize(r);
  // widened unless the float32 array would be too large (then the 16-bit one, as loaded)
  const Node* widen = widening_cast(ast, load.get());
  if (widen && elements * itemsize(widen->dtype) > kPackBytes) widen = nullptr;
  if (reuse < 2 && !widen)
    throw OptError(str("PACK: no output loop inside the copy of argument ", slot, " reuses it"));
  // Reduce ranges first in loop order, then the copies with the vector lanes (the lowest id) last.
  auto copies = std::stable_partition(t.begin(), t.end(),
                                      [](const Node* r) { return rarg(r).type == AxisType::REDUCE; });
  std::sort(t.begin(), copies, by_id);
  std::sort(copies, t.end(), [](const Node* a, const Node* b) { return rarg(a).id > rarg(b).id; });
  // A load without the vector lanes (rows a tile broadcasts, read by address, in any layout) keeps
  // its source's order instead, the smallest stride innermost: the copy then reads runs of memory.
  if (std::find(t.begin(), t.end(), lanes) == t.end()) {
    auto stride = [&](const Node* r) {
      int64_t s = index_stride(load->src[0]->src[1], r);
      return s == kNonAffineStride ? std::numeric_limits<int64_t>::max() : s < 0 ? -s : s;
    };
    std::stable_sort(t.begin(), t.end(), [&](const Node* a, const Node* b) { return stride(a) > stride(b); });
  }
  DType dt = widen ? widen->dtype : load->dtype;
  if (elements * itemsize(dt) > kPackBytes)
    throw OptError(str("PACK: argument ", slot, "'s panel needs ", elements * itemsize(dt),
                       " bytes (at most ", kPackBytes, ")"));
  if (local_bytes + elements * itemsize(dt) > kPackKernelBytes)
    throw OptError(str("PACK: argument ", slot, "'s array would bring the kernel's arrays to ",
                       local_bytes + elements * itemsize(dt), " bytes (at most ", kPackKernelBytes, ")"));

  NodeRef local = make(Op::DEFINE_LOCAL, dt.as_ptr(), {}, BufferArg{static_cast<uint64_t>(locals), elements});
  std::vector<NodeRef> c, at_t;
  std::vector<std::pair<NodeRef, NodeRef>> to_copy;
  for (size_t i = 0; i < t.size(); i++) {
    c.push_back(range(rsize(t[i]), next_id + static_cast<int64_t>(i), AxisType::COOP));
    at_t.push_back(NodeRef::share(t[i]));
    to_copy.emplace_back(at_t.back(), c.back());
  }
  const NodeRef value = widen ? NodeRef::share(widen) : load;  // what the array holds
  NodeRef store =
      make(Op::STORE, dtypes::void_,
           {make(Op::INDEX, dt.as_ptr(), {local, mixed_radix(t, c)}), substitute(value, to_copy)});
  NodeRef packed = make(Op::BARRIER, dt.as_ptr(), {local, store});
  NodeRef read = make(Op::LOAD, dt, {make(Op::INDEX, dt.as_ptr(), {packed, mixed_radix(t, at_t)})});
  return substitute(ast, {{value, read}});
}

}  // namespace lg
