#pragma once
// What make() derives from a node's inputs: validity, shape, device and integer bounds.
// Each function reads only the op, dtype, arg and the (already built) sources.
#include <utility>

#include "ir/node.h"

namespace lg {

// Aborts (internal error) unless the node is well formed: arity, arg kind, source dtypes.
void check_node(Op op, DType dtype, const std::vector<NodeRef>& src, const Arg& arg);
Shape infer_shape(Op op, const std::vector<NodeRef>& src, const Arg& arg);
const Node* infer_device(Op op, const std::vector<NodeRef>& src);
// Inclusive bounds of an integer or bool value; the dtype's full range when nothing better is known.
std::pair<int64_t, int64_t> infer_bounds(Op op, DType dtype, const std::vector<NodeRef>& src, const Arg& arg);

}  // namespace lg
