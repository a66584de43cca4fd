#include "codegen/vectorize.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>

#include "codegen/access.h"
#include "codegen/opt.h"
#include "ir/build.h"
#include "ir/graph.h"

namespace lg {
namespace {

struct NotVectorizable {};

// Element types of vector values: float32, and bfloat16 held in float32 lanes (as scalars are),
// each arithmetic result rounded per lane to bfloat16 by the renderer, as the scalar op is.
bool is_vector_scalar(DType t) { return t == dtypes::float32 || t == dtypes::bfloat16; }

class Vectorizer {
 public:
  Vectorizer(const NodeRef& lane, int lanes) : lane_(lane), lanes_(lanes) {}

  // n with the lane range turned into vector lanes; throws NotVectorizable.
  NodeRef operator()(const NodeRef& n) {
    if (!depends(n.get())) return n;
    if (auto it = memo_.find(n.get()); it != memo_.end()) return it->second;
    NodeRef v = convert(n);
    memo_[n.get()] = v;
    return v;
  }

 private:
  NodeRef lane_;
  int lanes_;
  std::unordered_map<const Node*, NodeRef> memo_;
  std::unordered_map<const Node*, bool> depends_;

  bool depends(const Node* n) {
    if (n == lane_.get()) return true;
    if (auto it = depends_.find(n); it != depends_.end()) return it->second;
    bool d = false;
    for (const NodeRef& s : n->src) d = d || depends(s.get());
    return depends_[n] = d;
  }

  DType vec(DType t) const { return t.vec(lanes_); }

  // x in every lane (only dtypes the renderers have vectors of: a store of a lane-independent
  // integer, e.g. a zero fill, stays scalar).
  NodeRef broadcast(const NodeRef& x) {
    if (!is_vector_scalar(x->dtype)) throw NotVectorizable{};
    if (x->op == Op::CONST) return make(Op::CONST, vec(x->dtype), {}, x->arg);
    return make(Op::VECTORIZE, vec(x->dtype), std::vector<NodeRef>(lanes_, x));
  }
  // x as a vector: converted when it depends on the lane range and is not a combination of
  // partial accumulators (a scalar then), else broadcast.
  NodeRef vector(const NodeRef& x) {
    NodeRef v = (*this)(x);
    return v->dtype.count > 1 ? v : broadcast(v);
  }

  // INDEX(buf, i[, gate]) whose element moves by 1 per lane -> INDEX(buf, i at lane 0[, gate]) of a
  // vector pointer. A gate must be the same for every lane (it then loads or stores the whole vector).
  NodeRef first_lane_index(const NodeRef& idx) {
    if (index_stride(idx->src[1], lane_.get()) != 1) throw NotVectorizable{};
    if (idx->src.size() == 3 && depends(idx->src[2].get())) throw NotVectorizable{};
    std::vector<NodeRef> src{idx->src[0], substitute(idx->src[1], {{lane_, index_const(0)}})};
    if (idx->src.size() == 3) src.push_back(idx->src[2]);
    return make(Op::INDEX, vec(idx->dtype.base()).as_ptr(), std::move(src));
  }

  // An int32 value as lanes: broadcast when it does not depend on the lane; else an arange's element
  // index, CAST(int32, i) with i moving by 1 per lane and every value of i within int32: i at lane 0,
  // cast, in every lane, plus the lane numbers 0..lanes-1 (the same values, no lane can wrap).
  NodeRef int_lanes(const NodeRef& x) {
    DType v = dtypes::int32.vec(lanes_);
    if (x->dtype != dtypes::int32) throw NotVectorizable{};
    if (!depends(x.get())) return make(Op::VECTORIZE, v, std::vector<NodeRef>(lanes_, x));
    if (x->op != Op::CAST) throw NotVectorizable{};
    const NodeRef& i = x->src[0];
    if (i->dtype != dtypes::index || index_stride(i, lane_.get()) != 1 || i->vmin < INT32_MIN ||
        i->vmax > INT32_MAX)
      throw NotVectorizable{};
    NodeRef first = make(Op::CAST, dtypes::int32, {substitute(i, {{lane_, index_const(0)}})});
    std::vector<NodeRef> numbers;
    for (int l = 0; l < lanes_; l++) numbers.push_back(cnst_int(dtypes::int32, l));
    return make(
        Op::ADD, v,
        {make(Op::VECTORIZE, v, std::vector<NodeRef>(lanes_, first)), make(Op::VECTORIZE, v, numbers)});
  }

  // A comparison whose operands depend on the lane: a mask of lanes (bool lanes, held as int32 -1 or 0
  // by the renderer), of float32 values or of int32 arange indices (a label against the column index:
  // cross-entropy's one-hot pick).
  NodeRef convert_compare(const NodeRef& n) {
    DType in = n->src[0]->dtype;
    std::vector<NodeRef> src;
    for (const NodeRef& s : n->src) src.push_back(is_vector_scalar(in) ? vector(s) : int_lanes(s));
    return make(n->op, dtypes::boolean.vec(lanes_), std::move(src));
  }

  NodeRef convert(const NodeRef& n) {
    if (n->dtype.count > 1) return same_types_or_throw(n);  // vector lanes of an earlier range
    if (n->op == Op::CMPLT || n->op == Op::CMPNE || n->op == Op::CMPEQ) return convert_compare(n);
    if (NodeRef same = same_types(n)) return same;         // operands combined back to scalars
    switch (n->op) {
      case Op::SINK: {
        std::vector<NodeRef> src;
        for (const NodeRef& s : n->src) src.push_back((*this)(s));
        return make(Op::SINK, n->dtype, std::move(src));
      }
      case Op::STORE: {
        if (is_atomic_add(*n)) throw NotVectorizable{};  // the C prelude adds scalars atomically
        if (depends(n->src[0].get())) return make(Op::STORE, n->dtype, {first_lane_index(n->src[0]), vector(n->src[1])});
        NodeRef v = (*this)(n->src[1]);  // one element: the value must have been combined to a scalar
        if (v->dtype != n->src[1]->dtype) throw NotVectorizable{};
        return make(Op::STORE, n->dtype, {n->src[0], v});
      }
      case Op::LOAD:
        if (!is_vector_scalar(n->dtype)) throw NotVectorizable{};
        return make(Op::LOAD, vec(n->dtype), {first_lane_index(n->src[0])});
      case Op::CAST:  // between float32 and bfloat16
        if (!is_vector_scalar(n->dtype) || !is_vector_scalar(n->src[0]->dtype)) throw NotVectorizable{};
        return make(Op::CAST, vec(n->dtype), {vector(n->src[0])});
      case Op::REDUCE: return convert_reduce(n);
      case Op::WHERE: {  // a condition shared by every lane picks whole vectors; a mask, lanes
        if (!is_vector_scalar(n->dtype)) throw NotVectorizable{};
        return make(Op::WHERE, vec(n->dtype), {(*this)(n->src[0]), vector(n->src[1]), vector(n->src[2])});
      }
      case Op::EXP2: {  // the prelude's lg_exp2_f32x16
        if (!is_vector_scalar(n->dtype)) throw NotVectorizable{};
        return make(Op::EXP2, vec(n->dtype), {vector(n->src[0])});
      }
      case Op::ADD: case Op::MUL: case Op::NEG: case Op::MULACC: case Op::MAX:
      case Op::SQRT: case Op::RECIPROCAL: {
        if (!is_vector_scalar(n->dtype)) throw NotVectorizable{};
        std::vector<NodeRef> src;
        bool any_vector = false;
        for (const NodeRef& s : n->src) {
          src.push_back((*this)(s));
          any_vector = any_vector || src.back()->dtype.count > 1;
        }
        if (!any_vector) return make(n->op, n->dtype, std::move(src));
        for (NodeRef& s : src)
          if (s->dtype.count == 1) s = broadcast(s);
        return make(n->op, vec(n->dtype), std::move(src));
      }
      default: throw NotVectorizable{};
    }
  }

  // An ALU op whose lane-dependent operands keep their types after conversion (partial
  // accumulators combined back to scalars after their loops, e.g. the reciprocal of a row sum, or
  // its broadcast into another range's vector lanes): the same op on the converted operands, else
  // null.
  NodeRef same_types(const NodeRef& n) {
    if (!is_alu(n->op) && n->op != Op::VECTORIZE && n->op != Op::GEP && n->op != Op::REDUCE) return {};
    if (n->op == Op::REDUCE && std::find(n->src.begin() + 1, n->src.end(), lane_) != n->src.end()) return {};
    std::vector<NodeRef> src;
    for (const NodeRef& s : n->src) {
      src.push_back((*this)(s));
      if (src.back()->dtype != s->dtype) return {};
    }
    return make(n->op, n->dtype, std::move(src), n->arg);
  }
  NodeRef same_types_or_throw(const NodeRef& n) {
    if (NodeRef same = same_types(n)) return same;
    throw NotVectorizable{};
  }

  // REDUCE over ranges R of a lane-dependent value: a vector accumulator. When the lane range is in
  // R, its lanes are partial accumulators, combined after the loops.
  NodeRef convert_reduce(const NodeRef& n) {
    Op op = n->get_arg<Op>();
    if ((op != Op::ADD && op != Op::MUL && op != Op::MAX) || n->dtype != dtypes::float32) throw NotVectorizable{};
    auto lane_it = std::find(n->src.begin() + 1, n->src.end(), lane_);
    std::vector<NodeRef> src{vector(n->src[0])};
    for (auto s = n->src.begin() + 1; s != n->src.end(); ++s)
      if (s != lane_it) src.push_back(*s);
    NodeRef acc = src.size() == 1 ? src[0] : make(Op::REDUCE, vec(n->dtype), std::move(src), n->arg);
    if (lane_it == n->src.end()) return acc;
    std::vector<NodeRef> parts;
    for (int i = 0; i < lanes_; i++) parts.push_back(make(Op::GEP, n->dtype, {acc}, int64_t{i}));
    return combine_pairwise(op, std::move(parts));
  }
};

}  // namespace

NodeRef vectorize_lanes(const NodeRef& ast, int lanes) {
  std::vector<NodeRef> candidates;
  for (const Node* n : toposort(ast))
    if (n->op == Op::RANGE && n->get_arg<RangeArg>().type == AxisType::UPCAST && n->src[0]->is_const() &&
        n->src[0]->const_as_int() == lanes)
      candidates.push_back(NodeRef::share(n));
  std::sort(candidates.begin(), candidates.end(),
            [](const NodeRef& a, const NodeRef& b) { return a->get_arg<RangeArg>().id < b->get_arg<RangeArg>().id; });
  NodeRef k = ast;
  for (const NodeRef& lane : candidates) {
    try {
      k = Vectorizer(lane, lanes)(k);
    } catch (const NotVectorizable&) {
    }
  }
  return k;
}

}  // namespace lg
