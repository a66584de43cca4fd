#include "ir/node.h"

#include <bit>
#include <cmath>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "base/error.h"
#include "base/hash.h"
#include "ir/infer.h"

namespace lg {

const char* axis_type_name(AxisType t) {
  switch (t) {
    case AxisType::LOOP: return "LOOP";
    case AxisType::REDUCE: return "REDUCE";
    case AxisType::GLOBAL: return "GLOBAL";
    case AxisType::LOCAL: return "LOCAL";
    case AxisType::THREAD: return "THREAD";
    case AxisType::GROUP: return "GROUP";
    case AxisType::UPCAST: return "UPCAST";
    case AxisType::UNROLL: return "UNROLL";
    case AxisType::SERIAL: return "SERIAL";
    case AxisType::COOP: return "COOP";
  }
  return "?";
}

bool arg_equal(const Arg& a, const Arg& b) {
  if (a.index() != b.index()) return false;
  if (auto* x = std::get_if<double>(&a))
    return std::bit_cast<uint64_t>(*x) == std::bit_cast<uint64_t>(std::get<double>(b));
  return a == b;
}

uint64_t arg_hash(const Arg& a) {
  uint64_t h = a.index();
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
        } else if constexpr (std::is_same_v<T, int64_t>) {
          h = hash_mix(h, static_cast<uint64_t>(v));
        } else if constexpr (std::is_same_v<T, double>) {
          h = hash_mix(h, hash_double(v));
        } else if constexpr (std::is_same_v<T, std::string>) {
          h = hash_mix(h, hash_bytes(v));
        } else if constexpr (std::is_same_v<T, Shape>) {
          for (int64_t x : v) h = hash_mix(h, static_cast<uint64_t>(x));
        } else if constexpr (std::is_same_v<T, Pairs>) {
          for (auto [x, y] : v) h = hash_mix(hash_mix(h, static_cast<uint64_t>(x)), static_cast<uint64_t>(y));
        } else if constexpr (std::is_same_v<T, BufferArg>) {
          h = hash_mix(hash_mix(h, v.uid), static_cast<uint64_t>(v.size));
        } else if constexpr (std::is_same_v<T, VarArg>) {
          h = hash_mix(hash_mix(hash_mix(h, hash_bytes(v.name)), static_cast<uint64_t>(v.min)),
                       static_cast<uint64_t>(v.max));
        } else if constexpr (std::is_same_v<T, ReduceArg>) {
          h = hash_mix(h, static_cast<uint64_t>(v.op));
          for (int64_t x : v.axes) h = hash_mix(h, static_cast<uint64_t>(x));
        } else if constexpr (std::is_same_v<T, RangeArg>) {
          h = hash_mix(hash_mix(h, static_cast<uint64_t>(v.id)), static_cast<uint64_t>(v.type));
        } else if constexpr (std::is_same_v<T, Op>) {
          h = hash_mix(h, static_cast<uint64_t>(v));
        }
      },
      a);
  return h;
}

static std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); i++) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

std::string arg_to_string(const Arg& a) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return "";
        else if constexpr (std::is_same_v<T, int64_t>)
          return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>) {
          std::ostringstream os;
          os.precision(17);
          os << v;
          return os.str();
        } else if constexpr (std::is_same_v<T, std::string>)
          return "\"" + v + "\"";
        else if constexpr (std::is_same_v<T, Shape>)
          return "(" + join(v) + ")";
        else if constexpr (std::is_same_v<T, Pairs>) {
          std::string s = "(";
          for (size_t i = 0; i < v.size(); i++)
            s += (i ? "," : "") + std::string("(") + std::to_string(v[i].first) + "," +
                 std::to_string(v[i].second) + ")";
          return s + ")";
        } else if constexpr (std::is_same_v<T, BufferArg>)
          return str("{uid=", v.uid, ",size=", v.size, "}");
        else if constexpr (std::is_same_v<T, VarArg>)
          return str("{", v.name, ",", v.min, "..", v.max, "}");
        else if constexpr (std::is_same_v<T, ReduceArg>)
          return str("{", op_name(v.op), ",axes=(", join(v.axes), ")}");
        else if constexpr (std::is_same_v<T, RangeArg>)
          return str("{", v.id, ",", axis_type_name(v.type), "}");
        else if constexpr (std::is_same_v<T, Op>)
          return std::string(op_name(v));
      },
      a);
}

Node::Node(Op op, DType dtype, std::vector<NodeRef> src, Arg arg, uint64_t hash, Shape shape,
           const Node* device, int64_t vmin, int64_t vmax)
    : op(op),
      dtype(dtype),
      src(std::move(src)),
      arg(std::move(arg)),
      hash(hash),
      shape(std::move(shape)),
      device(device),
      vmin(vmin),
      vmax(vmax) {}

int64_t Node::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

double Node::const_as_double() const {
  LG_CHECK(op == Op::CONST);
  if (auto* d = std::get_if<double>(&arg)) return *d;
  if (is_unsigned(dtype)) return static_cast<double>(static_cast<uint64_t>(std::get<int64_t>(arg)));
  return static_cast<double>(std::get<int64_t>(arg));
}

int64_t Node::const_as_int() const {
  LG_CHECK(op == Op::CONST);
  if (auto* d = std::get_if<double>(&arg)) return static_cast<int64_t>(*d);
  return std::get<int64_t>(arg);
}

bool Node::is_const_value(double v) const {
  if (op != Op::CONST) return false;
  if (auto* d = std::get_if<double>(&arg)) return *d == v;
  return static_cast<double>(std::get<int64_t>(arg)) == v;
}

std::string Node::device_name() const { return device ? std::get<std::string>(device->arg) : ""; }

// ---- the intern table ----

struct NodeTable {
  std::mutex mu;
  std::unordered_multimap<uint64_t, Node*> nodes;

  static NodeTable& get() {
    static NodeTable* t = new NodeTable();  // never destroyed: nodes may die during static teardown
    return *t;
  }
};

static uint64_t structural_hash(Op op, DType dtype, const std::vector<NodeRef>& src, const Arg& arg) {
  uint64_t h =
      hash_mix(static_cast<uint64_t>(op), static_cast<uint64_t>(dtype.scalar) | (uint64_t{dtype.count} << 8) |
                                              (uint64_t{dtype.ptr} << 16));
  h = hash_mix(h, arg_hash(arg));
  for (const NodeRef& s : src) h = hash_mix(h, s->hash);
  return h;
}

static bool same_node(const Node* n, Op op, DType dtype, const std::vector<NodeRef>& src, const Arg& arg) {
  if (n->op != op || !(n->dtype == dtype) || n->src.size() != src.size()) return false;
  for (size_t i = 0; i < src.size(); i++)
    if (n->src[i].get() != src[i].get()) return false;
  return arg_equal(n->arg, arg);
}

NodeRef make(Op op, DType dtype, std::vector<NodeRef> src, Arg arg) {
  for (const NodeRef& s : src) LG_CHECK(s, "null source of ", op_name(op));
  uint64_t h = structural_hash(op, dtype, src, arg);
  NodeTable& t = NodeTable::get();
  {
    std::lock_guard lock(t.mu);
    auto [lo, hi] = t.nodes.equal_range(h);
    for (auto it = lo; it != hi; ++it) {
      Node* n = it->second;
      if (!same_node(n, op, dtype, src, arg)) continue;
      // Revive only a live node: a count of 0 means it is being destroyed right now.
      int32_t r = n->refs_.load(std::memory_order_relaxed);
      while (r > 0 && !n->refs_.compare_exchange_weak(r, r + 1, std::memory_order_relaxed)) {
      }
      if (r > 0) return NodeRef::adopt(n);
    }
  }
  check_node(op, dtype, src, arg);
  Shape shape = infer_shape(op, src, arg);
  const Node* device = infer_device(op, src);
  auto [lo, hi] = infer_bounds(op, dtype, src, arg);
  Node* n = new Node(op, dtype, std::move(src), std::move(arg), h, std::move(shape), device, lo, hi);
  n->refs_.store(1, std::memory_order_relaxed);
  std::lock_guard lock(t.mu);
  // Another thread may have interned an equal node meanwhile; prefer the one already there.
  auto [lo2, hi2] = t.nodes.equal_range(h);
  for (auto it = lo2; it != hi2; ++it) {
    Node* m = it->second;
    if (!same_node(m, n->op, n->dtype, n->src, n->arg)) continue;
    int32_t r = m->refs_.load(std::memory_order_relaxed);
    while (r > 0 && !m->refs_.compare_exchange_weak(r, r + 1, std::memory_order_relaxed)) {
    }
    if (r > 0) {
      n->refs_.store(0);
      delete n;  // never in the table; its sources are released through their NodeRefs
      return NodeRef::adopt(m);
    }
  }
  t.nodes.emplace(h, n);
  return NodeRef::adopt(n);
}

NodeRef replace_src(const NodeRef& n, std::vector<NodeRef> src) {
  bool same = src.size() == n->src.size();
  for (size_t i = 0; same && i < src.size(); i++) same = src[i] == n->src[i];
  if (same) return n;
  return make(n->op, n->dtype, std::move(src), n->arg);
}

NodeRef NodeRef::share(const Node* n) {
  if (n) n->refs_.fetch_add(1, std::memory_order_relaxed);
  return adopt(n);
}

static std::atomic<NodeFreeHook> free_hooks[kNumOps];

void set_node_free_hook(Op op, NodeFreeHook hook) { free_hooks[static_cast<size_t>(op)].store(hook); }

// Dropping the last reference removes the node from the table and frees it. Freeing a node drops
// its sources' references; that cascade runs on an explicit worklist so long chains do not recurse.
void NodeRef::dec() {
  if (!p_) return;
  const Node* n = p_;
  p_ = nullptr;
  if (n->refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  NodeTable& t = NodeTable::get();
  std::vector<const Node*> dying{n};
  while (!dying.empty()) {
    const Node* d = dying.back();
    dying.pop_back();
    {
      std::lock_guard lock(t.mu);
      auto [lo, hi] = t.nodes.equal_range(d->hash);
      for (auto it = lo; it != hi; ++it)
        if (it->second == d) {
          t.nodes.erase(it);
          break;
        }
    }
    if (NodeFreeHook hook = free_hooks[static_cast<size_t>(d->op)].load()) hook(*d);
    // Take the sources out without recursion: release each, queueing those that reach zero.
    auto& srcs = const_cast<std::vector<NodeRef>&>(d->src);
    for (NodeRef& s : srcs) {
      const Node* c = s.p_;
      s.p_ = nullptr;
      if (c && c->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) dying.push_back(c);
    }
    delete d;
  }
}

size_t live_node_count() {
  NodeTable& t = NodeTable::get();
  std::lock_guard lock(t.mu);
  return t.nodes.size();
}

}  // namespace lg
