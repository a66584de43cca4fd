#include "codegen/opt.h"

#include <algorithm>
#include <unordered_map>

#include "base/error.h"
#include "codegen/atomic_scatter.h"
#include "codegen/block_mma.h"
#include "codegen/pack.h"
#include "codegen/smem.h"
#include "codegen/tensor_core.h"
#include "ir/attention.h"
#include "ir/build.h"
#include "ir/graph.h"
#include "ir/scalar.h"
#include "rewrite/rewrite.h"

namespace lg {

static const char* kind_name(OptKind k) {
  switch (k) {
    case OptKind::UPCAST: return "UPCAST";
    case OptKind::UNROLL: return "UNROLL";
    case OptKind::LOCAL: return "LOCAL";
    case OptKind::GROUP: return "GROUP";
    case OptKind::PADTO: return "PADTO";
    case OptKind::THREAD: return "THREAD";
    case OptKind::GLOBAL: return "GLOBAL";
    case OptKind::GROUPTOP: return "GROUPTOP";
    case OptKind::GROUPOUT: return "GROUPOUT";
    case OptKind::TC: return "TC";
    case OptKind::SMEM: return "SMEM";
    case OptKind::BLOCK_MMA: return "BLOCK_MMA";
    case OptKind::KBLOCK: return "KBLOCK";
    case OptKind::PACK: return "PACK";
    case OptKind::ATOMIC: return "ATOMIC";
  }
  return "?";
}

std::string to_string(const Opt& o) { return str(kind_name(o.kind), "(", o.axis, ",", o.amount, ")"); }

std::string to_string(const std::vector<Opt>& opts) {
  std::string s = "[";
  for (size_t i = 0; i < opts.size(); i++) s += (i ? ", " : "") + to_string(opts[i]);
  return s + "]";
}

static int64_t rid(const Node* r) { return r->get_arg<RangeArg>().id; }
static AxisType rtype(const Node* r) { return r->get_arg<RangeArg>().type; }
static int64_t rsize(const Node* r) { return r->src[0]->const_as_int(); }

static std::vector<const Node*> all_ranges(const NodeRef& ast) {
  std::vector<const Node*> rs;
  for (const Node* n : toposort(ast))
    if (n->op == Op::RANGE) rs.push_back(n);
  std::sort(rs.begin(), rs.end(), [](const Node* a, const Node* b) { return rid(a) < rid(b); });
  return rs;
}

std::vector<NodeRef> kernel_axes(const NodeRef& ast) {
  std::vector<NodeRef> axes;
  for (const Node* r : all_ranges(ast)) {
    AxisType t = rtype(r);
    if ((t == AxisType::LOOP || t == AxisType::THREAD || t == AxisType::GLOBAL || t == AxisType::REDUCE) && r->src[0]->is_const()) axes.push_back(NodeRef::share(r));
  }
  std::stable_partition(axes.begin(), axes.end(), [](const NodeRef& r) { return rtype(r.get()) != AxisType::REDUCE; });
  return axes;
}

// REDUCE nodes list their ranges as sources; replace range r there by `rs` (in order).
static NodeRef replace_reduce_range(const NodeRef& ast, const Node* r, const std::vector<NodeRef>& rs) {
  PatternMatcher pm({{"reduce ranges", Pat::op(Op::REDUCE), [&](const Match& m) -> NodeRef {
                        const NodeRef& red = m.root();
                        auto it = std::find(red->src.begin() + 1, red->src.end(), r);
                        if (it == red->src.end()) return {};
                        std::vector<NodeRef> src(red->src.begin(), it);
                        src.insert(src.end(), rs.begin(), rs.end());
                        src.insert(src.end(), it + 1, red->src.end());
                        return make(Op::REDUCE, red->dtype, std::move(src), red->arg);
                      }}});
  return rewrite(ast, pm, {.name = "replace reduce range"});
}

// r (size n) -> outer (n/amount, r's id and type) * amount + inner (amount, a new id, type t).
static NodeRef split(const NodeRef& ast, const NodeRef& r, int64_t amount, AxisType inner_type, int64_t inner_id) {
  int64_t n = rsize(r.get());
  if (amount <= 1 || n % amount != 0) throw OptError(str("amount ", amount, " does not divide axis of size ", n));
  NodeRef outer = range(n / amount, rid(r.get()), rtype(r.get()));
  NodeRef inner = range(amount, inner_id, inner_type);
  NodeRef k = replace_reduce_range(ast, r.get(), {outer, inner});
  return substitute(k, {{r, outer * amount + inner}});
}

static NodeRef pad_axis(const NodeRef& ast, const NodeRef& r, int64_t amount) {
  int64_t n = rsize(r.get()), padded = (n + amount - 1) / amount * amount;
  if (amount <= 1 || padded == n) throw OptError("PADTO changes nothing");
  NodeRef r2 = range(padded, rid(r.get()), rtype(r.get()));
  NodeRef valid = lt(r2, n);
  PatternMatcher pm({
      {"mask index", Pat::op(Op::INDEX), [&](const Match& m) -> NodeRef {
         const NodeRef& idx = m.root();
         if (!depends_on(idx->src[1], r2.get()) || (idx->src.size() == 3 && idx->src[2] == valid)) return {};
         if (idx->src.size() == 3 && idx->src[2]->op == Op::AND && (idx->src[2]->src[0] == valid || idx->src[2]->src[1] == valid)) return {};
         NodeRef gate = idx->src.size() == 3 ? logical_and(idx->src[2], valid) : valid;
         return make(Op::INDEX, idx->dtype, {idx->src[0], idx->src[1], gate});
       }},
      {"mask reduce", Pat::op(Op::REDUCE), [&](const Match& m) -> NodeRef {
         const NodeRef& red = m.root();
         if (std::find(red->src.begin() + 1, red->src.end(), r2) == red->src.end()) return {};
         if (red->src[0]->op == Op::WHERE && red->src[0]->src[0] == valid) return {};
         Value id = reduce_identity(red->get_arg<Op>(), red->dtype);
         NodeRef ident = make(Op::CONST, red->dtype, {}, is_float(red->dtype) ? Arg{id.f} : Arg{id.i});
         std::vector<NodeRef> src = red->src;
         src[0] = where(valid, red->src[0], ident);
         return make(Op::REDUCE, red->dtype, std::move(src), red->arg);
       }},
  });
  NodeRef k = replace_reduce_range(ast, r.get(), {r2});
  k = substitute(k, {{r, r2}});
  return rewrite(k, pm, {.name = "pad axis"});
}

// KBLOCK of a store whose value is some f(R) (kblock, below): k is the kernel with its blocks in
// place.
static NodeRef kblock_through_array(const NodeRef& k, const NodeRef& outer, const NodeRef& block) {
  const NodeRef& st = k->src[0];
  const NodeRef& idx = st->src[0];
  NodeRef sum;
  for (const Node* x : toposort(k))
    if (x->op == Op::REDUCE) sum = NodeRef::share(x);
  // The array's positions: the store's ranges inside the outermost loop, in id order but the
  // UPCASTs last, the vector lanes (the lowest UPCAST id) innermost, as a PACK lays out its panel.
  std::vector<const Node*> at;
  for (const Node* x : toposort(idx))
    if (x->op == Op::RANGE && x != outer.get() && x != block.get()) at.push_back(x);
  std::sort(at.begin(), at.end(), [](const Node* a, const Node* b) {
    bool ua = rtype(a) == AxisType::UPCAST, ub = rtype(b) == AxisType::UPCAST;
    return ua != ub ? ub : ua ? rid(a) > rid(b) : rid(a) < rid(b);
  });
  int64_t elements = 1;
  for (const Node* x : at) elements *= rsize(x);
  DType dt = sum->dtype;
  if (elements * itemsize(dt) > kPackBytes)
    throw OptError(str("KBLOCK: the partial sums of a value computed from the sum need ",
                       elements * itemsize(dt), " bytes (at most ", kPackBytes, ")"));
  int64_t locals = 0;
  for (const Node* x : toposort(k)) locals += x->op == Op::DEFINE_LOCAL;
  NodeRef local = make(Op::DEFINE_LOCAL, dt.as_ptr(), {}, BufferArg{static_cast<uint64_t>(locals), elements});
  std::vector<NodeRef> values;
  for (const Node* x : at) values.push_back(NodeRef::share(x));
  NodeRef j = mixed_radix(at, values);
  int64_t blocks = rsize(block.get());
  NodeRef later = lt(index_const(0), block), last = lt(index_const(blocks - 2), block);
  NodeRef partial = make(Op::LOAD, dt, {make(Op::INDEX, dt.as_ptr(), {local, j, later})}) + sum;
  NodeRef keep =
      make(Op::STORE, dtypes::void_, {make(Op::INDEX, dt.as_ptr(), {local, j, logical_not(last)}), partial});
  NodeRef gate = idx->src.size() == 3 ? logical_and(idx->src[2], last) : last;
  NodeRef out_idx = make(Op::INDEX, idx->dtype, {idx->src[0], idx->src[1], gate});
  // f(partial) in two steps, since partial contains the sum (substitute would enter it again): the
  // sum becomes an ungated read of the array (a node partial does not contain), which becomes partial.
  NodeRef stand_in = make(Op::LOAD, dt, {make(Op::INDEX, dt.as_ptr(), {local, j})});
  NodeRef value = substitute(substitute(st->src[1], {{sum, stand_in}}), {{stand_in, partial}});
  NodeRef out = make(Op::STORE, st->dtype, {out_idx, value});
  return make(Op::SINK, k->dtype, {out, keep});
}

// KBLOCK (opt.h). Before: out[i] = R or out[i] = out[i] + R, R = REDUCE(ADD) over r (and maybe
// other reduce axes). After: r = block * amount + inner, a SERIAL block loop placed right after the
// outermost output loop (ids order loops: the outermost keeps its place with an id below every other,
// the block takes its old id), and out[i] = (block > 0 ? out[i] : prior) + R over inner, prior being
// 0 or the out[i] read before the first block. The earlier blocks' sum is read through a load gated
// by block > 0, so it is placed inside the block loop (after the previous block's store) wherever
// the linearizer would put an ungated load of out[i].
// Any other value f(R) (a bf16 product rounded before it is added into a float32 gradient: f(R) =
// out[i] + round(R)) cannot be added up in out[i] block by block: the partial sums P go to an array
// of the thread's own (DEFINE_LOCAL, one element per output position inside the outermost loop, at
// most kPackBytes): P = (block > 0 ? S[j] : 0) + R over inner; S[j] = P while block < last; out[i]
// = f(P) in the last block. So f sees the whole sum, as without blocks.
static NodeRef kblock(const NodeRef& ast, const NodeRef& r, int64_t amount, int64_t next_id) {
  int64_t n = rsize(r.get());
  if (rtype(r.get()) != AxisType::REDUCE) throw OptError("KBLOCK of an output axis");
  if (amount <= 1 || n % amount != 0 || amount == n)
    throw OptError(str("amount ", amount, " does not split axis of size ", n, " into blocks"));
  std::vector<const Node*> ranges = all_ranges(ast);
  const Node* outer = nullptr;
  for (const Node* x : ranges) {
    AxisType t = rtype(x);
    if (t != AxisType::LOOP && t != AxisType::THREAD && t != AxisType::REDUCE && t != AxisType::UPCAST &&
        t != AxisType::UNROLL && t != AxisType::LOCAL)
      throw OptError(str("KBLOCK needs CPU loops, not a ", axis_type_name(t), " range"));
    if (!outer && (t == AxisType::LOOP || t == AxisType::THREAD)) outer = x;
  }
  if (!outer) throw OptError("KBLOCK needs an output loop outside it");
  if (ast->op != Op::SINK || ast->src.size() != 1 || ast->src[0]->op != Op::STORE)
    throw OptError("KBLOCK needs a kernel of one store");
  const NodeRef& store = ast->src[0];
  const Node* red = nullptr;
  for (const Node* x : toposort(ast))
    if (x->op == Op::REDUCE) {
      if (red) throw OptError("KBLOCK needs a kernel of one reduction");
      red = x;
    }
  if (!red || red->get_arg<Op>() != Op::ADD) throw OptError("KBLOCK needs a sum");
  const NodeRef& value = store->src[1];
  int own = -1;  // which operand of the value's ADD reads the output element (the other is the sum)
  for (int i = 0; i < 2 && value->op == Op::ADD; i++)
    if (value->src[1 - i].get() == red && value->src[i]->op == Op::LOAD &&
        value->src[i]->src[0] == store->src[0])
      own = i;
  bool accumulates = own >= 0;

  NodeRef block = range(n / amount, rid(outer), AxisType::SERIAL);
  NodeRef outer_first = range(rsize(outer), rid(ranges.front()) - 1, rtype(outer));
  NodeRef inner = range(amount, next_id, AxisType::REDUCE);
  NodeRef k = replace_reduce_range(ast, r.get(), {inner});
  k = substitute(k, {{r, block * amount + inner}, {NodeRef::share(outer), outer_first}});
  if (value.get() != red && !accumulates) return kblock_through_array(k, outer_first, block);
  const NodeRef& st = k->src[0];
  const NodeRef& idx = st->src[0];
  NodeRef sum = accumulates ? st->src[1]->src[1 - own] : st->src[1];
  NodeRef later = lt(index_const(0), block);
  NodeRef gate = idx->src.size() == 3 ? logical_and(idx->src[2], later) : later;
  NodeRef earlier =
      make(Op::LOAD, sum->dtype, {make(Op::INDEX, idx->dtype, {idx->src[0], idx->src[1], gate})});
  NodeRef prior = accumulates ? where(later, earlier, st->src[1]->src[own]) : earlier;
  return make(Op::SINK, k->dtype, {make(Op::STORE, st->dtype, {idx, prior + sum})});
}

// Opt TC on an attention kernel (ir/attention.h): its CUDA kernel may use tensor cores.
static NodeRef attention_on_tensor_cores(const NodeRef& ast) {
  const NodeRef& a = ast->src[0];
  AttentionKernel k = AttentionKernel::from_arg(a->get_arg<Shape>());
  k.tensor_cores = true;
  return make(Op::SINK, dtypes::void_, {make(Op::ATTENTION, a->dtype, a->src, k.arg())});
}

static NodeRef apply_one(const NodeRef& ast, const Opt& o) {
  if (o.kind == OptKind::TC && is_attention_kernel(ast)) return attention_on_tensor_cores(ast);
  if (o.kind == OptKind::TC) return apply_tensor_core(ast, o.axis, o.amount);  // axis: the matmul, amount: lane runs
  if (o.kind == OptKind::SMEM) return stage_tc_operands(ast);
  if (o.kind == OptKind::BLOCK_MMA) return apply_block_mma(ast, o.axis, o.amount);  // axis: the matmul, amount: the tiling
  if (o.kind == OptKind::PACK) return pack_operand(ast, o.axis);  // axis: the kernel argument
  if (o.kind == OptKind::ATOMIC) return apply_atomic_scatter(ast);
  std::vector<NodeRef> axes = kernel_axes(ast);
  if (o.axis < 0 || o.axis >= static_cast<int>(axes.size())) throw OptError(str("no axis ", o.axis));
  const NodeRef& r = axes[o.axis];
  bool reduce = rtype(r.get()) == AxisType::REDUCE;
  int64_t next_id = 0;
  for (const Node* x : all_ranges(ast))  // new ranges stay below the tensor-core lane (tensor_core.h)
    if (rid(x) < kTcLaneRangeId) next_id = std::max(next_id, rid(x) + 1);
  switch (o.kind) {
    case OptKind::UPCAST:  // on a reduce axis: the UPCAST range stays listed in the REDUCE (partial sums)
      return split(ast, r, o.amount, AxisType::UPCAST, next_id);
    case OptKind::UNROLL:
      if (!reduce) throw OptError("UNROLL of an output axis (use UPCAST)");
      return split(ast, r, o.amount, AxisType::UNROLL, next_id);
    case OptKind::LOCAL:
      if (reduce) throw OptError("LOCAL of a reduce axis");
      return split(ast, r, o.amount, AxisType::LOCAL, next_id + 1000000);  // innermost of the output loops
    case OptKind::GROUP:
      if (!reduce) throw OptError("GROUP of an output axis");
      return split(ast, r, o.amount, AxisType::REDUCE, next_id);
    case OptKind::PADTO: return pad_axis(ast, r, o.amount);
    case OptKind::THREAD: {
      if (reduce) throw OptError("THREAD of a reduce axis");
      int64_t first = rid(all_ranges(ast).front());
      return substitute(ast, {{r, range(rsize(r.get()), first - 1, AxisType::THREAD)}});
    }
    case OptKind::GROUPTOP:
      if (!reduce) throw OptError("GROUPTOP of an output axis");
      return split(ast, r, o.amount, AxisType::GROUP, rid(all_ranges(ast).front()) - 1);
    case OptKind::GROUPOUT:
      if (reduce) throw OptError("GROUPOUT of a reduce axis");
      return split(ast, r, o.amount, AxisType::GROUP, next_id + 1000000);  // innermost of the output loops
    case OptKind::GLOBAL:
      if (reduce) throw OptError("GLOBAL of a reduce axis");
      return substitute(ast, {{r, range(rsize(r.get()), rid(r.get()), AxisType::GLOBAL)}});
    case OptKind::KBLOCK: return kblock(ast, r, o.amount, next_id);
    case OptKind::TC:
    case OptKind::SMEM:
    case OptKind::BLOCK_MMA:
    case OptKind::PACK:
    case OptKind::ATOMIC: break;
  }
  throw OptError("unknown opt");
}

NodeRef apply_opts(const NodeRef& ast, const std::vector<Opt>& opts) {
  NodeRef k = ast;
  for (size_t i = 0; i < opts.size(); i++) {
    const Opt& o = opts[i];
    try {
      // SMEM stages the fragments as the other Opts left them (the block's ranges are final)
      if (i > 0 && opts[i - 1].kind == OptKind::SMEM) throw OptError("SMEM must be the last Opt");
      if (i > 0 && opts[i - 1].kind == OptKind::BLOCK_MMA) throw OptError("BLOCK_MMA must be the only Opt");
      // a PACK's array is laid out along the ranges as they are: a later split would reach inside its copy
      if (i > 0 && opts[i - 1].kind == OptKind::PACK && o.kind != OptKind::PACK)
        throw OptError("PACK must come after the other Opts");
      k = apply_one(k, o);
    } catch (const OptError& e) {
      throw OptError(str(to_string(o), ": ", e.what()));
    }
  }
  return k;
}

}  // namespace lg
