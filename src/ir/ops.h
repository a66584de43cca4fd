#pragma once
// The op enum and per-op metadata, generated from ops.def.
#include <bitset>
#include <cstdint>
#include <string_view>

namespace lg {

enum class Op : uint8_t {
#define LG_OP(name, group, nsrc, arg, meaning) name,
#include "ir/ops.def"
#undef LG_OP
};

inline constexpr int kNumOps = 0
#define LG_OP(name, group, nsrc, arg, meaning) +1
#include "ir/ops.def"
#undef LG_OP
    ;

enum class OpGroup : uint8_t {
  Meta,
  Buffer,
  Const,
  Unary,
  Binary,
  Ternary,
  Movement,
  Reduce,
  Kernel,
  Program
};
enum class ArgKind : uint8_t { None, String, Buffer, Const, Int, Var, Shape, Pairs, Reduce, Range, Op };

struct OpInfo {
  std::string_view name;
  OpGroup group;
  int nsrc;  // -1: variable
  ArgKind arg;
  std::string_view meaning;
};

const OpInfo& op_info(Op op);
inline std::string_view op_name(Op op) { return op_info(op).name; }

inline bool is_unary(Op op) { return op_info(op).group == OpGroup::Unary; }
inline bool is_binary(Op op) { return op_info(op).group == OpGroup::Binary; }
inline bool is_ternary(Op op) { return op_info(op).group == OpGroup::Ternary; }
// Elementwise arithmetic: unary, binary and ternary ops (CAST and BITCAST included).
inline bool is_alu(Op op) { return is_unary(op) || is_binary(op) || is_ternary(op); }
inline bool is_movement(Op op) { return op_info(op).group == OpGroup::Movement; }
bool is_commutative(Op op);
bool is_comparison(Op op);  // CMPLT, CMPNE, CMPEQ: result is bool

// A set of ops (pattern matching, specs).
using OpSet = std::bitset<kNumOps>;
inline OpSet op_set(std::initializer_list<Op> ops) {
  OpSet s;
  for (Op o : ops) s.set(static_cast<size_t>(o));
  return s;
}

}  // namespace lg
