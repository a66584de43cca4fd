#include "ir/ops.h"

#include <array>

namespace lg {

static constexpr std::array<OpInfo, kNumOps> kOpInfo = {{
#define LG_OP(name, group, nsrc, arg, meaning) {#name, OpGroup::group, nsrc, ArgKind::arg, meaning},
#include "ir/ops.def"
#undef LG_OP
}};
static_assert(kOpInfo.size() == kNumOps);

const OpInfo& op_info(Op op) { return kOpInfo[static_cast<size_t>(op)]; }

bool is_commutative(Op op) {
  switch (op) {
    case Op::ADD:
    case Op::MUL:
    case Op::MAX:
    case Op::CMPNE:
    case Op::CMPEQ:
    case Op::AND:
    case Op::OR:
    case Op::XOR: return true;
    default: return false;
  }
}

bool is_comparison(Op op) { return op == Op::CMPLT || op == Op::CMPNE || op == Op::CMPEQ; }

}  // namespace lg
