#include "codegen/render_c.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "base/error.h"
#include "codegen/access.h"
#include "codegen/block_mma.h"
#include "codegen/c_prelude.h"
#include "codegen/render_attention.h"
#include "codegen/scalar_expr.h"
#include "codegen/streaming_stores.h"
#include "codegen/tensor_core.h"
#include "ir/graph.h"

namespace lg {
namespace {

bool is_half(DType t) { return t.scalar == Scalar::Float16 || t.scalar == Scalar::BFloat16; }

// The C type of a vector of t: 16 float32 lanes, also for bfloat16 (held in float like scalars);
// 16 int32 lanes, also for bool lanes (a comparison's mask: -1 or 0 per lane, what comparing two
// vectors gives in C).
std::string vector_type(DType t) {
  LG_CHECK(t.count == 16, "C renderer: no vector type for ", name(t));
  if (t.scalar == Scalar::Int32 || t.scalar == Scalar::Bool) return "lg_i32x16";
  LG_CHECK(t.scalar == Scalar::Float32 || t.scalar == Scalar::BFloat16, "C renderer: no vector type for ",
           name(t));
  return "lg_f32x16";
}
// The suffix of the prelude's vector load and store for elements of t in memory.
std::string vector_memory(DType t) { return t.scalar == Scalar::BFloat16 ? "bf16x16" : "f32x16"; }

// The C type a value of t is held in.
std::string reg_type(DType t) { return t.count > 1 ? vector_type(t) : scalar_c_type(t); }

// The C type an element of t is stored as.
std::string mem_type(DType t) { return is_half(t) ? "uint16_t" : reg_type(t); }

std::string float_literal(double v, DType t) {
  bool dbl = t.scalar == Scalar::Float64;
  if (std::isnan(v)) return dbl ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (dbl ? "__builtin_inf()" : "__builtin_inff()");
  return hex_float_literal(v, t);
}

std::string scalar_literal(const Node& c);

// A vector of the same value in every lane.
std::string splat(DType t, const std::string& x) {
  std::string s = "((" + vector_type(t) + "){";
  for (int i = 0; i < t.count; i++) s += (i ? ", " : "") + x;
  return s + "})";
}

std::string literal(const Node& c) { return c.dtype.count > 1 ? splat(c.dtype, scalar_literal(c)) : scalar_literal(c); }

std::string scalar_literal(const Node& c) {
  if (is_float(c.dtype)) return float_literal(std::get<double>(c.arg), c.dtype);
  int64_t v = std::get<int64_t>(c.arg);
  if (is_bool(c.dtype)) return v ? "1" : "0";
  if (c.dtype.scalar == Scalar::UInt64) return std::to_string(static_cast<uint64_t>(v)) + "ull";
  if (v == INT64_MIN) return "INT64_MIN";
  return "((" + std::string(reg_type(c.dtype)) + ")" + std::to_string(v) + "ll)";
}

// The copy loops (COOP: codegen/pack.h, smem.h) that have another loop inside. A copy walks its
// array in order, the vector lanes or the tile's rows innermost; clang's loop vectorizer, given the
// whole nest, fully unrolls the short inner loop and vectorizes the one around it instead, building
// each vector from strided elements one insert at a time (vpinsrw: a copy of 8 bf16 rows took
// 4 ms of an 11.6 ms weight gradient). Left only the innermost loop, it or the SLP vectorizer
// turns each run of the array into vector loads and stores.
std::unordered_set<const Node*> outer_copy_loops(const LinearProgram& p) {
  std::unordered_set<const Node*> outer;
  std::vector<const Node*> open;
  for (const NodeRef& n : p.ops) {
    if (n->op == Op::RANGE) {
      if (!open.empty() && open.back()->get_arg<RangeArg>().type == AxisType::COOP) outer.insert(open.back());
      open.push_back(n.get());
    } else if (n->op == Op::END && !open.empty()) {
      open.pop_back();
    }
  }
  return outer;
}

class CWriter {
 public:
  explicit CWriter(const LinearProgram& p) : p_(p) {}

  std::string run() {
    out_ = c_kernel_prelude();
    for (const NodeRef& n : p_.ops)  // the hand-written kernel's functions, for its inputs' dtype
      if (n->op == Op::ATTENTION) out_ += attention_c_source(n->src[2]->dtype.base());
    out_ += "/* " + p_.name + " */\nvoid lg_kernel(void** bufs, int64_t begin, int64_t end) {\n";
    out_ += "  (void)begin; (void)end;\n";
    for (size_t k = 0; k < p_.globals.size(); k++)
      if (p_.globals[k].scalar != Scalar::Void)
        out_ += str("  ", mem_type(p_.globals[k]), "* restrict data", k, " = (", mem_type(p_.globals[k]), "*)bufs[", k, "];\n");
    parallel_ = parallel_extent(p_) > 0;
    streaming_ = streaming_stores(p_);
    outer_copy_loops_ = outer_copy_loops(p_);
    for (const NodeRef& n : p_.ops) emit(*n);
    if (!streaming_.empty()) out_ += "  lg_stream_fence();\n";
    return out_ + "}\n";
  }

 private:
  const LinearProgram& p_;
  std::string out_;
  int depth_ = 1;
  bool parallel_ = false;
  bool first_range_ = true;
  std::vector<const Node*> loops_;                     // the open RANGEs, innermost last
  std::unordered_set<const Node*> streaming_;          // STOREs written as streaming stores
  std::unordered_set<const Node*> outer_copy_loops_;   // COOP RANGEs with a loop inside
  std::unordered_map<const Node*, std::string> expr_;  // how to refer to each value
  int next_ = 0;

  const std::string& ref(const NodeRef& n) {
    auto it = expr_.find(n.get());
    LG_CHECK(it != expr_.end(), "C renderer: ", op_name(n->op), " used before it is defined");
    return it->second;
  }
  void line(const std::string& s) { out_ += std::string(2 * depth_, ' ') + s + "\n"; }
  void define(const Node& n, const std::string& value) {
    std::string v = "v" + std::to_string(next_++);
    line(str("const ", reg_type(n.dtype), " ", v, " = ", value, ";"));
    expr_[&n] = v;
  }
  void emit(const Node& n) {
    switch (n.op) {
      case Op::DEFINE_GLOBAL: expr_[&n] = str("data", n.get_arg<int64_t>()); return;
      case Op::CONST: expr_[&n] = literal(n); return;
      case Op::RANGE: tiles_.clear(); return open_loop(n);
      case Op::END:
        tiles_.clear();
        loops_.pop_back();
        depth_--;
        line("}");
        return;
      case Op::INDEX: expr_[&n] = str(ref(n.src[0]), "[", ref(n.src[1]), "]"); return;
      case Op::LOAD: return emit_load(n);
      case Op::STORE: return emit_store(n);
      case Op::DEFINE_ACC: {
        std::string v = "acc" + std::to_string(next_++);
        line(str(reg_type(n.dtype), " ", v, " = ", ref(n.src[0]), ";"));
        expr_[&n] = v;
        return;
      }
      case Op::ACCUMULATE:
        line(str(ref(n.src[0]), " = ", ref(n.src[1]), ";"));
        expr_[&n] = ref(n.src[0]);
        return;
      case Op::WMMA: return emit_wmma(n);
      case Op::BLOCK_MMA: return emit_block_mma(n);
      case Op::ATTENTION: return line(attention_call(n, [this](const NodeRef& x) { return ref(x); }, false));
      // codegen/smem.h: threads are loops here, so each fills its own copy of a shared tile (the
      // COOP loop is a plain loop, run whole) and a barrier has nothing to wait for.
      case Op::DEFINE_LOCAL: {
        const BufferArg& a = n.get_arg<BufferArg>();
        expr_[&n] = str("lg_smem", a.uid);
        line(
            str(mem_type(n.dtype.base()), " lg_smem", a.uid, "[", a.size, "] __attribute__((aligned(64)));"));
        return;
      }
      case Op::BARRIER:
        if (!n.src.empty()) expr_[&n] = ref(n.src[0]);
        return;
      default: break;
    }
    LG_CHECK(is_alu(n.op) || n.op == Op::VECTORIZE || n.op == Op::GEP, "C renderer cannot render ", op_name(n.op));
    define(n, alu_expr(n));
  }

  void open_loop(const Node& r) {
    int64_t id = r.get_arg<RangeArg>().id;  // THREAD moves a range before the first: ids may be negative
    std::string v = id < 0 ? "rn" + std::to_string(-id) : "r" + std::to_string(id);
    expr_[&r] = v;
    if (outer_copy_loops_.count(&r)) line("#pragma clang loop vectorize(disable)");
    if (first_range_ && parallel_ && depth_ == 1) line(str("for (int64_t ", v, " = begin; ", v, " < end; ", v, "++) {"));
    else line(str("for (int64_t ", v, " = 0; ", v, " < ", ref(r.src[0]), "; ", v, "++) {"));
    first_range_ = false;
    depth_++;
    loops_.push_back(&r);
  }

  // A load that jumps a page or more per trip of the innermost loop (a transposed operand read down
  // its columns, as a TN matmul reads dlogits^T: rows 513 KB apart) misses the cache at every trip,
  // and the hardware prefetchers do not follow it (they stay inside a 4 KiB page): the element
  // kPrefetchTrips trips ahead is fetched now. A load at a constant offset from another (an UPCAST's
  // copies) reads the same line and gets none. Prefetching never faults: past the buffer's end it
  // is dropped (the address is formed as an integer, not a pointer).
  static constexpr int64_t kPrefetchTrips = 16;
  void prefetch_strided(const Node& load) {
    const Node& idx = *load.src[0];
    if (loops_.empty() || idx.src.size() != 2) return;
    const NodeRef& i = idx.src[1];
    if (i->op == Op::ADD && i->src[1]->is_const()) return;
    int64_t stride = index_stride(i, loops_.back()), bytes = itemsize(load.dtype.base());
    if (stride == 0 || stride == kNonAffineStride || std::abs(stride) * bytes < 4096) return;
    line(str("__builtin_prefetch((const void*)((uintptr_t)", ref(idx.src[0]), " + (uint64_t)(", ref(i), " + ",
             kPrefetchTrips * stride, "ll) * ", bytes, "u));"));
  }

  void emit_load(const Node& n) {
    const Node& idx = *n.src[0];
    prefetch_strided(n);
    if (n.dtype.count > 1) {  // a gate is one condition for the whole vector (codegen/vectorize.h)
      std::string v = str("lg_load_", vector_memory(n.dtype), "(&", ref(n.src[0]), ")");
      return define(n, idx.src.size() == 3 ? str(ref(idx.src[2]), " ? ", v, " : ", splat(n.dtype, "0")) : v);
    }
    std::string v = from_memory(n.dtype, ref(n.src[0]));
    if (idx.src.size() == 3) v = str(ref(idx.src[2]), " ? ", v, " : 0");
    define(n, v);
  }

  void emit_store(const Node& n) {
    const Node& idx = *n.src[0];
    DType t = n.src[1]->dtype;
    if (t.count > 1) {
      std::string s = str(streaming_.count(&n) ? "lg_stream_" : "lg_store_", vector_memory(t), "(&",
                          ref(n.src[0]), ", ", ref(n.src[1]), ");");
      return line(idx.src.size() == 3 ? str("if (", ref(idx.src[2]), ") ", s) : s);
    }
    std::string s = str(ref(n.src[0]), " = ", to_memory(n.src[1]->dtype, ref(n.src[1])), ";");
    if (is_atomic_add(n)) {  // Opt ATOMIC: float32, float64 or int32 (atomic_add_dtype)
      const char* f = t == dtypes::float32 ? "f32" : t == dtypes::float64 ? "f64" : "i32";
      s = str("lg_atomic_add_", f, "(&", ref(n.src[0]), ", ", ref(n.src[1]), ");");
    }
    line(idx.src.size() == 3 ? str("if (", ref(idx.src[2]), ") ", s) : s);
  }

  // WMMA (ir/ops.def, codegen/tensor_core.h) as scalar code: this lane's element of D = A*B + C.
  // The A and B tiles are every lane's fragments, i.e. the fragment expressions at every lane: they
  // are emitted again inside a loop over the lanes, the lane variable replaced by the loop's. The
  // tiles are gathered once per straight-line block for the four WMMAs of one mma (tiles_).
  void emit_wmma(const Node& n) {
    std::vector<const Node*> key;
    for (size_t s = 0; s < 13; s++) key.push_back(n.src[s].get());
    auto it = tiles_.find(key);
    if (it == tiles_.end()) it = tiles_.emplace(key, gather_tiles(n)).first;
    const std::string& lane = ref(n.src[0]);
    int i = static_cast<int>(n.get_arg<int64_t>());
    std::string row = str(it->second, "a[", tc_place_c(TcOperand::C, true, lane, i), "]");
    std::string col = tc_place_c(TcOperand::C, false, lane, i);
    std::string s = str("lg_s", next_++);
    // the 16 products (exact in float) summed in k order, then C added (ops.def)
    line(str("float ", s, " = ", row, "[0] * ", it->second, "b[0][", col, "];"));
    line(str("for (int lg_k = 1; lg_k < 16; lg_k++) ", s, " += ", row, "[lg_k] * ", it->second, "b[lg_k][", col, "];"));
    define(n, str(ref(n.src[13 + i]), " + ", s));
  }
  // BLOCK_MMA (ir/ops.def, codegen/block_mma.h) as scalar code: this output's sum over the products
  // of each one's dot product over K, 16 k at a time as the mma adds them (each 16 products summed
  // in k order, then added to the sum), product after product.
  void emit_block_mma(const Node& n) {
    const BlockMmaArg arg = BlockMmaArg::from_shape(n.get_arg<Shape>());
    const std::string &row = ref(n.src[0]), &col = ref(n.src[1]);
    std::string s = str("lg_s", next_++);
    line(str("float ", s, " = 0.0f;"));
    for (size_t p = 0; p < arg.products.size(); p++) {
      const BlockMmaProduct& x = arg.products[p];
      const size_t o = kBlockMmaThreadSources + kBlockMmaProductSources * p;
      DType t = n.src[o]->dtype.base();
      std::string q = str("lg_p", next_++), k0 = str("lg_k", next_++);
      std::string a = str("(", ref(n.src[o + 1]), " + ", row, " * ", x.a_m, "ll)");
      std::string b = str("(", ref(n.src[o + 3]), " + ", col, " * ", x.b_n, "ll)");
      auto product = [&](const std::string& k) {
        return str(from_memory(t, str(ref(n.src[o]), "[", a, " + (", k, ") * ", x.a_k, "ll]")), " * ",
                   from_memory(t, str(ref(n.src[o + 2]), "[", b, " + (", k, ") * ", x.b_k, "ll]")));
      };
      line(str("for (int64_t ", k0, " = 0; ", k0, " < ", arg.k, "ll; ", k0, " += 16) {"));
      line(str("  float ", q, " = ", product(k0), ";"));
      line(str("  for (int64_t lg_k = 1; lg_k < 16; lg_k++) ", q, " += ", product(k0 + " + lg_k"), ";"));
      line(str("  ", s, " = ", s, " + ", q, ";"));
      line("}");
    }
    expr_[&n] = s;
  }
  // Declares the A (16x16) and B (16x8) tiles of WMMA n filled from all 32 lanes; their name prefix.
  std::string gather_tiles(const Node& n) {
    const Node* lane = n.src[0].get();
    std::string t = str("lg_tile", next_++), l = str("lg_lane", next_++);
    line(str("float ", t, "a[16][16], ", t, "b[16][8];"));
    line(str("for (int64_t ", l, " = 0; ", l, " < 32; ", l, "++) {"));
    depth_++;
    std::unordered_map<const Node*, std::string> saved = expr_;
    expr_[lane] = l;
    NodeRef fragments = make(Op::SINK, dtypes::void_, std::vector<NodeRef>(n.src.begin() + 1, n.src.begin() + 13));
    std::unordered_set<const Node*> on_lane{lane};  // fragment nodes whose value depends on the lane
    for (const Node* x : toposort(fragments)) {
      bool dep = false;
      for (const NodeRef& s : x->src) dep = dep || on_lane.count(s.get());
      if (!dep || x->op == Op::SINK) continue;
      LG_CHECK(x->op != Op::RANGE && x->op != Op::DEFINE_ACC && x->op != Op::ACCUMULATE,
               "C renderer: a WMMA fragment depends on ", op_name(x->op));
      on_lane.insert(x);
      emit(*x);
    }
    for (int j = 0; j < 12; j++) {
      TcOperand op = j < 8 ? TcOperand::A : TcOperand::B;
      int e = j < 8 ? j : j - 8;
      line(str(t, j < 8 ? "a[" : "b[", tc_place_c(op, true, l, e), "][", tc_place_c(op, false, l, e), "] = ",
               ref(n.src[1 + j]), ";"));
    }
    expr_ = std::move(saved);
    depth_--;
    line("}");
    return t;
  }
  std::map<std::vector<const Node*>, std::string> tiles_;  // WMMA lane/A/B sources -> gathered tiles

  std::string alu_expr(const Node& n);
  std::string cast_expr(const Node& n);
};

// Vector casts here (bfloat16 <-> float32, codegen/vectorize.h: both held in float); scalar ones
// are the shared C subset's.
std::string CWriter::cast_expr(const Node& n) {
  DType from = n.src[0]->dtype, to = n.dtype;
  const std::string& x = ref(n.src[0]);
  if (to.count == 1) return scalar_cast_expr(from, to, x);
  LG_CHECK(from.count == to.count && is_float(from) && is_float(to), "C renderer: vector CAST ", name(from), " -> ", name(to));
  return to.scalar == Scalar::BFloat16 ? str("lg_round_bf16x16(", x, ")") : x;
}

// The bfloat16 load a 16-lane VECTORIZE repeats in every lane (as loaded or cast to float32, which
// holds the same value), when it is one unguarded load: the vector is then loaded by broadcast from
// its address (lg_splat_bf16x16), not built from the scalar. The scalar load stays defined and,
// unused, is dropped by the C compiler. nullptr otherwise.
const Node* splatted_bf16_load(const Node& n) {
  if (n.dtype.count != 16 || !is_float(n.dtype) || itemsize(n.dtype.base()) > 4) return nullptr;
  const Node* x = n.src[0].get();
  for (const NodeRef& s : n.src)
    if (s.get() != x) return nullptr;
  if (x->op == Op::CAST && x->dtype.scalar == Scalar::Float32) x = x->src[0].get();
  bool bf16_load = x->op == Op::LOAD && x->dtype == DType{Scalar::BFloat16, 1};
  return bf16_load && x->src[0]->src.size() == 2 ? x : nullptr;
}

// Vector ops and BITCAST here; scalar ops are the shared C subset's (codegen/scalar_expr.h).
std::string CWriter::alu_expr(const Node& n) {
  DType t = n.dtype, in = n.src[0]->dtype;
  auto s = [&](int i) -> const std::string& { return ref(n.src[i]); };
  // bfloat16 lanes are float32 values: the float32 op, rounded per lane where the scalar op rounds
  // (scalar_expr.cpp `rounded`); NEG, MAX and WHERE are exact and render as for float32 below.
  if (t.count > 1 && t.scalar == Scalar::BFloat16) {
    std::string e;
    switch (n.op) {
      case Op::ADD: e = str(s(0), " + ", s(1)); break;
      case Op::MUL: e = str(s(0), " * ", s(1)); break;
      case Op::EXP2: e = str("lg_exp2_f32x16(", s(0), ")"); break;
      case Op::SQRT: e = str("lg_sqrt_f32x16(", s(0), ")"); break;
      case Op::RECIPROCAL: e = str("(1.0f / ", s(0), ")"); break;
      case Op::MULACC: e = str("lg_fma_f32x16(", s(0), ", ", s(1), ", ", s(2), ")"); break;
      default: break;
    }
    if (!e.empty()) return str("lg_round_bf16x16(", e, ")");
  }
  switch (n.op) {
    case Op::CAST: return cast_expr(n);
    case Op::VECTORIZE: {
      if (const Node* load = splatted_bf16_load(n)) return str("lg_splat_bf16x16(&", ref(load->src[0]), ")");
      std::string v = "((" + vector_type(t) + "){";
      for (size_t i = 0; i < n.src.size(); i++) v += (i ? ", " : "") + s(static_cast<int>(i));
      return v + "})";
    }
    case Op::GEP: return str(s(0), "[", n.get_arg<int64_t>(), "]");
    case Op::EXP2: if (t.count > 1) return str("lg_exp2_f32x16(", s(0), ")"); break;
    case Op::MAX: if (t.count > 1) return str("lg_max_f32x16(", s(0), ", ", s(1), ")"); break;
    case Op::SQRT: if (t.count > 1) return str("lg_sqrt_f32x16(", s(0), ")"); break;
    case Op::RECIPROCAL: if (t.count > 1) return str("(1.0f / ", s(0), ")"); break;  // per lane, rounded
    case Op::MULACC: if (t.count > 1) return str("lg_fma_f32x16(", s(0), ", ", s(1), ", ", s(2), ")"); break;
    case Op::WHERE:  // a mask of lanes selects per lane; a scalar condition whole vectors (below)
      if (t.count > 1 && n.src[0]->dtype.count > 1)
        return str("lg_sel_f32x16(", s(0), ", ", s(1), ", ", s(2), ")");
      break;
    case Op::BITCAST: {  // through the stored bit pattern
      auto bits_of = [&](DType d, const std::string& x) -> std::string {
        if (d.scalar == Scalar::BFloat16) return "(uint64_t)lg_f_to_bf16(" + x + ")";
        if (d.scalar == Scalar::Float16) return "(uint64_t)lg_f_to_f16(" + x + ")";
        if (d.scalar == Scalar::Float32) return "(uint64_t)lg_f_bits(" + x + ")";
        if (d.scalar == Scalar::Float64) return "lg_d_bits(" + x + ")";
        return str("(uint64_t)(", mem_type(d), ")", x);
      };
      std::string b = bits_of(in, s(0));
      if (t.scalar == Scalar::BFloat16) return "lg_bf16_to_f((uint16_t)" + b + ")";
      if (t.scalar == Scalar::Float16) return "lg_f16_to_f((uint16_t)" + b + ")";
      if (t.scalar == Scalar::Float32) return "lg_bits_f((uint32_t)" + b + ")";
      if (t.scalar == Scalar::Float64) return "lg_bits_d(" + b + ")";
      return str("(", reg_type(t), ")", b);
    }
    default: break;
  }
  std::vector<std::string> src;
  for (const NodeRef& x : n.src) src.push_back(ref(x));
  return scalar_alu_expr(n, src, reg_type(t), {.exp2_f32 = "lg_exp2f"});
}

}  // namespace

const std::string& c_kernel_prelude() {
  static const std::string prelude = std::string(kCPrelude) + kScalarPrelude;
  return prelude;
}

int64_t parallel_extent(const LinearProgram& prog) {
  for (const NodeRef& n : prog.ops) {
    if (n->op == Op::DEFINE_GLOBAL || n->op == Op::DEFINE_LOCAL || n->op == Op::CONST) continue;
    if (n->op != Op::RANGE || !n->src[0]->is_const()) return 0;
    AxisType t = n->get_arg<RangeArg>().type;
    return t == AxisType::LOOP || t == AxisType::THREAD ? n->src[0]->const_as_int() : 0;
  }
  return 0;
}

std::string CRenderer::render(const LinearProgram& prog) const { return CWriter(prog).run(); }

}  // namespace lg
