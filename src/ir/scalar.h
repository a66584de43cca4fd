#pragma once
// The meaning of every ALU op on one scalar: the single definition that constant folding and the
// reference interpreter share (a device renderer must agree with it up to float rounding of
// transcendentals).
//
// A Value holds a float dtype's value as a double that is exactly representable in that dtype, and
// an integer or bool as int64 (wrapped to the dtype; uint64 as its bit pattern).
#include <cstdint>

#include "ir/dtype.h"
#include "ir/ops.h"

namespace lg {

struct Value {
  union {
    double f;
    int64_t i;
  };
  static Value of_float(double v) {
    Value x;
    x.f = v;
    return x;
  }
  static Value of_int(int64_t v) {
    Value x;
    x.i = v;
    return x;
  }
};

// op applied to args (n of them, all of dtype `in`, except WHERE whose first is bool); result in `out`.
Value eval_alu(Op op, DType out, DType in, const Value* args, int n);
// Converts v of dtype `from` to dtype `to` (CAST semantics).
Value cast_value(Value v, DType from, DType to);

// Memory encoding of one element (used by LOAD/STORE and host copies).
Value load_value(const void* p, DType t);
void store_value(void* p, DType t, Value v);

// The identity element of a reduction op in dtype t (0 for ADD, 1 for MUL, lowest for MAX).
Value reduce_identity(Op op, DType t);
double value_as_double(Value v, DType t);

}  // namespace lg
