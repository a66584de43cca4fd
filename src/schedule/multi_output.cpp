#include "schedule/multi_output.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "base/config.h"
#include "ir/graph.h"
#include "schedule/fusion.h"

namespace lg {
namespace {

// The entries a group may hold: elementwise ASSIGN kernels, and row reduction kernels (a group
// holds one kind).
enum class Kind { kNone, kAssign, kRowReduce };

Kind kind_of(const Planned& p) {
  if (p.item.kind != ScheduleItem::Kind::Kernel || p.points.size() != 1) return Kind::kNone;
  Kind k = p.points[0]->op == Op::ASSIGN ? Kind::kAssign
           : is_row_reduce(p.points[0])  ? Kind::kRowReduce
                                         : Kind::kNone;
  if (k == Kind::kNone) return k;
  for (const NodeRef& s : p.item.ast->src)
    if (s->op != Op::STORE) return Kind::kNone;  // an ATTENTION kernel
  for (const Node* n : toposort(p.item.ast)) {
    if (n->op != Op::RANGE) continue;
    AxisType t = n->get_arg<RangeArg>().type;
    if (t != AxisType::LOOP && !(k == Kind::kRowReduce && t == AxisType::REDUCE)) return Kind::kNone;
  }
  return k;
}

const Node* target_of(const Planned& p) { return p.item.buffers[0].get(); }

// An elementwise kernel of one output that is not an ASSIGN (a row consumer's candidate).
bool is_elementwise(const Planned& p) {
  if (p.item.kind != ScheduleItem::Kind::Kernel || p.points.size() != 1 || p.points[0]->op == Op::ASSIGN)
    return false;
  for (const NodeRef& s : p.item.ast->src)
    if (s->op != Op::STORE) return false;
  for (const Node* n : toposort(p.item.ast))
    if (n->op == Op::RANGE && n->get_arg<RangeArg>().type != AxisType::LOOP) return false;
  return true;
}

// A shape without its trailing axes of size 1: the rows of a row reduction's (1024, 1).
Shape rows_of(const Shape& s) {
  size_t n = s.size();
  while (n > 0 && s[n - 1] == 1) n--;
  return Shape(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n));
}

bool starts_with(const Shape& s, const Shape& prefix) {
  return prefix.size() <= s.size() && std::equal(prefix.begin(), prefix.end(), s.begin());
}

// Devices whose kernels place a store of fewer loops than the nest in its own loops
// (codegen/linearize.h): the CPU's and the interpreter's. A GPU row kernel's launch and thread
// groups (codegen/gpu_launch.h) have no such place, so there row consumers stay apart.
bool places_row_stores(const std::string& device) {
  return device.rfind("CPU", 0) == 0 || device == "INTERP";
}

bool shares_a_read(const Planned& a, const Planned& b) {
  for (const Node* r : a.reads)
    if (std::find(b.reads.begin(), b.reads.end(), r) != b.reads.end()) return true;
  return false;
}

bool reads_point_of(const Planned& reader, const Planned& p) {
  return std::find(reader.reads.begin(), reader.reads.end(), p.points[0]) != reader.reads.end();
}

// Entries i and a may be one kernel, as far as the buffers they write and read go (the header's
// first rule).
bool may_join(const Planned& i, const Planned& a) {
  if (target_of(i) == target_of(a)) return false;
  int64_t ilo = i.offsets[0], ihi = ilo + i.points[0]->numel() - 1;
  int64_t alo = a.offsets[0], ahi = alo + a.points[0]->numel() - 1;
  return !reads_span(i, target_of(a), alo, ahi) && !reads_span(a, target_of(i), ilo, ihi);
}

struct Groups {
  const std::vector<std::vector<size_t>>& next;  // dependency edges between entries
  std::vector<size_t> group_of;                  // entry -> group
  std::vector<std::vector<size_t>> members;      // group -> entries, in plan order

  // Whether a dependency path leads from group `from` to group `to` through other groups (entering
  // a group, a path may leave it from any member: the group runs as one kernel).
  bool path_through_others(size_t from, size_t to) const {
    std::vector<bool> seen(members.size(), false);
    std::vector<size_t> stack;
    auto step_from = [&](size_t g) {
      for (size_t e : members[g])
        for (size_t s : next[e]) {
          size_t h = group_of[s];
          if (h == from || h == to || seen[h]) continue;
          seen[h] = true;
          stack.push_back(h);
        }
    };
    step_from(from);
    while (!stack.empty()) {
      size_t g = stack.back();
      stack.pop_back();
      for (size_t e : members[g])
        for (size_t s : next[e])
          if (group_of[s] == to) return true;
      step_from(g);
    }
    return false;
  }

  void join(size_t entry, size_t g) {  // entry is alone in its group
    size_t old = group_of[entry];
    members[old].clear();
    members[g].push_back(entry);
    group_of[entry] = g;
  }

  void leave(size_t entry) {  // back to a group of its own (entry founded no group of others)
    std::vector<size_t>& m = members[group_of[entry]];
    m.erase(std::find(m.begin(), m.end(), entry));
    members[entry] = {entry};
    group_of[entry] = entry;
  }
};

}  // namespace

void merge_outputs(std::vector<Planned>& plan, const std::unordered_map<const Node*, NodeRef>& realized) {
  if (!config().multi_output) return;
  std::vector<size_t> cands;
  for (size_t i = 0; i < plan.size(); i++)
    if (kind_of(plan[i]) != Kind::kNone) cands.push_back(i);
  if (cands.empty()) return;  // one row reduction may still take its row consumers (below)
  std::vector<std::vector<size_t>> next = dependency_edges(plan);
  Groups gs{next, {}, {}};
  for (size_t i = 0; i < plan.size(); i++) {
    gs.group_of.push_back(i);
    gs.members.push_back({i});
  }
  // Greedy, in graph order: an entry joins the first open group it is related to (reads a
  // member, is read by one, or, for ASSIGNs, shares an input with one) where every rule holds.
  std::map<std::tuple<Kind, Shape, std::string>, std::vector<size_t>>
      open;  // (kind, shape, device) -> groups
  for (size_t i : cands) {
    const Planned& e = plan[i];
    Kind kind = kind_of(e);
    std::vector<size_t>& list = open[{kind, e.points[0]->shape, target_of(e)->device_name()}];
    bool joined = false;
    for (size_t g : list) {
      bool related = false, allowed = true;
      for (size_t a : gs.members[g]) {
        related |= reads_point_of(e, plan[a]) || reads_point_of(plan[a], e) ||
                   (kind == Kind::kAssign && shares_a_read(e, plan[a]));
        allowed &= may_join(e, plan[a]);
      }
      if (!related || !allowed || gs.path_through_others(g, i) || gs.path_through_others(i, g)) continue;
      gs.join(i, g);
      joined = true;
      break;
    }
    if (!joined) list.push_back(i);
  }

  // Row consumers, in graph order: an elementwise kernel over a row group's rows (its shape starts
  // with them) that reads a member joins it, so the rows it reads are in cache when the group's
  // reductions end; a row's values (the loss gradient's factor per row) join as members of the
  // group's shape. One wider shape per group: kernelize_outputs loops over it.
  std::vector<int8_t> elementwise(plan.size(), -1);  // is_elementwise, computed when first asked
  for (size_t g = 0; g < plan.size(); g++) {
    std::vector<size_t>& members = gs.members[g];
    if (members.empty() || kind_of(plan[members[0]]) != Kind::kRowReduce ||
        !places_row_stores(target_of(plan[members[0]])->device_name()))
      continue;
    Shape rows = rows_of(plan[members[0]].points[0]->shape), wide;
    for (size_t i = members[0] + 1; i < plan.size(); i++) {
      const Planned& e = plan[i];
      if (gs.members[gs.group_of[i]].size() != 1 || e.item.kind != ScheduleItem::Kind::Kernel ||
          e.points.size() != 1 || !starts_with(e.points[0]->shape, rows) ||
          target_of(e)->device_name() != target_of(plan[members[0]])->device_name())
        continue;
      if (elementwise[i] < 0) elementwise[i] = is_elementwise(e);
      if (!elementwise[i]) continue;
      bool is_row = rows_of(e.points[0]->shape) == rows;
      if (!is_row && !wide.empty() && e.points[0]->shape != wide) continue;
      bool related = false, allowed = true;
      for (size_t a : members) {
        related |= reads_point_of(e, plan[a]);
        allowed &= may_join(e, plan[a]);
      }
      if (!related || !allowed || gs.path_through_others(g, i) || gs.path_through_others(i, g)) continue;
      if (!is_row) wide = e.points[0]->shape;
      gs.join(i, g);
    }
  }

  // Each group of two or more as one kernel; a group kernelize_outputs refuses stays apart, but a
  // row group whose consumers it refuses (one reads a member at another row) first tries again
  // without them (splitting a group never closes a dependency cycle).
  std::map<size_t, Planned> merged;  // by the group's first entry
  for (size_t g = 0; g < gs.members.size(); g++) {
    std::vector<size_t>& group = gs.members[g];
    if (group.size() < 2) continue;
    std::vector<NodeRef> points, outs;
    std::vector<int64_t> offsets;
    auto kernelize_group = [&]() {
      points.clear(), outs.clear(), offsets.clear();
      for (size_t a : group) {
        points.push_back(NodeRef::share(plan[a].points[0]));
        outs.push_back(plan[a].item.buffers[0]);
        offsets.push_back(plan[a].offsets[0]);
      }
      return kernelize_outputs(points, outs, realized, offsets);
    };
    std::optional<KernelizeResult> k = kernelize_group();
    if (!k && kind_of(plan[group[0]]) == Kind::kRowReduce) {
      std::vector<size_t> consumers;
      for (size_t a : group)
        if (kind_of(plan[a]) != Kind::kRowReduce) consumers.push_back(a);
      for (size_t c : consumers) gs.leave(c);
      if (!consumers.empty() && group.size() >= 2) k = kernelize_group();
    }
    if (!k) continue;
    Planned& m = merged[group[0]];
    m.item = {ScheduleItem::Kind::Kernel, k->ast, k->buffers, k->name, 0, k->offsets};
    m.item.outputs = k->outputs;
    for (const NodeRef& p : points) m.points.push_back(p.get());
    m.reads = k->reads;
    m.spans = k->spans;
    m.offsets = offsets;
  }
  std::vector<Planned> merged_plan;
  for (size_t i = 0; i < plan.size(); i++) {
    const std::vector<size_t>& group = gs.members[gs.group_of[i]];
    if (auto it = merged.find(group[0]); it != merged.end()) {
      if (group[0] == i) merged_plan.push_back(std::move(it->second));
    } else {
      merged_plan.push_back(std::move(plan[i]));
    }
  }
  plan = std::move(merged_plan);
}

}  // namespace lg
