#pragma once
// The C expressions of scalar values that the C renderer (codegen/render_c.h) and the GPU
// renderers (codegen/render_gpu.h) share: their common C subset. Each renderer keeps what differs
// (vector types, BITCAST through its prelude's 16-bit types, literals of NaN and infinity) and
// passes the rest here.
//
// Values of 16-bit float dtypes are held in float and rounded after every op (rounded()), as the
// interpreter rounds them; the renderers' preludes define lg_round_bf16 / lg_round_f16,
// lg_d_to_f_odd and lg_maxf / lg_maxd (their NaN and infinity spellings differ), then
// kScalarPrelude (below) the rest.
#include <string>
#include <vector>

#include "ir/node.h"

namespace lg {

// C helpers both preludes end with, mirroring ir/scalar.cpp: saturating float -> integer casts
// (NaN gives 0) and integer division and remainder where division by 0 gives 0 and signed x / -1
// wraps. LG_FN is the prelude's function qualifier (static inline; __device__ __forceinline__).
inline constexpr const char* kScalarPrelude = R"C(LG_FN int64_t lg_d_to_i(double x, double lo, double hi, int64_t ilo, int64_t ihi) {
  if (x != x) return 0;
  double t = trunc(x);
  return t <= lo ? ilo : t >= hi ? ihi : (int64_t)t;
}
LG_FN uint64_t lg_d_to_u64(double x) {
  if (x != x) return 0;
  double t = trunc(x);
  return t <= 0 ? 0 : t >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)t;
}
#define LG_IDIVS(a, b) ((b) == 0 ? 0 : (b) == -1 ? -(a) : (a) / (b))
#define LG_MODS(a, b) ((b) == 0 || (b) == -1 ? 0 : (a) % (b))
#define LG_IDIVU(a, b) ((b) == 0 ? 0 : (a) / (b))
#define LG_MODU(a, b) ((b) == 0 ? 0 : (a) % (b))
)C";

// The C type a scalar value of t is held in (16-bit floats: float; bool: the preludes' bool_t).
const char* scalar_c_type(DType t);

// A finite float of dtype t (float32 or float64 literal) as an exact hexadecimal literal.
std::string hex_float_literal(double v, DType t);

// e, a float expression, rounded to t where t is a 16-bit float.
std::string rounded(DType t, const std::string& e);

// A value of t read from memory (16-bit floats widened to float) and written to it (rounded to
// the stored 16 bits): the preludes' lg_bf16_to_f / lg_f_to_bf16 and the f16 pair.
std::string from_memory(DType t, const std::string& e);
std::string to_memory(DType t, const std::string& e);

// CAST of the scalar expression x from `from` to `to` (saturating float -> integer conversions,
// double -> 16-bit rounded once through float by rounding to odd).
std::string scalar_cast_expr(DType from, DType to, const std::string& x);

// What the dialects spell differently.
struct ScalarDialect {
  const char* exp2_f32;  // 2^x of a float: the C prelude's branch-free lg_exp2f, CUDA/HIP exp2f
};

// The expression of ALU op n (every ALU op but BITCAST, and MULACC) over its operands'
// expressions src, its result held in C type T. n may also be a vector of float lanes (the C
// renderer's GCC vector types) for the ops whose C spelling is the same on them (arithmetic,
// comparisons, select); the renderer writes the others.
std::string scalar_alu_expr(const Node& n, const std::vector<std::string>& src, const std::string& T,
                            const ScalarDialect& dialect);

}  // namespace lg
