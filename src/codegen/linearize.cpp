#include "codegen/linearize.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "base/error.h"
#include "ir/graph.h"

namespace lg {
namespace {

using RangeSet = std::vector<const Node*>;  // sorted by range id

int64_t range_id(const Node* r) { return r->get_arg<RangeArg>().id; }

RangeSet merge(const RangeSet& a, const RangeSet& b) {
  RangeSet out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out),
                 [](const Node* x, const Node* y) { return range_id(x) < range_id(y); });
  return out;
}

RangeSet minus(const RangeSet& a, const RangeSet& b) {
  RangeSet out;
  for (const Node* r : a)
    if (std::find(b.begin(), b.end(), r) == b.end()) out.push_back(r);
  return out;
}

RangeSet acc_ranges(const Node* acc) {
  RangeSet r;
  for (size_t i = 1; i < acc->src.size(); i++) r.push_back(acc->src[i].get());
  std::sort(r.begin(), r.end(), [](const Node* x, const Node* y) { return range_id(x) < range_id(y); });
  return r;
}

class Linearizer {
 public:
  explicit Linearizer(const NodeRef& kernel) : kernel_(kernel) {
    for (const Node* n : toposort(kernel)) {
      live_[n] = live_ranges(n);
      if (n->op == Op::ACCUMULATE) accumulates_.push_back(n);
      if (n->op == Op::BARRIER) barriers_.push_back(n);
      if (n->op == Op::DEFINE_LOCAL) locals_.push_back(n);
    }
    for (const Node* b : barriers_)
      if (!b->src.empty())
        locals_.erase(std::remove(locals_.begin(), locals_.end(), b->src[0].get()), locals_.end());
  }

  LinearProgram run(const std::string& name) {
    LinearProgram p;
    p.name = name;
    std::vector<const Node*> globals;
    for (auto& [n, _] : live_)
      if (n->op == Op::DEFINE_GLOBAL) globals.push_back(n);
    std::sort(globals.begin(), globals.end(),
              [](const Node* a, const Node* b) { return a->get_arg<int64_t>() < b->get_arg<int64_t>(); });
    for (const Node* g : globals) {
      size_t slot = static_cast<size_t>(g->get_arg<int64_t>());
      if (p.globals.size() <= slot) p.globals.resize(slot + 1, dtypes::void_);
      p.globals[slot] = g->dtype.base();
      push(g);
    }
    // One nest of output loops holds every store (UPCAST copies share their accumulators' values);
    // on the CPU, a store of its outer loops only runs in them (below).
    // A reduction that depends only on the outer loops of the nest (a row's max or sum, read by
    // every element of the row) runs before the inner loops open, once per outer iteration.
    // GPU launch axes (GLOBAL, LOCAL) must all open before any other op (codegen/gpu_launch.h), so
    // no reduction is hoisted in front of one: there it runs inside them, once per output element.
    // A GROUP range (the block's thread group) is no such axis: it may open after the reductions
    // (the GPU row schedule: the group reduces the row with GROUPTOP, then its threads share the
    // row's elements through a GROUPOUT range that opens here, after the reductions).
    // On the CPU the first loop is the one split over the cores: nothing is hoisted in front of
    // it. A GPU kernel (one with a GROUP range) has its parallelism in the launch instead.
    RangeSet outer;
    for (const NodeRef& store : kernel_->src) outer = merge(outer, live_.at(store.get()));
    size_t launch_prefix = 0;  // outer loops up to the last GLOBAL/LOCAL one
    bool group = false, grid = false;
    for (size_t i = 0; i < outer.size(); i++) {
      AxisType t = outer[i]->get_arg<RangeArg>().type;
      if (t == AxisType::GLOBAL || t == AxisType::LOCAL) launch_prefix = i + 1;
      group = group || t == AxisType::GROUP;
      grid = grid || t == AxisType::GLOBAL;
    }
    // A CPU kernel's array that no BARRIER publishes is read where it is written, by later trips
    // (KBLOCK's partial sums, read by the next block: codegen/opt.cpp): it outlives every loop
    // trip, so it is declared before the loops. (A PACK's array is declared at its copy.)
    if (!grid && !group)
      for (const Node* l : locals_) push(l);
    for (size_t i = 0; i < outer.size(); i++) {
      if ((i > 0 || group) && i >= launch_prefix) emit_placeable_accumulates();
      open(outer[i]);
      // A CPU copy into a thread's own array (codegen/pack.h) runs as soon as the loops its values
      // need are open, so every inner loop's trip reads it; a GPU copy into shared memory
      // (codegen/smem.h) depends on the k step and runs where it is first read. (A CPU kernel's
      // LOCAL range is a cache-blocking loop, not a launch axis.)
      if (!grid && !group)
        for (const Node* b : barriers_)
          if (!emitted_.count(b) && placeable(b)) emit(b);
      // A store of fewer loops than the nest (a row's value in a kernel that also writes the
      // row's elements: schedule/multi_output.h, CPU and INTERP only) runs in its own loops, once
      // per row. GPU kernels keep every store inside the whole nest.
      if (i + 1 < outer.size() && launch_prefix == 0 && !group)
        for (const NodeRef& store : kernel_->src)
          if (!emitted_.count(store.get()) && placeable(store.get())) emit(store.get());
    }
    for (const NodeRef& store : kernel_->src) emit(store.get());
    for (size_t i = outer.size(); i-- > 0;) close(outer[i]);
    p.ops = std::move(out_);
    return p;
  }

 private:
  NodeRef kernel_;
  std::unordered_map<const Node*, RangeSet> live_;
  std::unordered_set<const Node*> emitted_;
  RangeSet open_;
  std::vector<NodeRef> out_;
  std::vector<const Node*> accumulates_;  // in topological order
  std::vector<const Node*> barriers_;     // in topological order
  std::vector<const Node*> locals_;       // DEFINE_LOCALs no BARRIER publishes

  RangeSet live_ranges(const Node* n) {
    if (n->op == Op::RANGE) return merge({n}, live_.at(n->src[0].get()));
    if (n->op == Op::DEFINE_ACC) return acc_ranges(n);  // it changes in every iteration of its loops
    if (n->op == Op::ACCUMULATE) return minus(live_.at(n->src[1].get()), acc_ranges(n->src[0].get()));
    RangeSet r;
    for (const NodeRef& s : n->src) r = merge(r, live_.at(s.get()));
    if (n->op == Op::BARRIER) r = minus(r, coop_ranges(r));  // its copy loops close before it
    return r;
  }

  static RangeSet coop_ranges(const RangeSet& r) {
    RangeSet out;
    for (const Node* x : r)
      if (x->get_arg<RangeArg>().type == AxisType::COOP) out.push_back(x);
    return out;
  }

  bool is_open(const Node* r) const { return std::find(open_.begin(), open_.end(), r) != open_.end(); }
  bool placeable(const Node* n) const {
    for (const Node* r : live_.at(n))
      if (!is_open(r)) return false;
    return true;
  }

  void push(const Node* n) {
    emitted_.insert(n);
    out_.push_back(NodeRef::share(n));
  }

  void open(const Node* r) {
    emit(r->src[0].get());  // the loop bound
    push(r);
    open_.push_back(r);
  }

  void close(const Node* r) {
    LG_CHECK(!open_.empty() && open_.back() == r, "loops close out of order");
    open_.pop_back();
    out_.push_back(make(Op::END, dtypes::void_, {NodeRef::share(r)}));
  }

  void emit(const Node* n) {
    if (emitted_.count(n)) return;
    if (n->op == Op::ACCUMULATE) return emit_accumulate(n);
    if (n->op == Op::BARRIER) return emit_barrier(n);
    LG_CHECK(n->op != Op::RANGE && n->op != Op::DEFINE_ACC, op_name(n->op), " used outside its loops");
    LG_CHECK(placeable(n), "node ", op_name(n->op), " needs a loop that is not open");
    for (const NodeRef& s : n->src) emit(s.get());
    push(n);
  }

  // A shared-memory copy (codegen/smem.h) where it is first read: what does not depend on the
  // copy loops first (so nothing read later is defined inside them), the array, a barrier (no
  // thread still reads the array's previous contents), the COOP loops with the stores, then the
  // BARRIER itself (every thread's stores done).
  void emit_barrier(const Node* b) {
    RangeSet loops;
    for (size_t i = 1; i < b->src.size(); i++) loops = merge(loops, coop_ranges(live_.at(b->src[i].get())));
    for (size_t i = 1; i < b->src.size(); i++) {
      LG_CHECK(coop_ranges(live_.at(b->src[i].get())) == loops, "BARRIER: its stores run in different COOP loops");
      for (const Node* n : toposort(b->src[i]))
        if (!emitted_.count(n) && n->op != Op::RANGE && n->op != Op::DEFINE_ACC && placeable(n)) emit(n);
    }
    emit(b->src[0].get());
    out_.push_back(make(Op::BARRIER, dtypes::void_, {}));
    for (const Node* r : loops) open(r);
    for (size_t i = 1; i < b->src.size(); i++) emit(b->src[i].get());
    for (size_t i = loops.size(); i-- > 0;) close(loops[i]);
    LG_CHECK(placeable(b), "BARRIER needs a loop that is not open");
    push(b);
  }

  // Every pending ACCUMULATE whose value needs only the loops open now, in topological order.
  void emit_placeable_accumulates() {
    for (const Node* a : accumulates_)
      if (!emitted_.count(a) && placeable(a)) emit(a);
  }

  // Accumulators over the same loops (copies made by UPCAST) share one loop nest: hoist what does
  // not depend on the loops, set every DEFINE_ACC, open the loops, update all, close.
  void emit_accumulate(const Node* a) {
    std::vector<const Node*> group = accumulate_group(a);
    RangeSet loops = acc_ranges(group[0]->src[0].get());
    for (const Node* g : group)
      for (const Node* n : toposort(g->src[1]))
        if (!emitted_.count(n) && n->op != Op::DEFINE_ACC && n->op != Op::RANGE && placeable(n))
          emit(n);
    for (const Node* g : group) {
      const Node* acc = g->src[0].get();
      emit(acc->src[0].get());
      push(acc);
    }
    for (const Node* r : loops) open(r);
    for (const Node* g : group) emit(g->src[1].get());
    for (const Node* g : group) push(g);
    for (size_t i = loops.size(); i-- > 0;) close(loops[i]);
  }

  // a, and the other pending accumulators over the same loops that can be placed here and do not
  // read one another.
  std::vector<const Node*> accumulate_group(const Node* a) {
    std::vector<const Node*> group{a};
    RangeSet loops = acc_ranges(a->src[0].get());
    for (const Node* b : accumulates_) {
      if (b == a || emitted_.count(b) || acc_ranges(b->src[0].get()) != loops || !placeable(b)) continue;
      bool independent = true;
      for (const Node* g : group)
        independent = independent && !reaches(b->src[1].get(), g) && !reaches(g->src[1].get(), b);
      if (independent) group.push_back(b);
    }
    return group;
  }

  bool reaches(const Node* from, const Node* target) {
    const NodeRef root = NodeRef::share(from);
    for (const Node* n : toposort(root))
      if (n == target) return true;
    return false;
  }
};

}  // namespace

LinearProgram linearize(const NodeRef& kernel, const std::string& name) {
  LG_CHECK(kernel->op == Op::SINK, "linearize of ", op_name(kernel->op));
  return Linearizer(kernel).run(name);
}

}  // namespace lg
