#include "codegen/index_divisor.h"

#include <algorithm>

namespace lg {

int64_t power_of_two_divisor(const Node* n, std::unordered_map<const Node*, int64_t>& memo) {
  if (auto it = memo.find(n); it != memo.end()) return it->second;
  int64_t d = 1;
  switch (n->op) {
    case Op::CONST: {
      int64_t v = n->const_as_int();
      d = v == 0 ? kAnyPowerOfTwo : std::min<int64_t>(v & -v, kAnyPowerOfTwo);
      if (d < 0) d = kAnyPowerOfTwo;  // INT64_MIN
      break;
    }
    case Op::ADD:
      d = std::min(power_of_two_divisor(n->src[0].get(), memo), power_of_two_divisor(n->src[1].get(), memo));
      break;
    case Op::MUL:
      d = std::min(power_of_two_divisor(n->src[0].get(), memo) * power_of_two_divisor(n->src[1].get(), memo),
                   kAnyPowerOfTwo);
      break;
    case Op::SHL:
      if (n->src[1]->is_const() && n->src[1]->const_as_int() >= 0 && n->src[1]->const_as_int() < 20)
        d = std::min(power_of_two_divisor(n->src[0].get(), memo) << n->src[1]->const_as_int(),
                     kAnyPowerOfTwo);
      break;
    default: break;
  }
  return memo[n] = d;
}

}  // namespace lg
