#include "schedule/kernelize.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "base/error.h"
#include "ir/build.h"
#include "ir/graph.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/movement.h"
#include "rewrite/rules/symbolic.h"

namespace lg {
namespace {

struct Ctx {
  const Node* point;  // kernelize_scatter's point (computed here, not loaded); else null
  const std::unordered_map<const Node*, NodeRef>* realized;
  // The points whose STOREs the kernel holds (one, or several: kernelize_outputs), computed in place
  // where another one reads them, which is allowed only at the element being written (ungated): the
  // kernel's index `written` for a point of the kernel's shape, its row part for a row point
  // (group_written, by group member).
  std::vector<const Node*> group;
  std::vector<NodeRef> written;
  bool read_elsewhere = false;
  std::vector<NodeRef> buffers;
  int64_t next_range = 0;
  std::vector<const Node*> reads;
  std::vector<KernelizeResult::Span> spans;
  // One REDUCE per reduction and index: a row reduction read along several paths of a row kernel
  // (a softmax's max) is computed once. The rewrite's memo misses it when it is reached as the
  // result of a movement op's rule. Keys are held (first).
  std::unordered_map<const Node*, std::pair<NodeRef, NodeRef>> reduces;
  std::vector<std::vector<NodeRef>> group_written;  // by group member: where it is written

  void note_read(const Node* n) {
    if (std::find(reads.begin(), reads.end(), n) == reads.end()) reads.push_back(n);
  }
  // A load of buf at element `at` (its bounds bound the elements touched).
  void note_span(const NodeRef& buf, const NodeRef& at) {
    for (KernelizeResult::Span& s : spans)
      if (s.buffer == buf.get()) {
        s.lo = std::min(s.lo, at->vmin), s.hi = std::max(s.hi, at->vmax);
        return;
      }
    spans.push_back({buf.get(), at->vmin, at->vmax});
  }

  // The DEFINE_GLOBAL for a buffer, giving it the next slot on first use.
  NodeRef global(const NodeRef& buf) {
    size_t slot = 0;
    while (slot < buffers.size() && buffers[slot] != buf) slot++;
    if (slot == buffers.size()) buffers.push_back(buf);
    return make(Op::DEFINE_GLOBAL, buf->dtype.as_ptr(), {}, static_cast<int64_t>(slot));
  }
};

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// Row-major flat offset of a multi-index into shape s.
NodeRef flat_index(const std::vector<NodeRef>& idx, const Shape& s) {
  std::vector<int64_t> st = strides_of(s);
  NodeRef f = index_const(0);
  for (size_t i = 0; i < idx.size(); i++)
    if (s[i] != 1) f = f + idx[i] * st[i];
  return f;
}

NodeRef shifted(const NodeRef& i, int64_t offset) { return offset == 0 ? i : i + offset; }

NodeRef at(const NodeRef& x, const NodeRef& gate, const std::vector<NodeRef>& idx) {
  std::vector<NodeRef> src{x, gate};
  src.insert(src.end(), idx.begin(), idx.end());
  return make(Op::AT, x->dtype, std::move(src));
}

std::vector<NodeRef> index_of_at(const Node& a) { return {a.src.begin() + 2, a.src.end()}; }

NodeRef load(Ctx& ctx, const NodeRef& buf, const NodeRef& offset, const NodeRef& gate) {
  ctx.note_span(buf, offset);
  std::vector<NodeRef> src{ctx.global(buf), offset};
  if (!gate->is_const_value(1)) src.push_back(gate);
  NodeRef index = make(Op::INDEX, buf->dtype.as_ptr(), std::move(src));
  return make(Op::LOAD, buf->dtype, {index});
}

// Index of the source of a movement op, given the index of its output.
std::vector<NodeRef> move_index(const Node& mv, const std::vector<NodeRef>& idx) {
  const Shape& in = mv.src[0]->shape;
  std::vector<NodeRef> out(in.size());
  switch (mv.op) {
    case Op::RESHAPE: {
      NodeRef flat = flat_index(idx, mv.shape);
      std::vector<int64_t> st = strides_of(in);
      for (size_t i = 0; i < in.size(); i++) {
        NodeRef v = st[i] == 1 ? flat : flat / st[i];
        out[i] = in[i] == 1 ? index_const(0) : (i == 0 ? v : v % in[i]);
      }
      return out;
    }
    case Op::PERMUTE: {
      const Shape& p = mv.get_arg<Shape>();
      for (size_t i = 0; i < p.size(); i++) out[p[i]] = idx[i];
      return out;
    }
    case Op::EXPAND:
      for (size_t i = 0; i < in.size(); i++) out[i] = in[i] == 1 ? index_const(0) : idx[i];
      return out;
    case Op::SHRINK:
      for (size_t i = 0; i < in.size(); i++) out[i] = idx[i] + mv.get_arg<Pairs>()[i].first;
      return out;
    case Op::PAD:
      for (size_t i = 0; i < in.size(); i++) out[i] = idx[i] - mv.get_arg<Pairs>()[i].first;
      return out;
    case Op::FLIP:
      for (size_t i = 0; i < in.size(); i++)
        out[i] = mv.get_arg<Shape>()[i] ? index_const(in[i] - 1) - idx[i] : idx[i];
      return out;
    default: internal_error(__FILE__, __LINE__, str("move_index of ", op_name(mv.op)));
  }
}

// PAD: valid where every padded axis index lies inside the source.
NodeRef pad_valid(const Node& pad, const std::vector<NodeRef>& idx) {
  NodeRef valid = bool_const(true);
  for (size_t i = 0; i < idx.size(); i++) {
    auto [before, after] = pad.get_arg<Pairs>()[i];
    if (before > 0) valid = logical_and(valid, ge(idx[i], before));
    if (after > 0) valid = logical_and(valid, lt(idx[i], before + pad.src[0]->shape[i]));
  }
  return valid;
}

NodeRef and_gate(const NodeRef& a, const NodeRef& b) {
  if (a->is_const_value(1)) return b;
  if (b->is_const_value(1)) return a;
  return logical_and(a, b);
}

NodeRef push_reduce(Ctx& ctx, const Node& red, const NodeRef& gate, std::vector<NodeRef> idx) {
  const ReduceArg& r = red.get_arg<ReduceArg>();
  const Shape& in = red.src[0]->shape;
  std::vector<NodeRef> ranges{};
  for (int64_t a : r.axes) {
    if (in[a] == 1) {
      idx[a] = index_const(0);
      continue;
    }
    idx[a] = range(in[a], ctx.next_range++, AxisType::REDUCE);
    ranges.push_back(idx[a]);
  }
  NodeRef v = at(red.src[0], gate, idx);
  if (ranges.empty()) return v;
  std::vector<NodeRef> src{v};
  src.insert(src.end(), ranges.begin(), ranges.end());
  return make(Op::REDUCE, red.dtype, std::move(src), r.op);
}

// AT(x, gate, idx...) one step further down the tensor graph.
NodeRef push_at(Ctx& ctx, const NodeRef& a) {
  const NodeRef& x = a->src[0];
  const NodeRef& gate = a->src[1];
  std::vector<NodeRef> idx = index_of_at(*a);
  if (auto g = std::find(ctx.group.begin(), ctx.group.end(), x.get()); g != ctx.group.end()) {
    const std::vector<NodeRef>& w = ctx.group_written[g - ctx.group.begin()];
    if (idx != w) {  // a row point read through movement ops: the same element once folded?
      std::vector<NodeRef> folded;
      for (const NodeRef& i : idx) folded.push_back(rewrite(i, pm_symbolic(), {.name = "fold row index"}));
      if (folded == w) return at(x, gate, w);
      ctx.read_elsewhere = true;
    } else if (!gate->is_const_value(1)) {
      // Read under a gate (through a gather or a pad) at the element being written: the value its
      // own STORE computes, ungated, is in bounds there; the gate masks only its use.
      return at(x, bool_const(true), w);
    }
  } else if (x.get() != ctx.point) {
    if (auto it = ctx.realized->find(x.get()); it != ctx.realized->end()) {
      ctx.note_read(x.get());
      if (it->second->op != Op::BUFFER) {  // an ASSIGN into a run of a buffer: its new values there
        ElementRange r = element_range(it->second.get());
        return load(ctx, NodeRef::share(r.base), shifted(flat_index(idx, x->shape), r.offset), gate);
      }
      return load(ctx, it->second, flat_index(idx, x->shape), gate);
    }
  }
  switch (x->op) {
    case Op::BUFFER: ctx.note_read(x.get()); return load(ctx, x, idx[0], gate);
    case Op::CONST: return x->src.empty() ? x : make(Op::CONST, x->dtype, {}, x->arg);
    case Op::IOTA: return cast(idx[0], x->dtype);
    case Op::DEFINE_VAR: return x;
    case Op::CONTIGUOUS: return at(x->src[0], gate, idx);
    case Op::ASSIGN: return at(x->src[1], gate, idx);
    case Op::REDUCE_AXIS: {
      auto [it, fresh] = ctx.reduces.try_emplace(a.get());
      if (fresh) it->second = {a, push_reduce(ctx, *x, gate, std::move(idx))};
      return it->second.second;
    }
    case Op::GATHER: {  // x[..., index[j], ...]: the index is loaded, then used as an address
      int64_t axis = x->get_arg<int64_t>();
      NodeRef pos = cast(at(x->src[1], gate, idx), dtypes::index);
      NodeRef valid = logical_and(ge(pos, 0), lt(pos, x->src[0]->shape[axis]));
      std::vector<NodeRef> inner = idx;
      inner[axis] = pos;
      return where(valid, at(x->src[0], and_gate(gate, valid), inner), cnst(x->dtype, 0));
    }
    case Op::PAD: {
      NodeRef valid = pad_valid(*x, idx);
      NodeRef inner = at(x->src[0], and_gate(gate, valid), move_index(*x, idx));
      return where(valid, inner, cnst(x->dtype, 0));
    }
    default: break;
  }
  if (is_movement(x->op)) return at(x->src[0], gate, move_index(*x, idx));
  if (is_alu(x->op)) {
    std::vector<NodeRef> src;
    for (const NodeRef& s : x->src) src.push_back(at(s, gate, idx));
    return make(x->op, x->dtype, std::move(src), x->arg);
  }
  internal_error(__FILE__, __LINE__, str("kernelize: cannot index ", op_name(x->op)));
}

const PatternMatcher& pm_kernelize() {
  static const PatternMatcher pm(
      {{"push AT down", Pat::op(Op::AT), [](const Match& m) { return push_at(m.ctx<Ctx>(), m.root()); }}});
  return pm;
}

std::string kernel_name(const Node& point, const NodeRef& ast) {
  bool reduce = false;
  std::vector<int64_t> red;
  for (const Node* n : toposort(ast))
    if (n->op == Op::RANGE && n->get_arg<RangeArg>().type == AxisType::REDUCE) {
      reduce = true;
      red.push_back(n->src[0]->const_as_int());
    }
  std::string name = reduce ? "r" : "E";
  for (int64_t d : point.shape) name += "_" + std::to_string(d);
  if (reduce) {
    name += "_";
    for (int64_t d : red) name += "_" + std::to_string(d);
  }
  return name;
}

// Moves slot pointers into their buffers: each INDEX's base is the largest aligned element at or
// below its smallest index; a slot whose INDEXes have one base starts there, and each further base
// of the same buffer (a kernel reading a layer's weight and, far away in the same flat buffer, its
// norm gain) becomes a slot of its own, appended, over the same buffer (not the output's: slot 0
// starts at its smallest base; nor is any other output's). Indices move down by their
// slot's offset and every index is folded by the symbolic rules, so the same access at another
// offset of a buffer gives the same AST. Returns the offsets of the slots (buffers gains the added
// ones).
std::vector<int64_t> rebase_slots(NodeRef& ast, std::vector<NodeRef>& buffers, size_t outputs = 1) {
  auto base_of = [&](const Node* index) {
    const NodeRef& buf = buffers[index->src[0]->get_arg<int64_t>()];
    int64_t align = std::max<int64_t>(1, kSlotAlignBytes / static_cast<int64_t>(itemsize(buf->dtype)));
    return std::max<int64_t>(0, index->src[1]->vmin) / align * align;
  };
  std::vector<std::set<int64_t>> bases(buffers.size());  // by slot, ascending
  std::vector<const Node*> indexes;
  for (const Node* n : toposort(ast))
    if (n->op == Op::INDEX) {
      indexes.push_back(n);
      bases[n->src[0]->get_arg<int64_t>()].insert(base_of(n));
    }
  std::vector<int64_t> offsets(buffers.size(), 0);
  std::map<std::pair<int64_t, int64_t>, int64_t> slot_of;  // (slot, base) -> its slot now
  size_t first = buffers.size();
  for (size_t s = 0; s < first; s++)
    for (int64_t b : bases[s]) {
      // The output's slot is never split: a second pointer to the buffer a kernel writes would
      // alias it (both are restrict).
      bool own = b == *bases[s].begin() || s < outputs;
      slot_of[{s, b}] = own ? static_cast<int64_t>(s) : static_cast<int64_t>(buffers.size());
      if (b == *bases[s].begin()) {
        offsets[s] = b;
      } else if (!own) {
        buffers.push_back(buffers[s]);
        offsets.push_back(b);
      }
    }
  // INDEX(slot, i) -> INDEX(its slot now, i - that slot's offset), every index folded (so an access
  // at offset 0 and one moved there are the same expression). One pass over the old graph, not a
  // rewrite to a fixed point: a moved index can equal another, unmoved one (i + 2048 moved by 1024
  // is the i + 1024 of a load beside it), so what a node becomes depends on where it stands.
  std::unordered_map<const Node*, NodeRef> now_of;
  for (const Node* n : toposort(ast)) {
    std::vector<NodeRef> src;
    for (const NodeRef& x : n->src) src.push_back(now_of.at(x.get()));
    if (n->op == Op::INDEX) {
      int64_t s = n->src[0]->get_arg<int64_t>(), now = slot_of.at({s, base_of(n)});
      if (now != s) src[0] = make(Op::DEFINE_GLOBAL, n->src[0]->dtype, {}, now);
      NodeRef moved = offsets[now] != 0 ? src[1] - offsets[now] : src[1];
      src[1] = rewrite(moved, pm_symbolic(), {.name = "fold slot index"});
    }
    now_of[n] = n->src.empty() ? NodeRef::share(n) : make(n->op, n->dtype, std::move(src), n->arg);
  }
  ast = now_of.at(ast.get());
  return offsets;
}

}  // namespace

namespace {

// The index a point of shape `row` is written at in a kernel over `shape` indexed by `written`,
// when row is a row of it: shape's leading axes, then axes of size 1 (a (1024, 1) row maximum in a
// kernel over the (1024, 4008, 32) gradient of the logits: (r0, 0)). Nothing when it is not.
std::optional<std::vector<NodeRef>> row_index(const Shape& row, const Shape& shape,
                                              const std::vector<NodeRef>& written) {
  size_t lead = row.size();
  while (lead > 0 && row[lead - 1] == 1) lead--;
  if (lead > shape.size() ||
      !std::equal(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(lead), shape.begin()))
    return std::nullopt;
  std::vector<NodeRef> idx(written.begin(), written.begin() + static_cast<std::ptrdiff_t>(lead));
  while (idx.size() < row.size()) idx.push_back(index_const(0));
  return idx;
}

// The body of kernelize and kernelize_outputs: one STORE per point over the same loops, point k
// into outs[k] (slot k). The loops are those of the first point of the most elements; every other
// point has its shape or is a row of it (row_index: stored once per row, in the row's loops).
// Nothing when one point reads another at other elements than the written one
// (kernelize_outputs' rule; a single point never reads itself), or a shape is neither.
std::optional<KernelizeResult> kernelize_points(const std::vector<NodeRef>& points, const std::vector<NodeRef>& outs,
                                                const std::unordered_map<const Node*, NodeRef>& realized,
                                                const std::vector<int64_t>& out_offsets, const char* pass) {
  LG_CHECK(!points.empty() && points.size() == outs.size() && points.size() == out_offsets.size(),
           "kernelize: ", points.size(), " points, ", outs.size(), " buffers");
  Ctx ctx{nullptr, &realized, {}, {}, false, {}, 0, {}, {}, {}};
  for (const NodeRef& p : points) ctx.group.push_back(p.get());
  for (const NodeRef& b : outs) ctx.global(b);
  LG_CHECK(ctx.buffers.size() == outs.size(), "kernelize: two points write one buffer");
  const Node* widest = points[0].get();
  for (const NodeRef& p : points)
    if (p->numel() > widest->numel()) widest = p.get();
  const Shape& shape = widest->shape;
  for (int64_t d : shape)
    ctx.written.push_back(d == 1 ? index_const(0) : range(d, ctx.next_range++, AxisType::LOOP));
  for (const NodeRef& p : points) {
    std::optional<std::vector<NodeRef>> idx =
        p->shape == shape ? std::optional(ctx.written) : row_index(p->shape, shape, ctx.written);
    if (!idx) return std::nullopt;
    ctx.group_written.push_back(*std::move(idx));
  }
  std::vector<NodeRef> stores;
  for (size_t k = 0; k < points.size(); k++) {
    const std::vector<NodeRef>& w = ctx.group_written[k];
    NodeRef value = at(points[k], bool_const(true), w);
    NodeRef addr = make(Op::INDEX, outs[k]->dtype.as_ptr(),
                        {ctx.global(outs[k]), shifted(flat_index(w, points[k]->shape), out_offsets[k])});
    stores.push_back(make(Op::STORE, dtypes::void_, {addr, cast(value, outs[k]->dtype)}));
  }
  NodeRef ast = make(Op::SINK, dtypes::void_, std::move(stores));
  ast = rewrite(ast, pm_kernelize(), {.name = pass, .top_down = true}, std::any(&ctx));
  if (ctx.read_elsewhere) return std::nullopt;
  std::vector<int64_t> offsets = rebase_slots(ast, ctx.buffers, outs.size());
  verify_stage(ast, kernel_spec(), "after kernelize");
  KernelizeResult r{ast, ctx.buffers, kernel_name(*widest, ast), offsets, ctx.reads, ctx.spans};
  r.outputs = outs.size();
  return r;
}

}  // namespace

KernelizeResult kernelize(const NodeRef& point, const NodeRef& out,
                          const std::unordered_map<const Node*, NodeRef>& realized, int64_t out_offset) {
  std::optional<KernelizeResult> k = kernelize_points({point}, {out}, realized, {out_offset}, "kernelize");
  LG_CHECK(k.has_value(), "kernelize: a realize point reads itself");
  return *std::move(k);
}

std::optional<KernelizeResult> kernelize_outputs(const std::vector<NodeRef>& points,
                                                 const std::vector<NodeRef>& outs,
                                                 const std::unordered_map<const Node*, NodeRef>& realized,
                                                 const std::vector<int64_t>& out_offsets) {
  return kernelize_points(points, outs, realized, out_offsets, "kernelize outputs");
}

KernelizeResult kernelize_scatter(const NodeRef& point, const NodeRef& out,
                                  const std::unordered_map<const Node*, NodeRef>& realized, int64_t out_offset) {
  Ctx ctx{point.get(), &realized, {}, {}, false, {}, 0, {}, {}, {}};
  NodeRef out_global = ctx.global(out);
  const NodeRef& index = point->src[1];
  const NodeRef& values = point->src[2];
  const Shape& target = point->shape;
  int64_t axis = point->get_arg<int64_t>();
  constexpr int64_t kSerialId = int64_t{1} << 40;  // after every other loop: innermost
  std::vector<NodeRef> idx;
  for (size_t i = 0; i < values->shape.size(); i++) {
    int64_t d = values->shape[i];
    bool serial = static_cast<int64_t>(i) == axis;
    idx.push_back(d == 1 ? index_const(0)
                         : serial ? range(d, kSerialId, AxisType::SERIAL) : range(d, ctx.next_range++, AxisType::LOOP));
  }
  NodeRef pos = cast(at(index, bool_const(true), idx), dtypes::index);
  NodeRef valid = logical_and(ge(pos, 0), lt(pos, target[axis]));
  std::vector<NodeRef> dst = idx;
  dst[axis] = pos;
  NodeRef addr = make(Op::INDEX, out->dtype.as_ptr(), {out_global, shifted(flat_index(dst, target), out_offset), valid});
  NodeRef old = make(Op::LOAD, out->dtype, {addr});
  NodeRef sum = old + cast(at(values, bool_const(true), idx), out->dtype);
  NodeRef ast = make(Op::SINK, dtypes::void_, {make(Op::STORE, dtypes::void_, {addr, sum})});
  ast = rewrite(ast, pm_kernelize(), {.name = "kernelize scatter", .top_down = true}, std::any(&ctx));
  std::vector<int64_t> offsets = rebase_slots(ast, ctx.buffers);
  verify_stage(ast, kernel_spec(), "after kernelize");
  std::string name = "S";
  for (int64_t d : values->shape) name += "_" + std::to_string(d);
  return {ast, ctx.buffers, name, offsets, ctx.reads, ctx.spans};
}

}  // namespace lg
