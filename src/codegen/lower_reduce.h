#pragma once
// "lower reduce": REDUCE(v, r...) with op OP becomes
//   acc = DEFINE_ACC(identity(OP), r...)      -- set before the loops of r... open
//   ACCUMULATE(acc, OP(acc, v))               -- inside them; its value after they close is the result
#include "ir/node.h"

namespace lg {

NodeRef lower_reduce(const NodeRef& kernel);

}  // namespace lg
