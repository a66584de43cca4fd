#pragma once
// How a kernel touches memory: for every LOAD and STORE, the stride of its element index along each
// kernel axis (kernel_axes order). The heuristic reads these to pick register tiles and vector axes.
//
//   stride 0            the access does not depend on the axis: copies along it reuse one value
//                       (a broadcast), which is what makes an UPCAST of the axis a register tile
//   stride 1            consecutive iterations touch consecutive elements: vectorizable
//   kNonAffineStride    the index depends on the axis, but not as c * axis (a reshape's div/mod, a
//                       gather through loaded indices)
#include <cstdint>
#include <limits>
#include <vector>

#include "ir/node.h"

namespace lg {

inline constexpr int64_t kNonAffineStride = std::numeric_limits<int64_t>::min();

struct Access {
  bool is_store = false;
  int64_t slot = 0;            // the DEFINE_GLOBAL it reads or writes
  DType dtype;                 // element type in memory
  std::vector<int64_t> stride;  // per kernel axis, in elements
};

// d(index)/d(range) of an int64 index expression: 0 when it does not depend on the range,
// kNonAffineStride when it does but not as c * range.
int64_t index_stride(const NodeRef& index, const Node* range);

// Every LOAD and STORE of a kernel AST (kernel stage), in topological order.
std::vector<Access> kernel_accesses(const NodeRef& ast);

}  // namespace lg
