#pragma once
// Test helpers: tensor-stage graphs built from IR nodes on INTERP, for tests of the scheduler.
#include "ir/build.h"
#include "ir/graph.h"

namespace lg::testing_util {

inline NodeRef dev() { return device_node("INTERP"); }
// A new buffer, viewed with `shape` (a RESHAPE unless 1-D).
inline NodeRef buffer(Shape shape, DType t = dtypes::float32) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  NodeRef b = new_buffer(dev(), t, n);
  return shape.size() == 1 ? b : make(Op::RESHAPE, t, {b}, shape);
}
inline NodeRef scalar(double v, DType t = dtypes::float32) { return cnst(t, v, dev()); }
inline NodeRef broadcast(const NodeRef& x, const Shape& shape) {
  Shape ones(shape.size(), 1);
  return make(Op::EXPAND, x->dtype, {make(Op::RESHAPE, x->dtype, {x}, ones)}, shape);
}
inline NodeRef reduce(const NodeRef& x, Op op, std::vector<int64_t> axes) {
  return make(Op::REDUCE_AXIS, x->dtype, {x}, ReduceArg{op, std::move(axes)});
}
inline NodeRef sink(std::vector<NodeRef> roots) { return make(Op::SINK, dtypes::void_, std::move(roots)); }
// How many nodes of `op` the kernel AST holds.
inline int count(const NodeRef& ast, Op op) {
  int n = 0;
  for (const Node* x : toposort(ast)) n += x->op == op;
  return n;
}

}  // namespace lg::testing_util
