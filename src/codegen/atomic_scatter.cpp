#include "codegen/atomic_scatter.h"

#include <algorithm>

#include "base/error.h"
#include "codegen/opt.h"
#include "ir/build.h"
#include "ir/graph.h"
#include "rewrite/rewrite.h"

namespace lg {

bool atomic_add_dtype(DType t) {
  return t.count == 1 && (t == dtypes::float32 || t == dtypes::float64 || t == dtypes::int32);
}

namespace {

struct Scatter {
  const Node* store = nullptr;
  NodeRef value;                 // what the store adds to the element
  const Node* serial = nullptr;  // the scattered axis
};

// The kernel's read-modify-write, or why ATOMIC does not apply.
Scatter match(const NodeRef& ast) {
  if (ast->op != Op::SINK || ast->src.size() != 1 || ast->src[0]->op != Op::STORE ||
      is_atomic_add(*ast->src[0]))
    throw OptError("ATOMIC needs a kernel of one plain store");
  Scatter s;
  s.store = ast->src[0].get();
  const NodeRef& idx = s.store->src[0];
  if (!atomic_add_dtype(s.store->src[1]->dtype))
    throw OptError(str("ATOMIC cannot add ", name(s.store->src[1]->dtype), " atomically"));
  const NodeRef& sum = s.store->src[1];
  for (int i = 0; i < 2 && sum->op == Op::ADD && !s.value; i++)
    if (sum->src[i]->op == Op::LOAD && sum->src[i]->src[0] == idx) s.value = sum->src[1 - i];
  if (!s.value) throw OptError("ATOMIC needs a store of the element's own value plus another");
  for (const Node* n : toposort(ast)) {
    if (n->op != Op::RANGE) continue;
    AxisType t = n->get_arg<RangeArg>().type;
    if (t == AxisType::SERIAL) {
      if (s.serial) throw OptError("ATOMIC needs a kernel of one SERIAL range");
      s.serial = n;
    } else if (t != AxisType::LOOP && t != AxisType::REDUCE) {
      throw OptError(str("ATOMIC must come before other Opts (found a ", axis_type_name(t), " range)"));
    }
  }
  if (!s.serial) throw OptError("ATOMIC needs the scattered axis (a SERIAL range)");
  // The element's old value must be read only by the add: anywhere else it would see other
  // positions' adds half done.
  const Node* old =
      sum->src[0]->op == Op::LOAD && sum->src[0]->src[0] == idx ? sum->src[0].get() : sum->src[1].get();
  for (const Node* n : toposort(s.value))
    if (n == old) throw OptError("ATOMIC: the added value reads the element it adds to");
  return s;
}

}  // namespace

bool is_serial_scatter(const NodeRef& ast) {
  try {
    match(ast);
    return true;
  } catch (const OptError&) {
    return false;
  }
}

NodeRef apply_atomic_scatter(const NodeRef& ast) {
  Scatter s = match(ast);
  int64_t first = 0;
  for (const Node* n : toposort(ast))
    if (n->op == Op::RANGE) first = std::min(first, n->get_arg<RangeArg>().id);
  NodeRef store = make(Op::STORE, dtypes::void_, {s.store->src[0], s.value}, Op::ADD);
  NodeRef k = make(Op::SINK, ast->dtype, {store});
  // The scattered axis: the outermost output loop (ids order loops), parallel like any other.
  NodeRef serial = NodeRef::share(s.serial);
  return substitute(k, {{serial, range(serial->src[0]->const_as_int(), first - 1, AxisType::LOOP)}});
}

}  // namespace lg
