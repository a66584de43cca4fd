#pragma once
// The one node type of lazygrad's IR.
//
// Invariants:
//  - A Node is immutable and is created only by make(), which interns it: two structurally equal
//    nodes (same op, dtype, arg and identical sources) are the same object, so pointer equality is
//    structural equality and a Node* is a cache key while a NodeRef keeps it alive.
//  - make() checks its inputs (arity, arg kind, dtypes, shapes) and aborts on a malformed node:
//    building a bad node is a compiler bug, not a user error.
//  - hash is structural (op, dtype, arg, sources' hashes); it never depends on addresses.
//  - Derived facts (shape, device, integer bounds) are computed once in make() from the sources.
//  - Nodes are reference counted; a node dies when its last NodeRef goes, and leaves the intern table.
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "ir/ops.h"

namespace lg {

using Shape = std::vector<int64_t>;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// What kind of loop a RANGE is. Codegen optimizations change axis types; the scheduler makes only
// LOOP (an output axis) and REDUCE (an axis folded by a REDUCE).
// SERIAL: a loop whose iterations must run in order (a scatter-add's read-modify-write of
// data-dependent addresses; KBLOCK's blocks of a reduction, each adding into the output); no Opt
// splits, upcasts or parallelizes it, except Opt ATOMIC, which makes a scatter's an output axis and
// its store an atomic add (codegen/atomic_scatter.h).
enum class AxisType : uint8_t { LOOP, REDUCE, GLOBAL, LOCAL, THREAD, GROUP, UPCAST, UNROLL, SERIAL, COOP };
const char* axis_type_name(AxisType t);

struct BufferArg {
  uint64_t uid;  // unique per buffer for the life of the process
  int64_t size;  // elements
  bool operator==(const BufferArg&) const = default;
};
struct VarArg {
  std::string name;
  int64_t min, max;  // inclusive
  bool operator==(const VarArg&) const = default;
};
struct ReduceArg {
  Op op;                      // ADD, MUL or MAX
  std::vector<int64_t> axes;  // sorted, unique
  bool operator==(const ReduceArg&) const = default;
};
struct RangeArg {
  int64_t id;  // unique within a kernel; orders loops
  AxisType type;
  bool operator==(const RangeArg&) const = default;
};

// A node's argument: a closed set of small hashable values. CONST holds int64_t (integers and bool)
// or double (floats); equality of doubles is bitwise so -0.0 and NaN constants intern correctly.
using Arg = std::variant<std::monostate, int64_t, double, std::string, Shape, Pairs, BufferArg, VarArg,
                         ReduceArg, RangeArg, Op>;
bool arg_equal(const Arg& a, const Arg& b);
uint64_t arg_hash(const Arg& a);
std::string arg_to_string(const Arg& a);

class Node;

// Owning reference to an interned node (intrusive, thread-safe reference count).
class NodeRef {
 public:
  NodeRef() = default;
  NodeRef(const NodeRef& o) : p_(o.p_) { inc(); }
  NodeRef(NodeRef&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  NodeRef& operator=(NodeRef o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~NodeRef() { dec(); }

  const Node* get() const { return p_; }
  const Node* operator->() const { return p_; }
  const Node& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const NodeRef& o) const { return p_ == o.p_; }
  bool operator==(const Node* o) const { return p_ == o; }

  // Adopts a node whose count was already incremented for this reference.
  static NodeRef adopt(const Node* n) {
    NodeRef r;
    r.p_ = n;
    return r;
  }
  // A new reference to a live node (its count is > 0 because someone holds it).
  static NodeRef share(const Node* n);

 private:
  void inc() const;
  void dec();
  const Node* p_ = nullptr;
};

class Node {
 public:
  const Op op;
  const DType dtype;
  const std::vector<NodeRef> src;
  const Arg arg;
  const uint64_t hash;

  // Derived at creation.
  const Shape shape;         // tensor stage: the value's shape; kernel stage: () (scalars)
  const Node* const device;  // the DEVICE node a tensor-stage value lives on, or nullptr
  const int64_t vmin, vmax;  // inclusive bounds of integer/bool values (the dtype's range if unknown)

  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  template <class T>
  const T& get_arg() const {
    return std::get<T>(arg);
  }
  int64_t numel() const;
  bool is_const() const { return op == Op::CONST; }
  // CONST value as a number (integers exactly, floats as double).
  double const_as_double() const;
  int64_t const_as_int() const;
  bool is_const_value(double v) const;  // CONST equal to v (compared in the node's own dtype)
  std::string device_name() const;      // "" when no device

 private:
  friend class NodeRef;
  friend NodeRef make(Op, DType, std::vector<NodeRef>, Arg);
  friend struct NodeTable;
  Node(Op op, DType dtype, std::vector<NodeRef> src, Arg arg, uint64_t hash, Shape shape, const Node* device,
       int64_t vmin, int64_t vmax);
  mutable std::atomic<int32_t> refs_{0};
};

// The only way to create a node: returns the interned node equal to (op, dtype, src, arg).
NodeRef make(Op op, DType dtype, std::vector<NodeRef> src = {}, Arg arg = {});

// A STORE that adds its value to the element atomically (arg Op::ADD; Opt ATOMIC, codegen/atomic_scatter.h).
inline bool is_atomic_add(const Node& n) { return n.op == Op::STORE && std::holds_alternative<Op>(n.arg); }

// Same node with new sources (or the node itself when the sources are identical).
NodeRef replace_src(const NodeRef& n, std::vector<NodeRef> src);

// Number of live interned nodes (tests check that graphs are freed).
size_t live_node_count();

// Called with a node of op `op` just before it is freed (the runtime releases a BUFFER's memory this
// way). At most one hook per op; the hook must not create or free nodes of that op.
using NodeFreeHook = void (*)(const Node&);
void set_node_free_hook(Op op, NodeFreeHook hook);

inline void NodeRef::inc() const {
  if (p_) p_->refs_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace lg

template <>
struct std::hash<lg::NodeRef> {
  size_t operator()(const lg::NodeRef& n) const noexcept { return std::hash<const lg::Node*>()(n.get()); }
};
