#pragma once
// Test helper: realizes a float32 graph node and reads its elements back to the host.
#include <vector>

#include "ir/build.h"
#include "runtime/buffer.h"
#include "runtime/realize.h"

namespace lg::testing_util {

inline std::vector<float> realized_float32(const NodeRef& x) {
  NodeRef out = realize(make(Op::SINK, dtypes::void_, {x}))[0];
  std::vector<float> host(out->numel());
  const Node* b = out->op == Op::BUFFER ? out.get() : out->src[0].get();  // a buffer or a view of one
  buffer_copy_out(*b, host.data(), host.size() * 4);
  return host;
}

}  // namespace lg::testing_util
