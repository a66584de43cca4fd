#pragma once
// The pattern DSL: patterns over nodes, spelled with the IR's own operators where it reads well.
//
//   Pat x = Pat::any("x"), c = Pat::cvar("c");
//   x + c                        ADD with sources {x, c} in either order (ADD is commutative)
//   Pat::op(Op::IDIV, {x, c})    ordered sources
//   Pat::op(Op::REDUCE, {x}).prefix()   x matches src[0]; any further sources
//   Pat::any("x").dtype_if(is_int)      constrain the dtype
//
// A name captures the node it matches; a name used twice must match the same node both times
// (structural equality, since nodes are interned).
//
// Limits: matching is greedy per source. A commutative pattern tries both orders of its own two
// sources, but a choice made inside a nested commutative pattern is not revisited when a later
// sibling fails: x*y + x*z matches b*a + b*c but not a*b + c*b. Write the rule's other orders as
// their own patterns when they matter. Captures hold views of the pattern's names, so read them only
// while the pattern is alive (matchers keep their patterns for their whole life).
#include <any>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/node.h"

namespace lg {

// What a successful match bound: capture name -> node.
struct Captures {
  std::vector<std::pair<std::string_view, const Node*>> items;
  const Node* find(std::string_view name) const {
    for (auto& [k, v] : items)
      if (k == name) return v;
    return nullptr;
  }
};

class Pat {
 public:
  enum class SrcMode : uint8_t { Any, Ordered, Commutative, Prefix };

  // Matches any node.
  static Pat any(std::string_view name = {});
  // Matches op with these sources in order (commutative ops try both orders of two sources).
  static Pat op(Op op, std::vector<Pat> src);
  // Matches op with any sources.
  static Pat op(Op op);
  static Pat ops(OpSet ops, std::vector<Pat> src);
  static Pat ops(OpSet ops);
  // Any CONST; a CONST with exactly this value (in the node's dtype).
  static Pat cvar(std::string_view name = {});
  static Pat cnst(double value);

  Pat named(std::string_view name) const;
  Pat dtype(DType t) const;
  Pat dtype_if(bool (*pred)(DType)) const;
  Pat ordered() const;  // even for a commutative op, match the sources in order only
  Pat prefix() const;   // the given sources match the first ones; further sources are free
  Pat arg(Arg a) const;
  Pat where(std::function<bool(const Node&)> pred) const;

  // Matches n; on success appends captures (on failure leaves them as they were).
  bool match(const Node* n, Captures& caps) const;
  // The ops this pattern's root can match (all ops when unconstrained).
  OpSet root_ops() const;

 private:
  struct Data {
    OpSet ops;
    bool any_op = true;
    std::string name;
    std::vector<Pat> src;
    SrcMode mode = SrcMode::Any;
    bool has_dtype = false;
    DType dtype;
    bool (*dtype_pred)(DType) = nullptr;
    bool has_arg = false;
    Arg arg;
    bool has_value = false;
    double value = 0;
    std::function<bool(const Node&)> pred;
  };
  explicit Pat(std::shared_ptr<Data> d) : d_(std::move(d)) {}
  Pat with(const std::function<void(Data&)>& f) const;
  bool match_src(const Node* n, Captures& caps) const;
  std::shared_ptr<const Data> d_;
};

Pat operator+(const Pat& a, const Pat& b);
Pat operator*(const Pat& a, const Pat& b);
Pat operator/(const Pat& a, const Pat& b);  // IDIV
Pat operator%(const Pat& a, const Pat& b);  // MOD
Pat operator+(const Pat& a, double c);
Pat operator*(const Pat& a, double c);
Pat operator/(const Pat& a, double c);
Pat operator%(const Pat& a, double c);

}  // namespace lg
