#include "codegen/gpu_vector_access.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "base/error.h"
#include "codegen/index_divisor.h"

namespace lg {
namespace {

// Elements of t in 16 bytes when the renderers have a vector type for them, else 0.
int lanes_of(DType t) {
  if (t.count != 1) return 0;
  if (t.scalar == Scalar::Float32) return 4;
  if (t.scalar == Scalar::BFloat16 || t.scalar == Scalar::Float16) return 8;
  return 0;
}

// An access of the program, as grouping sees it.
struct Access {
  const Node* node;  // LOAD or STORE
  size_t position;   // in prog.ops
  int64_t offset;    // element index = x + offset
};

// Every access of one buffer, for conflicts: where, whether a store, and its index x + offset
// (x null for a gated access: it could be anywhere).
struct BufferAccess {
  size_t position;
  bool store;
  const Node* x;
  int64_t offset;
};

// The program's blocks: a new id at every loop head (GPU launch ranges are not loops), the
// enclosing block's again after its END.
std::vector<int> block_ids(const LinearProgram& prog) {
  std::vector<int> ids(prog.ops.size()), stack{0};
  std::vector<const Node*> loops;
  int next = 1;
  for (size_t i = 0; i < prog.ops.size(); i++) {
    const Node* n = prog.ops[i].get();
    if (n->op == Op::RANGE) {
      AxisType t = n->get_arg<RangeArg>().type;
      if (t != AxisType::GLOBAL && t != AxisType::LOCAL && t != AxisType::GROUP) {
        loops.push_back(n);
        stack.push_back(next++);
      }
    }
    if (n->op == Op::END && !loops.empty() && loops.back() == n->src[0].get()) {
      loops.pop_back();
      stack.pop_back();
    }
    ids[i] = stack.back();
  }
  return ids;
}

// index = x + offset, the constant split off (symbolic keeps it last).
std::pair<const Node*, int64_t> split_offset(const Node* e) {
  if (e->op == Op::ADD && e->src[1]->is_const()) return {e->src[0].get(), e->src[1]->const_as_int()};
  return {e, 0};
}

}  // namespace

bool is_aligned_word_pair(const Node* lo, const Node* hi) {
  if (lo->op != Op::LOAD || hi->op != Op::LOAD || lo->dtype != hi->dtype || lanes_of(lo->dtype) != 8) return false;
  const Node *a = lo->src[0].get(), *b = hi->src[0].get();
  if (a->src.size() != 2 || b->src.size() != 2 || a->src[0] != b->src[0] || a->src[0]->op != Op::DEFINE_GLOBAL) return false;
  auto [x, s] = split_offset(a->src[1].get());
  auto [y, t] = split_offset(b->src[1].get());
  std::unordered_map<const Node*, int64_t> divisors;
  return x == y && t == s + 1 && s % 2 == 0 && power_of_two_divisor(x, divisors) % 2 == 0;
}

namespace {

// Where each grouped access happens once the program is rendered: a load group's members at its
// first member's position, a store group's at its last's (program positions; absent: its own).
using Moves = std::unordered_map<size_t, size_t>;

// Whether two accesses of one buffer may touch the same element: not when both indices are the same
// x plus different constants (x null: a gated access, which may be anywhere).
bool may_alias(const BufferAccess& a, const BufferAccess& b) {
  return !(a.x != nullptr && a.x == b.x && a.offset != b.offset);
}

// Whether moving `members` (positions of accesses of the buffer) to position `to` keeps every pair
// of accesses that may touch one element, at least one a store, in the order the program has them,
// given the groups already placed (`moves`). Only pairs with a member change.
bool keeps_order(const std::vector<size_t>& members, size_t to,
                 const std::vector<BufferAccess>& buffer_accesses, const Moves& moves) {
  auto at = [&](size_t position) {
    auto it = moves.find(position);
    return it == moves.end() ? position : it->second;
  };
  for (size_t m : members) {
    // buffer_accesses is in program order
    auto mine =
        std::lower_bound(buffer_accesses.begin(), buffer_accesses.end(), m,
                         [](const BufferAccess& a, size_t position) { return a.position < position; });
    LG_CHECK(mine != buffer_accesses.end() && mine->position == m,
             "vector access planning: a member not among its buffer's accesses");
    for (const BufferAccess& o : buffer_accesses) {
      if (o.position == m || !(mine->store || o.store) || !may_alias(*mine, o)) continue;
      if (std::find(members.begin(), members.end(), o.position) != members.end())
        continue;  // another element
      const size_t other = at(o.position);
      if ((m < o.position) != (to < other)) return false;
    }
  }
  return true;
}

// Groups of `lanes` accesses among `accesses` (one candidate key, sorted by offset) into plan;
// returns the accesses left out. Every access of the buffer, and where the groups already planned
// move theirs: a group forms only where it reorders no two accesses of one element.
std::vector<Access> group_runs(const LinearProgram& prog, std::vector<Access> accesses, int64_t lanes,
                               bool store, const std::vector<BufferAccess>& buffer_accesses, Moves& moves,
                               VectorAccessPlan& plan) {
  std::vector<bool> grouped(accesses.size(), false);
  for (size_t i = 0; i + lanes <= accesses.size(); i++) {
    int64_t s = accesses[i].offset;
    if (((s % lanes) + lanes) % lanes != 0 || accesses[i + lanes - 1].offset != s + lanes - 1) continue;
    bool distinct = true;
    for (int64_t k = 1; k < lanes; k++) distinct = distinct && accesses[i + k].offset == s + k;
    if (!distinct) continue;
    size_t lo = accesses[i].position, hi = lo;
    for (int64_t k = 0; k < lanes; k++) {
      lo = std::min(lo, accesses[i + k].position);
      hi = std::max(hi, accesses[i + k].position);
    }
    // The moved loads (stores) pass no access of their own elements, or of one the index cannot
    // tell apart, that they must stay behind (ahead of): an in-place update's load and store of
    // each element keep their order, a lane's tensor-core outputs pass each other.
    std::vector<size_t> members;
    for (int64_t k = 0; k < lanes; k++) members.push_back(accesses[i + k].position);
    const size_t to = store ? hi : lo;
    if (!keeps_order(members, to, buffer_accesses, moves)) continue;
    for (size_t m : members) moves[m] = to;
    VectorAccess g;
    for (int64_t k = 0; k < lanes; k++) {
      g.members.push_back(accesses[i + k].node);
      grouped[i + k] = true;
    }
    g.first = prog.ops[lo].get();
    g.last = prog.ops[hi].get();
    g.first_position = lo;
    plan.groups.push_back(std::move(g));
    i += lanes - 1;
  }
  std::vector<Access> left;
  for (size_t i = 0; i < accesses.size(); i++)
    if (!grouped[i]) left.push_back(accesses[i]);
  return left;
}

}  // namespace

VectorAccessPlan plan_vector_accesses(const LinearProgram& prog) {
  std::vector<int> block = block_ids(prog);
  // Candidates keyed by (store?, buffer, x, block); every access of each buffer, for conflicts.
  std::map<std::tuple<bool, size_t, const Node*, int>, std::vector<Access>> candidates;
  std::unordered_map<const Node*, std::vector<BufferAccess>> by_buffer;
  for (size_t i = 0; i < prog.ops.size(); i++) {
    const Node* n = prog.ops[i].get();
    if (n->op != Op::LOAD && n->op != Op::STORE) continue;
    const Node* idx = n->src[0].get();
    const Node* buffer = idx->src[0].get();
    bool store = n->op == Op::STORE;
    auto [x, offset] = split_offset(idx->src[1].get());
    by_buffer[buffer].push_back({i, store, idx->src.size() == 2 ? x : nullptr, offset});
    if (idx->src.size() != 2 || buffer->op != Op::DEFINE_GLOBAL || lanes_of(buffer->dtype.base()) == 0) continue;
    if (is_atomic_add(*n)) continue;  // atomicAdd takes one element
    size_t slot = static_cast<size_t>(buffer->get_arg<int64_t>());
    candidates[{store, slot, x, block[i]}].push_back({n, i, offset});
  }
  std::unordered_map<const Node*, int64_t> divisors;
  VectorAccessPlan plan;
  Moves moves;
  // In program order of each key's first access (the map's order depends on node addresses, and a
  // group placed earlier constrains the later ones: the plan must not vary from run to run).
  std::vector<std::pair<const std::tuple<bool, size_t, const Node*, int>, std::vector<Access>>*> keys;
  for (auto& entry : candidates) keys.push_back(&entry);
  std::sort(keys.begin(), keys.end(),
            [](const auto* a, const auto* b) { return a->second[0].position < b->second[0].position; });
  for (auto* entry : keys) {
    const bool store = std::get<0>(entry->first);
    const Node* x = std::get<2>(entry->first);
    std::vector<Access>& accesses = entry->second;
    const Node* buffer = accesses[0].node->src[0]->src[0].get();
    std::stable_sort(accesses.begin(), accesses.end(),
                     [](const Access& a, const Access& b) { return a.offset < b.offset; });
    // 16-byte groups, then groups of half as many elements of what is left, down to pairs (8
    // bytes of float32, 4 of 16-bit elements: a matmul lane's neighbouring outputs)
    int64_t lanes = lanes_of(buffer->dtype.base());
    std::vector<Access> left = accesses;
    for (; lanes >= 2 && !left.empty(); lanes /= 2)
      if (power_of_two_divisor(x, divisors) % lanes == 0)
        left = group_runs(prog, left, lanes, store, by_buffer.at(buffer), moves, plan);
  }
  std::sort(plan.groups.begin(), plan.groups.end(),
            [](const VectorAccess& a, const VectorAccess& b) { return a.first_position < b.first_position; });
  for (size_t gi = 0; gi < plan.groups.size(); gi++)
    for (const Node* m : plan.groups[gi].members) plan.group_of[m] = static_cast<int>(gi);
  return plan;
}

}  // namespace lg
