#pragma once
// The C expressions of scalar values that the C renderer (codegen/render_c.h) and the GPU
// renderers (codegen/render_gpu.h) share: their common C subset. Each renderer keeps what differs
// (vector types, BITCAST through its prelude's 16-bit types, literals of NaN and infinity) and
// passes the rest here.
//
// Values of 16-bit float dtypes are held in float and rounded after every op (rounded()), as the
// interpreter rounds them; the preludes define lg_round_bf16 / lg_round_f16, lg_d_to_f_odd,
// lg_d_to_i, lg_d_to_u64, lg_maxf / lg_maxd and the LG_IDIV* / LG_MOD* macros.
#include <string>
#include <vector>

#include "ir/node.h"

namespace lg {

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
