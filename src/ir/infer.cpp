#include "ir/infer.h"

#include <algorithm>
#include <limits>

#include "base/error.h"
#include "ir/attention.h"

namespace lg {

static bool arg_kind_matches(ArgKind k, const Arg& a) {
  switch (k) {
    case ArgKind::None: return std::holds_alternative<std::monostate>(a);
    case ArgKind::String: return std::holds_alternative<std::string>(a);
    case ArgKind::Buffer: return std::holds_alternative<BufferArg>(a);
    case ArgKind::Const: return std::holds_alternative<int64_t>(a) || std::holds_alternative<double>(a);
    case ArgKind::Int: return std::holds_alternative<int64_t>(a);
    case ArgKind::Var: return std::holds_alternative<VarArg>(a);
    case ArgKind::Shape: return std::holds_alternative<Shape>(a);
    case ArgKind::Pairs: return std::holds_alternative<Pairs>(a);
    case ArgKind::Reduce: return std::holds_alternative<ReduceArg>(a);
    case ArgKind::Range: return std::holds_alternative<RangeArg>(a);
    case ArgKind::Op: return std::holds_alternative<Op>(a);
  }
  return false;
}

static bool arity_ok(Op op, size_t n) {
  switch (op) {
    case Op::CONST: return n <= 1;
    case Op::INDEX: return n == 2 || n == 3;
    case Op::AT: return n >= 2;
    case Op::REDUCE:
    case Op::DEFINE_ACC: return n >= 1;
    default: {
      int want = op_info(op).nsrc;
      return want < 0 || static_cast<size_t>(want) == n;
    }
  }
}

void check_node(Op op, DType dtype, const std::vector<NodeRef>& src, const Arg& arg) {
  const OpInfo& info = op_info(op);
  LG_CHECK(arity_ok(op, src.size()), info.name, " with ", src.size(), " sources");
  const bool atomic_add = op == Op::STORE && std::holds_alternative<Op>(arg) && std::get<Op>(arg) == Op::ADD;
  LG_CHECK(atomic_add || arg_kind_matches(info.arg, arg), info.name, " with arg ", arg_to_string(arg));
  if (op == Op::CONST) {
    LG_CHECK(is_float(dtype) == std::holds_alternative<double>(arg), "CONST ", name(dtype), " holds ",
             arg_to_string(arg));
  }
  if (is_binary(op) || op == Op::MULACC) {
    size_t first = 0;
    for (size_t i = 1; i < src.size(); i++)
      LG_CHECK(src[i]->dtype == src[first]->dtype, info.name, " of ", name(src[first]->dtype), " and ",
               name(src[i]->dtype));
    if (is_comparison(op))
      LG_CHECK(dtype.scalar == Scalar::Bool, info.name, " must be bool, got ", name(dtype));
    else
      LG_CHECK(dtype == src[0]->dtype, info.name, " dtype ", name(dtype), " differs from its sources' ",
               name(src[0]->dtype));
    if (op == Op::IDIV || op == Op::MOD || op == Op::SHL || op == Op::SHR)
      LG_CHECK(is_int(dtype), info.name, " needs an integer dtype, got ", name(dtype));
    if (op == Op::AND || op == Op::OR || op == Op::XOR)
      LG_CHECK(!is_float(dtype), info.name, " needs an integer or bool dtype, got ", name(dtype));
  }
  if (is_unary(op) && op != Op::CAST && op != Op::BITCAST) {
    LG_CHECK(dtype == src[0]->dtype, info.name, " changes dtype");
    if (op != Op::NEG) LG_CHECK(is_float(dtype), info.name, " needs a float dtype, got ", name(dtype));
  }
  if (op == Op::BITCAST) LG_CHECK(itemsize(dtype) == itemsize(src[0]->dtype), "BITCAST between sizes");
  if (op == Op::WHERE) {
    LG_CHECK(src[0]->dtype.scalar == Scalar::Bool, "WHERE condition is ", name(src[0]->dtype));
    LG_CHECK(src[1]->dtype == src[2]->dtype && dtype == src[1]->dtype, "WHERE branches differ in dtype");
  }
  if (op == Op::RANGE)
    LG_CHECK(dtype == dtypes::index && src[0]->dtype == dtypes::index, "RANGE must be index typed");
  if (op == Op::INDEX) {
    LG_CHECK(src[0]->dtype.ptr && dtype.ptr, "INDEX of a non-pointer");
    LG_CHECK(src[1]->dtype == dtypes::index, "INDEX offset is ", name(src[1]->dtype));
    if (src.size() == 3) LG_CHECK(src[2]->dtype == dtypes::boolean, "INDEX gate is ", name(src[2]->dtype));
  }
  // An INDEX of a vector pointer (codegen/vectorize.h) addresses count consecutive elements.
  auto pointee = [](DType p) { return DType{p.scalar, p.count, false}; };
  if (op == Op::LOAD)
    LG_CHECK(src[0]->op == Op::INDEX && dtype == pointee(src[0]->dtype), "LOAD of ", op_name(src[0]->op));
  if (op == Op::STORE)
    LG_CHECK(src[0]->op == Op::INDEX && src[1]->dtype == pointee(src[0]->dtype), "STORE dtype mismatch");
  if (op == Op::VECTORIZE) {
    LG_CHECK(!src.empty() && dtype.count == src.size(), "VECTORIZE of ", src.size(), " lanes to ", name(dtype));
    for (const NodeRef& s : src) LG_CHECK(s->dtype == dtype.base(), "VECTORIZE lane of ", name(s->dtype));
  }
  if (op == Op::GEP) LG_CHECK(src[0]->dtype.count > 1 && dtype == src[0]->dtype.base(), "GEP of ", name(src[0]->dtype));
  if (op == Op::REDUCE || op == Op::REDUCE_AXIS) {
    Op r = op == Op::REDUCE ? std::get<Op>(arg) : std::get<ReduceArg>(arg).op;
    LG_CHECK(r == Op::ADD || r == Op::MUL || r == Op::MAX, "reduce with ", op_name(r));
    LG_CHECK(dtype == src[0]->dtype, "reduce changes dtype");
    for (size_t i = 1; op == Op::REDUCE && i < src.size(); i++)
      LG_CHECK(src[i]->op == Op::RANGE, "REDUCE over a non-RANGE");
  }
  if (op == Op::AT) LG_CHECK(src[1]->dtype == dtypes::boolean, "AT gate is ", name(src[1]->dtype));
  if (op == Op::WMMA) {  // (lane, a0..a7, b0..b3, c0..c3); ops.def says what it computes
    LG_CHECK(src[0]->op == Op::RANGE && src[0]->src[0]->is_const_value(32), "WMMA lane is not a RANGE of 32");
    DType ab = src[1]->dtype;
    LG_CHECK(ab == dtypes::bfloat16 || ab == dtypes::float16, "WMMA of ", name(ab));
    for (size_t i = 1; i <= 12; i++) LG_CHECK(src[i]->dtype == ab, "WMMA fragments of ", name(ab), " and ", name(src[i]->dtype));
    for (size_t i = 13; i < 17; i++) LG_CHECK(src[i]->dtype == dtypes::float32, "WMMA accumulator of ", name(src[i]->dtype));
    int64_t e = std::get<int64_t>(arg);
    LG_CHECK(dtype == dtypes::float32 && e >= 0 && e < 4, "WMMA element ", e, " of ", name(dtype));
  }
  if (op == Op::BLOCK_MMA) {  // (row, col, wm, wn, lane, tm, tn, e, then a, a_off, b, b_off per product); ops.def
    LG_CHECK(src.size() >= 12 && (src.size() - 8) % 4 == 0, "BLOCK_MMA of ", src.size(), " sources");
    DType ab = src[8]->dtype.base();
    for (size_t p = 8; p < src.size(); p += 4)
      LG_CHECK(src[p]->op == Op::DEFINE_GLOBAL && src[p + 2]->op == Op::DEFINE_GLOBAL && src[p]->dtype.base() == ab &&
                   src[p + 2]->dtype.base() == ab && (ab == dtypes::bfloat16 || ab == dtypes::float16),
               "BLOCK_MMA operands are not kernel arguments of one 16-bit float dtype");
    LG_CHECK(dtype == dtypes::float32 && std::get<Shape>(arg).size() == 8 + (src.size() - 8), "BLOCK_MMA of ", name(dtype));
  }
  if (op == Op::IOTA) LG_CHECK(is_int(dtype) || is_float(dtype), "IOTA of ", name(dtype));
}

static Shape reduce_shape(const Shape& s, const std::vector<int64_t>& axes) {
  Shape out = s;
  for (int64_t a : axes) {
    LG_CHECK(a >= 0 && a < static_cast<int64_t>(s.size()), "reduce axis ", a, " of rank ", s.size());
    out[a] = 1;
  }
  return out;
}

static int64_t prod(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Shape infer_shape(Op op, const std::vector<NodeRef>& src, const Arg& arg) {
  switch (op) {
    case Op::BUFFER: return {std::get<BufferArg>(arg).size};
    case Op::IOTA: return {std::get<int64_t>(arg)};
    case Op::RESHAPE: {
      const Shape& to = std::get<Shape>(arg);
      LG_CHECK(prod(to) == src[0]->numel(), "RESHAPE changes the element count");
      return to;
    }
    case Op::PERMUTE: {
      const Shape& p = std::get<Shape>(arg);
      const Shape& s = src[0]->shape;
      LG_CHECK(p.size() == s.size(), "PERMUTE rank");
      std::vector<bool> seen(s.size(), false);
      Shape out;
      for (int64_t a : p) {
        LG_CHECK(a >= 0 && a < static_cast<int64_t>(s.size()) && !seen[a], "PERMUTE is not a permutation");
        seen[a] = true;
        out.push_back(s[a]);
      }
      return out;
    }
    case Op::EXPAND: {
      const Shape& to = std::get<Shape>(arg);
      const Shape& s = src[0]->shape;
      LG_CHECK(to.size() == s.size(), "EXPAND rank");
      for (size_t i = 0; i < s.size(); i++) LG_CHECK(s[i] == to[i] || s[i] == 1, "EXPAND of a non-1 axis");
      return to;
    }
    case Op::PAD:
    case Op::SHRINK: {
      const Pairs& p = std::get<Pairs>(arg);
      const Shape& s = src[0]->shape;
      LG_CHECK(p.size() == s.size(), op_name(op), " rank");
      Shape out;
      for (size_t i = 0; i < s.size(); i++) {
        auto [a, b] = p[i];
        if (op == Op::PAD) {
          LG_CHECK(a >= 0 && b >= 0, "negative PAD");
          out.push_back(s[i] + a + b);
        } else {
          LG_CHECK(0 <= a && a <= b && b <= s[i], "SHRINK out of range");
          out.push_back(b - a);
        }
      }
      return out;
    }
    case Op::FLIP: {
      LG_CHECK(std::get<Shape>(arg).size() == src[0]->shape.size(), "FLIP rank");
      return src[0]->shape;
    }
    case Op::REDUCE_AXIS: return reduce_shape(src[0]->shape, std::get<ReduceArg>(arg).axes);
    case Op::CONTIGUOUS:
    case Op::DETACH:
    case Op::COPY:
    case Op::CAST:
    case Op::BITCAST: return src[0]->shape;
    case Op::GATHER: {
      const Shape& x = src[0]->shape;
      const Shape& idx = src[1]->shape;
      int64_t a = std::get<int64_t>(arg);
      LG_CHECK(x.size() == idx.size() && a >= 0 && a < static_cast<int64_t>(x.size()), "GATHER rank or axis");
      LG_CHECK(is_int(src[1]->dtype), "GATHER index must be an integer");
      for (size_t i = 0; i < x.size(); i++)
        LG_CHECK(static_cast<int64_t>(i) == a || idx[i] <= x[i], "GATHER index axis ", i, " exceeds the source");
      return idx;
    }
    case Op::FLASH_ATTENTION:
    case Op::FLASH_ATTENTION_GRAD: return attention_shape(op, src, std::get<int64_t>(arg));
    case Op::SCATTER_ADD: {
      const Shape& t = src[0]->shape;
      const Shape& idx = src[1]->shape;
      int64_t a = std::get<int64_t>(arg);
      LG_CHECK(idx == src[2]->shape && t.size() == idx.size() && a >= 0 && a < static_cast<int64_t>(t.size()),
               "SCATTER_ADD shapes or axis");
      LG_CHECK(is_int(src[1]->dtype), "SCATTER_ADD index must be an integer");
      for (size_t i = 0; i < t.size(); i++)
        LG_CHECK(static_cast<int64_t>(i) == a || idx[i] <= t[i], "SCATTER_ADD index axis ", i, " exceeds the target");
      return t;
    }
    case Op::ALLREDUCE:
      LG_CHECK(src.size() >= 2 && src[0]->op == Op::DEVICE, "ALLREDUCE needs (DEVICE, x...)");
      for (size_t i = 2; i < src.size(); i++)
        LG_CHECK(src[i]->shape == src[1]->shape && src[i]->dtype == src[1]->dtype,
                 "ALLREDUCE of values of different shapes or dtypes");
      return src[1]->shape;
    case Op::ASSIGN:
      LG_CHECK(src[0]->shape == src[1]->shape, "ASSIGN of a different shape");
      return src[0]->shape;
    default: break;
  }
  if (is_alu(op)) {
    for (const NodeRef& s : src) LG_CHECK(s->shape == src[0]->shape, op_name(op), " of different shapes");
    return src[0]->shape;
  }
  return {};
}

const Node* infer_device(Op op, const std::vector<NodeRef>& src) {
  if (op == Op::COPY) return src[1].get();
  if (op == Op::ALLREDUCE) return src[0].get();  // its inputs live on several devices
  if (op == Op::DEVICE || op == Op::SINK) return nullptr;  // a SINK may group roots of several devices
  if (op == Op::BUFFER || op == Op::CONST || op == Op::IOTA) return src.empty() ? nullptr : src[0].get();
  const Node* d = nullptr;
  for (const NodeRef& s : src) {
    const Node* sd = s->op == Op::DEVICE ? nullptr : s->device;
    if (sd == nullptr) continue;
    LG_CHECK(d == nullptr || d == sd, op_name(op), " mixes devices ", std::get<std::string>(d->arg), " and ",
             std::get<std::string>(sd->arg));
    d = sd;
  }
  return d;
}

// ---- integer bounds ----

using Wide = __int128;

static std::pair<int64_t, int64_t> full_range(DType t) {
  if (t.ptr || t.count != 1 || !(is_int(t) || is_bool(t)))
    return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  return {int_dtype_min(t), int_dtype_max(t)};
}

// Clamps candidate bounds to the dtype; bounds that do not fit mean "unknown" (the value may wrap).
static std::pair<int64_t, int64_t> fit(Wide lo, Wide hi, DType t) {
  auto [dmin, dmax] = full_range(t);
  if (lo < dmin || hi > dmax || lo > hi) return {dmin, dmax};
  return {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

static Wide trunc_div(Wide a, Wide b) { return a / b; }  // C++ division truncates toward zero

std::pair<int64_t, int64_t> infer_bounds(Op op, DType dtype, const std::vector<NodeRef>& src,
                                         const Arg& arg) {
  if (!(is_int(dtype) || is_bool(dtype)) || dtype.ptr || dtype.count != 1) return full_range(dtype);
  // A uint64 value's bounds saturate at INT64_MAX: vmax == INT64_MAX means it may be anything up to
  // 2^64-1, so nothing follows from it (else u64max/2 < 2^62+1 would be "always true").
  for (const NodeRef& s : src)
    if (s->dtype.scalar == Scalar::UInt64 && s->vmax == std::numeric_limits<int64_t>::max())
      return full_range(dtype);
  auto lo = [&](int i) -> Wide { return src[i]->vmin; };
  auto hi = [&](int i) -> Wide { return src[i]->vmax; };
  switch (op) {
    case Op::CONST: {
      int64_t v = std::get<int64_t>(arg);
      if (dtype.scalar == Scalar::UInt64 && v < 0) return full_range(dtype);
      return {v, v};
    }
    case Op::DEFINE_VAR: return {std::get<VarArg>(arg).min, std::get<VarArg>(arg).max};
    case Op::IOTA: return fit(0, std::max<Wide>(0, std::get<int64_t>(arg) - 1), dtype);
    case Op::RANGE: return fit(0, std::max<Wide>(0, hi(0) - 1), dtype);
    case Op::ADD: return fit(lo(0) + lo(1), hi(0) + hi(1), dtype);
    case Op::NEG: return fit(-hi(0), -lo(0), dtype);
    case Op::MUL: {
      Wide c[4] = {lo(0) * lo(1), lo(0) * hi(1), hi(0) * lo(1), hi(0) * hi(1)};
      return fit(*std::min_element(c, c + 4), *std::max_element(c, c + 4), dtype);
    }
    case Op::IDIV: {
      if (lo(1) > 0 || hi(1) < 0) {  // divisor never 0: truncated division is monotonic in each argument
        Wide c[4] = {trunc_div(lo(0), lo(1)), trunc_div(lo(0), hi(1)), trunc_div(hi(0), lo(1)),
                     trunc_div(hi(0), hi(1))};
        return fit(*std::min_element(c, c + 4), *std::max_element(c, c + 4), dtype);
      }
      return full_range(dtype);
    }
    case Op::MOD: {
      if (lo(1) > 0) {
        Wide m = hi(1) - 1;
        if (lo(0) >= 0) return fit(0, std::min(hi(0), m), dtype);
        if (hi(0) <= 0) return fit(std::max(lo(0), -m), 0, dtype);
        return fit(std::max(lo(0), -m), std::min(hi(0), m), dtype);
      }
      return full_range(dtype);
    }
    case Op::MAX: return fit(std::max(lo(0), lo(1)), std::max(hi(0), hi(1)), dtype);
    case Op::CMPLT:
      if (is_float(src[0]->dtype)) return {0, 1};
      if (hi(0) < lo(1)) return {1, 1};
      if (lo(0) >= hi(1)) return {0, 0};
      return {0, 1};
    case Op::CMPNE:
    case Op::CMPEQ: {
      if (is_float(src[0]->dtype)) return {0, 1};
      bool disjoint = hi(0) < lo(1) || hi(1) < lo(0);
      bool same_point = lo(0) == hi(0) && lo(1) == hi(1) && lo(0) == lo(1);
      int64_t ne_lo = disjoint ? 1 : 0, ne_hi = same_point ? 0 : 1;
      if (op == Op::CMPNE) return {ne_lo, ne_hi};
      return {1 - ne_hi, 1 - ne_lo};
    }
    case Op::AND:
      if (is_bool(dtype)) return {lo(0) & lo(1), hi(0) & hi(1)};
      if (lo(0) >= 0 && lo(1) >= 0) return fit(0, std::min(hi(0), hi(1)), dtype);
      return full_range(dtype);
    case Op::OR:
      if (is_bool(dtype)) return {lo(0) | lo(1), hi(0) | hi(1)};
      return full_range(dtype);
    case Op::XOR:
      if (is_bool(dtype) && lo(0) == hi(0) && lo(1) == hi(1)) return {lo(0) ^ lo(1), lo(0) ^ lo(1)};
      return is_bool(dtype) ? std::pair<int64_t, int64_t>{0, 1} : full_range(dtype);
    case Op::SHR:
      if (lo(0) >= 0 && lo(1) >= 0 && hi(1) < bitsize(dtype.scalar))
        return fit(lo(0) >> hi(1), hi(0) >> lo(1), dtype);
      return full_range(dtype);
    case Op::WHERE:
      if (src[0]->vmin == 1) return fit(lo(1), hi(1), dtype);
      if (src[0]->vmax == 0) return fit(lo(2), hi(2), dtype);
      return fit(std::min(lo(1), lo(2)), std::max(hi(1), hi(2)), dtype);
    case Op::CAST:
      if (is_int(src[0]->dtype) || is_bool(src[0]->dtype)) {
        if (is_bool(dtype)) {
          if (lo(0) > 0 || hi(0) < 0) return {1, 1};
          if (lo(0) == 0 && hi(0) == 0) return {0, 0};
          return {0, 1};
        }
        return fit(lo(0), hi(0), dtype);
      }
      return full_range(dtype);
    default: return full_range(dtype);
  }
}

}  // namespace lg
