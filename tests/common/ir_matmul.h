#pragma once
// Test helper: (n, k) @ (k, m) built from IR nodes as the tensor front end builds it (an EXPAND of
// both operands to (n, m, k), their product, a sum over k), for tests below the tensor layer.
#include "ir/build.h"

namespace lg::testing_util {

inline NodeRef ir_matmul(const NodeRef& a, const NodeRef& b) {
  int64_t n = a->shape[0], k = a->shape[1], m = b->shape[1];
  NodeRef x = make(Op::EXPAND, a->dtype, {make(Op::RESHAPE, a->dtype, {a}, Shape{n, 1, k})}, Shape{n, m, k});
  NodeRef bt = make(Op::PERMUTE, b->dtype, {b}, Shape{1, 0});
  NodeRef y = make(Op::EXPAND, b->dtype, {make(Op::RESHAPE, b->dtype, {bt}, Shape{1, m, k})}, Shape{n, m, k});
  return make(Op::REDUCE_AXIS, a->dtype, {x * y}, ReduceArg{Op::ADD, {2}});
}

}  // namespace lg::testing_util
