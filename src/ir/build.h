#pragma once
// Small builders over make(): constants and ALU nodes with dtype rules applied. Integer operators
// (+ - * / %) are for index arithmetic in kernels and rewrite rules; both sides share a dtype and a
// plain int64_t operand becomes a CONST of the other side's dtype. `a == b` on NodeRefs stays pointer
// (structural) equality; comparisons are spelled lt/ne/eq.
#include "ir/node.h"

namespace lg {

// A CONST of dtype t holding v (converted as CAST would: ints truncate and wrap, floats round).
// device: the DEVICE node for tensor-stage constants, or null in kernels.
NodeRef cnst(DType t, double v, const NodeRef& device = {});
NodeRef cnst_int(DType t, int64_t v, const NodeRef& device = {});
inline NodeRef index_const(int64_t v) { return cnst_int(dtypes::index, v); }
NodeRef bool_const(bool v);

NodeRef alu(Op op, const NodeRef& a);
NodeRef alu(Op op, const NodeRef& a, const NodeRef& b);
NodeRef where(const NodeRef& c, const NodeRef& a, const NodeRef& b);
NodeRef cast(const NodeRef& x, DType t);

NodeRef operator+(const NodeRef& a, const NodeRef& b);
NodeRef operator-(const NodeRef& a, const NodeRef& b);  // a + b*(-1) for integers, a + (-b) for floats
NodeRef operator*(const NodeRef& a, const NodeRef& b);
NodeRef operator/(const NodeRef& a, const NodeRef& b);  // IDIV (integers only)
NodeRef operator%(const NodeRef& a, const NodeRef& b);  // MOD (integers only)
NodeRef operator+(const NodeRef& a, int64_t b);
NodeRef operator-(const NodeRef& a, int64_t b);
NodeRef operator*(const NodeRef& a, int64_t b);
NodeRef operator/(const NodeRef& a, int64_t b);
NodeRef operator%(const NodeRef& a, int64_t b);
NodeRef lt(const NodeRef& a, const NodeRef& b);
NodeRef lt(const NodeRef& a, int64_t b);
NodeRef ge(const NodeRef& a, int64_t b);  // NOT (a < b)
NodeRef ne(const NodeRef& a, const NodeRef& b);
NodeRef eq(const NodeRef& a, const NodeRef& b);
NodeRef logical_and(const NodeRef& a, const NodeRef& b);
NodeRef logical_not(const NodeRef& a);  // XOR with true

// A new, never used before BUFFER of `size` elements on device (a DEVICE node).
NodeRef new_buffer(const NodeRef& device, DType dtype, int64_t size);
// The uid the next new_buffer will get. Uids only grow, so every buffer made after this call has a
// uid >= the result (the JIT uses this to tell buffers made during a capture from older ones).
uint64_t next_buffer_uid();
NodeRef device_node(const std::string& name);

// A kernel loop variable 0..end-1.
NodeRef range(int64_t end, int64_t id, AxisType type);

}  // namespace lg
