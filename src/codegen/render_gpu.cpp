#include "codegen/render_gpu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "base/error.h"
#include "codegen/gpu_launch.h"
#include "codegen/gpu_vector_access.h"
#include "codegen/render_attention.h"
#include "codegen/render_block_mma.h"
#include "codegen/scalar_expr.h"
#include "ir/graph.h"

namespace lg {

const char* const kGpuCommonPrelude = R"GPU(
#define LG_D __device__ __forceinline__
#define LG_FN LG_D
/* The block's dynamic shared memory (codegen/gpu_launch.h: LaunchDims::shared_bytes). */
#ifndef LG_DYNAMIC_SHARED
#define LG_DYNAMIC_SHARED(name) extern __shared__ __attribute__((aligned(16))) unsigned char name[]
#endif
typedef bool bool_t;
#ifndef INT64_MIN
#define INT64_MIN (-9223372036854775807LL - 1)
#endif
#ifndef UINT64_MAX
#define UINT64_MAX 18446744073709551615ULL
#endif
LG_D float lg_bits_f(uint32_t u) { return __uint_as_float(u); }
LG_D uint32_t lg_f_bits(float f) { return __float_as_uint(f); }
LG_D double lg_bits_d(uint64_t u) { return __longlong_as_double((long long)u); }
LG_D uint64_t lg_d_bits(double d) { return (uint64_t)__double_as_longlong(d); }
LG_D float lg_round_bf16(float x) { return lg_bf16_to_f(lg_f_to_bf16(x)); }
LG_D float lg_round_f16(float x) { return lg_f16_to_f(lg_f_to_f16(x)); }
/* double -> float rounding to odd, so a second rounding to 16 bits is correct */
LG_D float lg_d_to_f_odd(double x) {
  float f = (float)x;
  if ((double)f == x || !isfinite(f) || (lg_f_bits(f) & 1u)) return f;
  return nextafterf(f, x > f ? __int_as_float(0x7f800000) : __int_as_float(0xff800000));
}
LG_D float lg_maxf(float a, float b) { return (a != a || b != b) ? __int_as_float(0x7fc00000) : (a < b ? b : a); }
LG_D double lg_maxd(double a, double b) { return (a != a || b != b) ? __longlong_as_double(0x7ff8000000000000LL) : (a < b ? b : a); }
)GPU";

namespace {

// The C++ type a value of t is held in (16-bit floats: float).
const char* reg_type(DType t) { return scalar_c_type(t); }

// The type an element of t is stored as.
std::string mem_type(DType t) {
  if (t.scalar == Scalar::BFloat16) return "lg_bf16_t";
  if (t.scalar == Scalar::Float16) return "lg_f16_t";
  return reg_type(t);
}

std::string float_literal(double v, DType t) {
  bool dbl = t.scalar == Scalar::Float64;
  if (std::isnan(v)) return dbl ? "__longlong_as_double(0x7ff8000000000000LL)" : "__int_as_float(0x7fc00000)";
  if (std::isinf(v))
    return dbl ? (v < 0 ? "__longlong_as_double(0xfff0000000000000LL)" : "__longlong_as_double(0x7ff0000000000000LL)")
               : (v < 0 ? "__int_as_float(0xff800000)" : "__int_as_float(0x7f800000)");
  return hex_float_literal(v, t);
}

// The type a value is held in: 64-bit integers (index arithmetic) whose bounds fit in 32 bits are
// held in int32_t, since GPUs do 64-bit integer math in several instructions. Bounds are sound
// (ir/infer.cpp: unknown means the dtype's range), so no value changes: each op's result fits.
std::string value_type(const Node& n) {
  if (n.dtype == dtypes::int64 && n.vmin >= INT32_MIN && n.vmax <= INT32_MAX) return "int32_t";
  return reg_type(n.dtype);
}

std::string literal(const Node& c) {
  if (is_float(c.dtype)) return float_literal(std::get<double>(c.arg), c.dtype);
  int64_t v = std::get<int64_t>(c.arg);
  if (is_bool(c.dtype)) return v ? "true" : "false";
  if (c.dtype.scalar == Scalar::UInt64) return std::to_string(static_cast<uint64_t>(v)) + "ull";
  if (v == INT64_MIN) return "INT64_MIN";
  return "((" + value_type(c) + ")" + std::to_string(v) + "ll)";
}

class GpuWriter {
 public:
  GpuWriter(const LinearProgram& p, bool warp_shuffle)
      : p_(p), dims_(gpu_launch_dims(p)), warp_shuffle_(warp_shuffle), vectors_(plan_vector_accesses(p)) {
    for (const NodeRef& n : p.ops) {
      // Its value is acc op x, MULACC(a, b, acc) or WMMA(..., acc...) (ADD), or the accumulator
      // itself when the update folded away (every share is the identity: MAX, idempotent, combines
      // them unchanged).
      if (n->op != Op::ACCUMULATE) continue;
      Op u = n->src[1]->op;
      Op op = n->src[1] == n->src[0] ? Op::MAX : u == Op::MULACC || u == Op::WMMA ? Op::ADD : u;
      LG_CHECK(op == Op::ADD || op == Op::MUL || op == Op::MAX, "GPU renderer: accumulator updated by ", op_name(op));
      acc_op_[n->src[0].get()] = op;
    }
  }

  std::string run(const std::string& prelude) {
    std::string params;
    for (size_t k = 0; k < p_.globals.size(); k++) {
      DType g = p_.globals[k];
      params += str(k ? ", " : "", g.scalar == Scalar::Void ? "void" : mem_type(g), "* __restrict__ data", k);
    }
    for (size_t k = 0; k < dims_.tensor_maps.size(); k++)
      params += str(", const __grid_constant__ lg_tensor_map lg_tmap", k);
    out_ = prelude + kGpuCommonPrelude + kScalarPrelude;
    if (std::any_of(p_.ops.begin(), p_.ops.end(), [](const NodeRef& n) { return n->op == Op::BLOCK_MMA; })) out_ += kBlockMmaSource;
    for (const NodeRef& n : p_.ops)  // the hand-written kernel's functions, for its inputs' dtype
      if (n->op == Op::ATTENTION) out_ += attention_cuda_source(n->src[2]->dtype.base());
    out_ += "/* " + p_.name + " */\n";
    // A cluster tiling's clusters (codegen/gpu_launch.h) are the kernel's own: a plain launch makes them.
    const std::string cluster = dims_.cluster > 1 ? str(" __cluster_dims__(", dims_.cluster, ", 1, 1)") : "";
    out_ += str("extern \"C\" __global__ void __launch_bounds__(", dims_.threads, ")", cluster, " lg_kernel(",
                params, ") {\n");
    if (dims_.persistent) return run_persistent();
    line("const int64_t lg_b = (int64_t)blockIdx.x + (int64_t)blockIdx.y * (int64_t)gridDim.x;");
    line("const int64_t lg_t = (int64_t)threadIdx.x;");
    line("(void)lg_b; (void)lg_t;");
    if (dims_.grid_padded) line(str("if (lg_b >= ", dims_.blocks, "ll) return;"));
    if (dims_.shared_bytes > 0) line(str("LG_DYNAMIC_SHARED(lg_dsmem); /* ", dims_.shared_bytes, " bytes */"));
    for (const NodeRef& n : p_.ops) emit(*n);
    return out_ + "}\n";
  }
  // A persistent block matmul (codegen/gpu_launch.h): its setup once, then the body per block b of
  // the kernel's, b = blockIdx.x, blockIdx.x + gridDim.x, ...
  std::string run_persistent() {
    auto mma = std::find_if(p_.ops.begin(), p_.ops.end(), [](const NodeRef& n) { return n->op == Op::BLOCK_MMA; });
    LG_CHECK(mma != p_.ops.end(), p_.name, ": a persistent kernel without a block matmul");
    line("const int64_t lg_t = (int64_t)threadIdx.x;");
    line(str("LG_DYNAMIC_SHARED(lg_dsmem); /* ", dims_.shared_bytes, " bytes */"));
    const BlockMmaArg arg = BlockMmaArg::from_shape((*mma)->get_arg<Shape>());
    lines(block_mma_persistent_setup(arg, "lg_t", "lg_dsmem"));
    line(str("for (int64_t lg_b = (int64_t)blockIdx.x; lg_b < ", dims_.blocks, "ll; lg_b += (int64_t)gridDim.x) {"));
    depth_++;
    for (const NodeRef& n : p_.ops) emit(*n);
    depth_--;
    line("}");
    const std::string teardown = block_mma_persistent_teardown(arg, "lg_t", "lg_dsmem");
    if (!teardown.empty()) lines(teardown);
    return out_ + "}\n";
  }

 private:
  const LinearProgram& p_;
  LaunchDims dims_;
  bool warp_shuffle_;
  VectorAccessPlan vectors_;
  std::unordered_map<int, std::string> vector_value_;  // load group -> the variable holding it
  std::string out_;
  int depth_ = 1;
  std::unordered_map<const Node*, std::string> expr_;  // how to refer to each value
  std::unordered_set<const Node*> launch_ranges_;      // GLOBAL/LOCAL/GROUP: no loop to close
  std::unordered_map<const Node*, Op> acc_op_;          // DEFINE_ACC -> how its updates combine
  std::vector<const Node*> accs_;                       // DEFINE_ACCs in program order
  int next_ = 0;

  const std::string& ref(const NodeRef& n) {
    auto it = expr_.find(n.get());
    LG_CHECK(it != expr_.end(), "GPU renderer: ", op_name(n->op), " used before it is defined");
    return it->second;
  }
  void line(const std::string& s) { out_ += std::string(2 * depth_, ' ') + s + "\n"; }
  void lines(const std::string& s) {
    for (size_t b = 0, e; b < s.size(); b = e + 1) {
      e = s.find('\n', b);
      if (e == std::string::npos) e = s.size();
      line(s.substr(b, e - b));
    }
  }
  void define(const Node& n, const std::string& value) {
    std::string v = "v" + std::to_string(next_++);
    line(str("const ", value_type(n), " ", v, " = ", value, ";"));
    expr_[&n] = v;
  }

  void emit(const Node& n) {
    if (n.op == Op::RANGE || n.op == Op::END) mmas_.clear();  // an mma's result is seen in its block only
    switch (n.op) {
      case Op::DEFINE_GLOBAL: expr_[&n] = str("data", n.get_arg<int64_t>()); return;
      case Op::CONST: expr_[&n] = literal(n); return;
      case Op::RANGE: return open_range(n);
      case Op::END:
        if (launch_ranges_.count(n.src[0].get())) return combine_threads(*n.src[0]);
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
        accs_.push_back(&n);
        return;
      }
      case Op::ACCUMULATE:
        line(str(ref(n.src[0]), " = ", ref(n.src[1]), ";"));
        expr_[&n] = ref(n.src[0]);
        return;
      case Op::WMMA: return emit_wmma(n);
      case Op::BLOCK_MMA: return emit_block_mma(n);
      case Op::ATTENTION:  // every thread of the block calls it (codegen/render_attention.h)
        return line(attention_call(n, [this](const NodeRef& x) { return ref(x); }, true));
      case Op::DEFINE_LOCAL: {  // codegen/smem.h: the block's shared tile
        const BufferArg& a = n.get_arg<BufferArg>();
        expr_[&n] = str("lg_smem", a.uid);
        line(str("__shared__ ", mem_type(n.dtype.base()), " lg_smem", a.uid, "[", a.size, "];"));
        return;
      }
      case Op::BARRIER:  // every thread of the block reaches it: it sits in loops all threads run alike
        line("__syncthreads();");
        if (!n.src.empty()) expr_[&n] = ref(n.src[0]);
        return;
      default: break;
    }
    LG_CHECK(is_alu(n.op), "GPU renderer cannot render ", op_name(n.op));
    define(n, alu_expr(n));
  }

  void open_range(const Node& r) {
    int64_t id = r.get_arg<RangeArg>().id;
    std::string v = id < 0 ? "rn" + std::to_string(-id) : "r" + std::to_string(id);
    expr_[&r] = v;
    for (const GpuAxis& a : dims_.axes) {
      if (a.range != &r) continue;
      int64_t total = a.local ? dims_.threads : dims_.blocks;
      std::string e = a.local ? "lg_t" : "lg_b";
      if (a.stride > 1) e = str("(", e, " / ", a.stride, "ll)");
      if (a.stride * a.size < total) e = str("(", e, " % ", a.size, "ll)");
      line(str("const ", value_type(r), " ", v, " = ", e, ";"));
      launch_ranges_.insert(&r);
      return;
    }
    if (r.get_arg<RangeArg>().type == AxisType::COOP) {  // the block's threads share its iterations
      line(str("for (", value_type(r), " ", v, " = lg_t; ", v, " < ", ref(r.src[0]), "; ", v, " += ", dims_.threads, ") {"));
      depth_++;
      return;
    }
    line(str("for (", value_type(r), " ", v, " = 0; ", v, " < ", ref(r.src[0]), "; ", v, "++) {"));
    depth_++;
  }

  const GpuAxis* axis_of(const Node& r) const {
    for (const GpuAxis& a : dims_.axes)
      if (a.range == &r) return &a;
    return nullptr;
  }
  // The position of this thread in the block's group (the GROUP ranges' axis: stride 1).
  std::string group_thread() const { return str("((lg_t / 1ll) % ", dims_.group, "ll)"); }
  bool reads_group_range(const NodeRef& index) const {
    for (const Node* n : toposort(index))
      if (n->op == Op::RANGE && n->get_arg<RangeArg>().type == AxisType::GROUP) return true;
    return false;
  }

  // After the loops of a reduction split over the group's threads by GROUP range r (GROUPTOP):
  // every accumulator over r holds its thread's share; afterwards every thread of the group holds
  // the group's result (the same bits in each: every step combines the same two values, and ADD,
  // MUL and MAX are commutative). So code after it (a row kernel's outputs) may read it in any
  // thread. Every thread of the block runs the combine (it sits in code all threads run: GROUP
  // ranges are thread indices, not branches), as its barriers and full-warp shuffles need.
  void combine_threads(const Node& r) {
    const GpuAxis* a = axis_of(r);
    if (!a || !a->reduced) return;
    for (const Node* acc : accs_) {
      if (std::find(acc->src.begin() + 1, acc->src.end(), &r) == acc->src.end()) continue;
      line("{");
      depth_++;
      if (can_shuffle(*a, acc->dtype)) combine_in_warps(*a, *acc);
      else combine_in_shared_memory(*a, *acc);
      depth_--;
      line("}");
    }
  }
  // Warp shuffles need whole warps of 32 lanes: a power-of-two group of neighbouring threads
  // (stride 1, aligned, so a butterfly stays inside it) in blocks of whole warps, and a
  // shuffleable type.
  bool can_shuffle(const GpuAxis& a, DType t) const {
    bool pow2 = a.size >= 2 && (a.size & (a.size - 1)) == 0;
    bool type = is_float(t) || t.scalar == Scalar::Int32 || t.scalar == Scalar::UInt32 || t.scalar == Scalar::Int64 ||
                t.scalar == Scalar::UInt64;
    return warp_shuffle_ && a.stride == 1 && pow2 && dims_.threads % 32 == 0 && type;
  }
  // A butterfly over the lanes of each warp, then (groups of several warps) one value per warp
  // through shared memory, folded in warp order.
  void combine_in_warps(const GpuAxis& a, const Node& acc) {
    const std::string& v = expr_.at(&acc);
    Op op = acc_op_.at(&acc);
    int64_t lanes = std::min<int64_t>(a.size, 32);
    line(str("for (int lg_o = ", lanes / 2, "; lg_o > 0; lg_o >>= 1) ", v, " = ",
             combine(op, acc.dtype, v, str("__shfl_xor_sync(0xffffffffu, ", v, ", lg_o)")), ";"));
    if (a.size <= 32) return;
    std::string sh = "lg_red" + v.substr(3);
    int64_t warps = a.size / 32;
    line(str("__shared__ ", reg_type(acc.dtype), " ", sh, "[", dims_.threads / 32, "];"));
    line(str("if (lg_t % 32 == 0) ", sh, "[lg_t / 32] = ", v, ";"));
    line("__syncthreads();");
    line(str(v, " = ", ref(acc.src[0]), ";"));
    line(str("for (int lg_j = 0; lg_j < ", warps, "; lg_j++) ", v, " = ",
             combine(op, acc.dtype, v, str(sh, "[(lg_t / ", a.size, ") * ", warps, " + lg_j]")), ";"));
    line("__syncthreads();  // before the next use of shared memory");
  }
  // Every thread publishes its share; each folds its group's shares in order.
  void combine_in_shared_memory(const GpuAxis& a, const Node& acc) {
    const std::string& v = expr_.at(&acc);
    std::string sh = "lg_red" + v.substr(3);
    line(str("__shared__ ", reg_type(acc.dtype), " ", sh, "[", dims_.threads, "];"));
    line(str(sh, "[lg_t] = ", v, ";"));
    line("__syncthreads();");
    line(str(v, " = ", ref(acc.src[0]), ";"));
    std::string other = str(sh, "[lg_t + (lg_j - ", group_thread(), ") * ", a.stride, "ll]");
    line(str("for (int64_t lg_j = 0; lg_j < ", a.size, "ll; lg_j++) ", v, " = ", combine(acc_op_.at(&acc), acc.dtype, v, other),
             ";"));
    line("__syncthreads();  // before the next use of shared memory");
  }
  static std::string combine(Op op, DType t, const std::string& x, const std::string& y) {
    if (op == Op::MAX) {
      if (is_float(t)) return str(t.scalar == Scalar::Float64 ? "lg_maxd(" : "lg_maxf(", x, ", ", y, ")");
      return str("(", x, " < ", y, " ? ", y, " : ", x, ")");
    }
    std::string e = str(x, op == Op::ADD ? " + " : " * ", y);
    return is_float(t) ? rounded(t, e) : str("(", reg_type(t), ")(", e, ")");
  }

  void emit_load(const Node& n) {
    if (auto g = vectors_.group_of.find(&n); g != vectors_.group_of.end()) return emit_vector_load(n, g->second);
    const Node& idx = *n.src[0];
    std::string v = from_memory(n.dtype, ref(n.src[0]));
    if (idx.src.size() == 3) v = str(ref(idx.src[2]), " ? ", v, " : (", reg_type(n.dtype), ")0");
    define(n, v);
  }

  // A store whose address does not depend on a GROUP range writes a value every thread of the
  // group holds (after combine_threads, or computed alike in each): the group's first thread
  // stores (a read-modify-write of the output by the others would race with it).
  std::string store_gate(const Node& idx) const {
    std::string gate = idx.src.size() == 3 ? expr_.at(idx.src[2].get()) : "";
    bool shared = idx.src[0]->op == Op::DEFINE_LOCAL;  // a COOP copy: each thread stores its own iterations
    if (dims_.group > 1 && !shared && !reads_group_range(idx.src[1]))
      gate += str(gate.empty() ? "" : " && ", group_thread(), " == 0");
    return gate;
  }

  void emit_store(const Node& n) {
    if (auto g = vectors_.group_of.find(&n); g != vectors_.group_of.end()) return emit_vector_store(n, g->second);
    // An atomic add (Opt ATOMIC): float32, float64 or int32; each dialect's prelude defines lg_atomic_add.
    std::string s = is_atomic_add(n)
                        ? str("lg_atomic_add(&", ref(n.src[0]), ", ", ref(n.src[1]), ");")
                        : str(ref(n.src[0]), " = ", to_memory(n.src[1]->dtype, ref(n.src[1])), ";");
    std::string gate = store_gate(*n.src[0]);
    line(gate.empty() ? s : str("if (", gate, ") ", s));
  }

  // Vector accesses (codegen/gpu_vector_access.h): float4 (float2) for 4 (2) float32 elements,
  // uint4, uint2 or one uint32_t for 8, 4 or 2 16-bit ones (element 2i in the low half of word i:
  // little-endian, as in memory).
  static bool is_float_vector(const VectorAccess& g) {
    const Node* m = g.members[0];
    return (m->op == Op::LOAD ? m->dtype : m->src[1]->dtype) == dtypes::float32;
  }
  static const char* vector_type(const VectorAccess& g) {
    const size_t n = g.members.size();
    if (is_float_vector(g)) return n == 4 ? "float4" : "float2";
    return n == 8 ? "uint4" : n == 4 ? "uint2" : "uint32_t";
  }
  // Word (float32: element) i of vector variable v of group g.
  static std::string vector_part(const VectorAccess& g, const std::string& v, int i) {
    if (!is_float_vector(g) && g.members.size() == 2) return v;  // one 32-bit word
    return str(v, ".", kWord[i]);
  }
  static int lane_of(const VectorAccess& g, const Node& n) {
    return static_cast<int>(std::find(g.members.begin(), g.members.end(), &n) - g.members.begin());
  }
  // The group's first element, from member n's own index.
  std::string vector_address(const VectorAccess& g, const Node& n) {
    const Node& idx = *n.src[0];
    int lane = lane_of(g, n);
    const std::string& e = ref(idx.src[1]);
    return str(ref(idx.src[0]), " + ", lane == 0 ? e : str("(", e, " - ", lane, ")"));
  }
  // The group is read where its first member is met; each member is one lane of it.
  void emit_vector_load(const Node& n, int group) {
    const VectorAccess& g = vectors_.groups[group];
    std::string& v = vector_value_[group];
    if (v.empty()) {
      v = "vec" + std::to_string(next_++);
      const char* T = vector_type(g);
      line(str("const ", T, " ", v, " = *(const ", T, "*)(", vector_address(g, n), ");"));
    }
    int lane = lane_of(g, n);
    if (is_float_vector(g)) return define(n, vector_part(g, v, lane));
    std::string bits = str("(unsigned short)(", vector_part(g, v, lane / 2), lane % 2 ? " >> 16" : "", ")");
    define(n, from_memory(n.dtype, str(n.dtype.scalar == Scalar::BFloat16 ? "lg_bits_bf16(" : "lg_bits_f16(", bits, ")")));
  }
  static constexpr const char* kWord = "xyzw";
  // The 32-bit word of a loaded 16-bit vector group that holds member n, and which half (1: high).
  std::optional<std::pair<std::string, int>> vector_word(const Node& n) {
    auto g = vectors_.group_of.find(&n);
    if (n.op != Op::LOAD || g == vectors_.group_of.end()) return std::nullopt;
    const VectorAccess& group = vectors_.groups[g->second];
    auto v = vector_value_.find(g->second);
    if (is_float_vector(group) || v == vector_value_.end()) return std::nullopt;
    int lane = lane_of(group, n);
    return std::make_pair(vector_part(group, v->second, lane / 2), lane % 2);
  }
  // The group is written where its last member is met (every member's value is defined there).
  void emit_vector_store(const Node& n, int group) {
    const VectorAccess& g = vectors_.groups[group];
    if (&n != g.last) return;
    std::vector<std::string> v;
    for (const Node* m : g.members) v.push_back(to_memory(m->src[1]->dtype, ref(m->src[1])));
    std::string value;
    if (is_float_vector(g)) {
      value = v.size() == 4 ? str("make_float4(", v[0], ", ", v[1], ", ", v[2], ", ", v[3], ")")
                            : str("make_float2(", v[0], ", ", v[1], ")");
    } else {
      const char* bits = n.src[1]->dtype.scalar == Scalar::BFloat16 ? "lg_bf16_bits(" : "lg_f16_bits(";
      auto word = [&](int i) { return str("((uint32_t)", bits, v[2 * i], ") | ((uint32_t)", bits, v[2 * i + 1], ") << 16))"); };
      value = v.size() == 8   ? str("make_uint4(", word(0), ", ", word(1), ", ", word(2), ", ", word(3), ")")
              : v.size() == 4 ? str("make_uint2(", word(0), ", ", word(1), ")")
                              : word(0);
    }
    std::string s = str("*(", vector_type(g), "*)(", vector_address(g, n), ") = ", value, ";");
    std::string gate = store_gate(*n.src[0]);
    line(gate.empty() ? s : str("if (", gate, ") ", s));
  }

  // WMMA (codegen/tensor_core.h): the four WMMAs of one tile (same sources) share one warp-wide
  // mma, issued at the first (the linearizer keeps them in one block: same loops, same sources).
  void emit_wmma(const Node& n) {
    std::vector<const Node*> key;
    for (const NodeRef& s : n.src) key.push_back(s.get());
    auto it = mmas_.find(key);
    if (it == mmas_.end()) {
      const char* t = n.src[1]->dtype == dtypes::bfloat16 ? "bf16" : "f16";
      std::string args;
      for (int r = 0; r < 6; r++)  // A's 4 registers, then B's 2: element pairs, the even one low
        args += str(r ? ", " : "", fragment_register(*n.src[1 + 2 * r], *n.src[2 + 2 * r], t));
      for (int c = 13; c < 17; c++) args += str(", ", ref(n.src[c]));
      std::string m = str("mma", next_++);
      line(str("const lg_mma_f32x4 ", m, " = lg_mma_m16n8k16_", t, "(", args, ");"));
      it = mmas_.emplace(key, m).first;
    }
    define(n, str(it->second, ".x[", n.get_arg<int64_t>(), "]"));
  }
  std::map<std::vector<const Node*>, std::string> mmas_;  // WMMA sources -> the mma's result

  // BLOCK_MMA (codegen/block_mma.h): the outputs of one block matmul (same operands, offsets and
  // thread) share one call of the main loop, made at the first (in code every thread of the block
  // runs: the kernel has no loops, only launch ranges); each is one of its accumulators.
  void emit_block_mma(const Node& n) {
    std::vector<const Node*> key{n.src[2].get(), n.src[3].get(), n.src[4].get()};  // wm, wn, lane
    for (size_t s = kBlockMmaThreadSources; s < n.src.size(); s++) key.push_back(n.src[s].get());
    const BlockMmaArg arg = BlockMmaArg::from_shape(n.get_arg<Shape>());
    auto it = block_mmas_.find(key);
    if (it == block_mmas_.end()) {
      const BlockMmaTiling& t = arg.tiling;
      LG_CHECK(dims_.threads == block_mma_threads(t), p_.name, ": a block matmul of ", block_mma_threads(t),
               " threads in a block of ", dims_.threads);
      // A persistent producer's `continue` goes on to the next tile: no loop of the body may be open.
      LG_CHECK(!t.persistent || depth_ == 2, p_.name, ": a persistent block matmul inside a loop");
      std::vector<BlockMmaOperands> operands;
      for (size_t s = kBlockMmaThreadSources; s < n.src.size(); s += kBlockMmaProductSources)
        operands.push_back({ref(n.src[s]), ref(n.src[s + 1]), ref(n.src[s + 2]), ref(n.src[s + 3])});
      std::string acc = str("bmma", next_++);
      lines(block_mma_call(arg, n.src[kBlockMmaThreadSources]->dtype.base(), acc, operands, ref(n.src[2]), ref(n.src[3]),
                           ref(n.src[4]), "lg_t", "lg_dsmem"));
      it = block_mmas_.emplace(key, acc).first;
    }
    for (int s = 5; s < 8; s++) LG_CHECK(n.src[s]->is_const(), p_.name, ": a BLOCK_MMA accumulator index is not a constant");
    define(n, str(it->second, "[", n.src[5]->const_as_int(), "][", n.src[6]->const_as_int(), "].x[", n.src[7]->const_as_int(), "]"));
  }
  std::map<std::vector<const Node*>, std::string> block_mmas_;  // BLOCK_MMA operands and thread -> its accumulators

  // A tensor-core register: fragment elements lo and hi (lo in the low half). Both halves of one
  // word of a vector load (a lane run along k): that word; halves of two loaded words (a lane run
  // along m or n: k neighbours are rows apart): the two halves picked by one byte permutation;
  // two adjacent elements in memory: one 32-bit load (gpu_vector_access.h); else convert and pack.
  std::string fragment_register(const Node& lo, const Node& hi, const char* t) {
    auto wl = vector_word(lo), wh = vector_word(hi);
    if (wl && wh) {
      if (wl->first == wh->first && wl->second == 0 && wh->second == 1) return wl->first;
      // __byte_perm(x, y, s): byte i of the result is byte (s >> 4i) & 7 of y:x
      int sel = (wl->second ? 0x32 : 0x10) | (wh->second ? 0x76 : 0x54) << 8;
      return str("__byte_perm(", wl->first, ", ", wh->first, ", 0x", hex4(sel), "u)");
    }
    if (is_aligned_word_pair(&lo, &hi)) return str("*(const uint32_t*)(", ref(lo.src[0]->src[0]), " + ", ref(lo.src[0]->src[1]), ")");
    return str("lg_pack_", t, "x2(", expr_.at(&lo), ", ", expr_.at(&hi), ")");
  }
  static std::string hex4(int v) {
    char b[8];
    std::snprintf(b, sizeof b, "%04x", v);
    return b;
  }

  std::string alu_expr(const Node& n);
  std::string bitcast_expr(const Node& n);
};

// BITCAST: through the stored bit pattern.
std::string GpuWriter::bitcast_expr(const Node& n) {
  DType in = n.src[0]->dtype, t = n.dtype;
  const std::string& x = ref(n.src[0]);
  std::string b;
  if (in.scalar == Scalar::BFloat16) b = "(uint64_t)lg_bf16_bits(lg_f_to_bf16(" + x + "))";
  else if (in.scalar == Scalar::Float16) b = "(uint64_t)lg_f16_bits(lg_f_to_f16(" + x + "))";
  else if (in.scalar == Scalar::Float32) b = "(uint64_t)lg_f_bits(" + x + ")";
  else if (in.scalar == Scalar::Float64) b = "lg_d_bits(" + x + ")";
  else b = str("(uint64_t)(", mem_type(in), ")", x);
  if (t.scalar == Scalar::BFloat16) return "lg_bf16_to_f(lg_bits_bf16((unsigned short)" + b + "))";
  if (t.scalar == Scalar::Float16) return "lg_f16_to_f(lg_bits_f16((unsigned short)" + b + "))";
  if (t.scalar == Scalar::Float32) return "lg_bits_f((uint32_t)" + b + ")";
  if (t.scalar == Scalar::Float64) return "lg_bits_d(" + b + ")";
  return str("(", reg_type(t), ")", b);
}

// BITCAST here; the other ops are the shared C subset's (codegen/scalar_expr.h). An operand held
// in 32 bits of an op whose result may not fit them is widened first, so the op is computed in 64
// bits as the IR says.
std::string GpuWriter::alu_expr(const Node& n) {
  if (n.op == Op::BITCAST) return bitcast_expr(n);
  std::string T = value_type(n);
  std::vector<std::string> src;
  for (const NodeRef& x : n.src) {
    const std::string& r = ref(x);
    src.push_back(T == "int64_t" && value_type(*x) == "int32_t" ? "((int64_t)" + r + ")" : r);
  }
  return scalar_alu_expr(n, src, T, {.exp2_f32 = "exp2f"});
}

}  // namespace

std::string render_gpu_kernel(const LinearProgram& prog, const std::string& dialect_prelude, bool warp_shuffle) {
  return GpuWriter(prog, warp_shuffle).run(dialect_prelude);
}

}  // namespace lg
