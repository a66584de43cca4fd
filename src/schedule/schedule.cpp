#include "schedule/schedule.h"

#include <atomic>
#include <cstdio>
#include <queue>
#include <unordered_map>

#include "base/config.h"
#include "base/error.h"
#include "ir/build.h"
#include "ir/graph.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/movement.h"
#include "schedule/allreduce.h"
#include "schedule/fusion.h"
#include "schedule/kernelize.h"
#include "schedule/multi_output.h"
#include "schedule/plan.h"
#include "schedule/split_reduce.h"

namespace lg {

bool is_buffer_view(const Node* n) { return view_base(n) != nullptr; }

bool is_reshaped_contiguous(const Node* n) { return n->op == Op::RESHAPE && n->src[0]->op == Op::CONTIGUOUS; }

const Node* view_base(const Node* n) {
  while (is_movement(n->op)) n = n->src[0].get();
  return n->op == Op::BUFFER ? n : nullptr;
}

bool reads_span(const Planned& j, const Node* b, int64_t lo, int64_t hi) {
  if (std::find(j.reads.begin(), j.reads.end(), b) == j.reads.end()) return false;
  for (const KernelizeResult::Span& s : j.spans)
    if (s.buffer == b) return s.lo <= hi && lo <= s.hi;
  return true;
}

std::vector<std::vector<size_t>> dependency_edges(const std::vector<Planned>& plan) {
  size_t n = plan.size();
  std::unordered_map<const Node*, size_t> item_of;  // realize point -> entry
  for (size_t i = 0; i < n; i++)
    for (const Node* p : plan[i].points) item_of[p] = i;
  std::vector<std::vector<size_t>> next(n);
  for (size_t j = 0; j < n; j++)
    for (const Node* r : plan[j].reads)
      if (auto it = item_of.find(r); it != item_of.end() && it->second != j) next[it->second].push_back(j);
  for (size_t a = 0; a < n; a++)
    for (size_t k = 0; k < plan[a].points.size(); k++) {
      const Node* point = plan[a].points[k];
      if (point->op != Op::ASSIGN) continue;
      const Node* target = plan[a].item.buffers[k].get();
      int64_t lo = plan[a].offsets[k], hi = lo + point->numel() - 1;
      for (size_t j = 0; j < n; j++)
        if (j != a && reads_span(plan[j], target, lo, hi)) next[j].push_back(a);
    }
  return next;
}

namespace {

// Where an ASSIGN or SCATTER_ADD writes: a contiguous range of an existing buffer.
ElementRange written_range(const Node* n) {
  const Node* t = n->src[0].get();
  if (n->op == Op::SCATTER_ADD && t->op == Op::ASSIGN) return written_range(t);
  ElementRange r = element_range(t);
  LG_CHECK(r.base->op == Op::BUFFER, op_name(n->op), " target is not a contiguous range of a buffer");
  return r;
}

NodeRef buffer_for(const Node* n) {
  if (n->op == Op::SCATTER_ADD || n->op == Op::ASSIGN) return NodeRef::share(written_range(n).base);
  LG_USER_CHECK(n->device != nullptr, "cannot realize a value that lives on no device (", op_name(n->op),
                ")");
  return new_buffer(NodeRef::share(n->device), n->dtype, n->numel());
}

// The view an ASSIGN or SCATTER_ADD writes through.
const Node* written_view(const Node* n) {
  const Node* t = n->src[0].get();
  return (n->op == Op::SCATTER_ADD && t->op == Op::ASSIGN) ? written_view(t) : t;
}

// Orders items so each runs after the items whose buffers it reads, and every reader of a
// buffer's old value runs before the ASSIGN that overwrites it. Ties keep graph order.
std::vector<ScheduleItem> order_items(std::vector<Planned>& plan) {
  size_t n = plan.size();
  std::vector<std::vector<size_t>> next = dependency_edges(plan);
  std::vector<int> indeg(n, 0);
  for (size_t a = 0; a < n; a++)
    for (size_t b : next[a]) indeg[b]++;
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; i++)
    if (indeg[i] == 0) ready.push(i);
  std::vector<ScheduleItem> out;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    out.push_back(std::move(plan[i].item));
    for (size_t k : next[i])
      if (--indeg[k] == 0) ready.push(k);
  }
  LG_USER_CHECK(out.size() == n,
                "assign: a value is read both before and after an ASSIGN overwrites its buffer in one "
                "schedule; realize the reader before assigning");
  return out;
}

std::atomic<size_t> schedules_made{0};

}  // namespace

size_t schedules_created() { return schedules_made.load(); }

Schedule create_schedule(const NodeRef& sink) {
  LG_CHECK(sink->op == Op::SINK, "create_schedule of ", op_name(sink->op));
  schedules_made.fetch_add(1);
  NodeRef g = rewrite(sink, pm_allreduce(), {.name = "lower allreduce"});
  g = rewrite(g, pm_movement_cleanup(), {.name = "tensor cleanup"});
  // Before fusion: the first stage of a split reduction is a realize point (CONTIGUOUS).
  g = rewrite(g, pm_split_reduce(), {.name = "split large reductions"});
  g = rewrite(g, pm_movement_cleanup(), {.name = "tensor cleanup after split"});
  verify_stage(g, tensor_spec(), "schedule input");
  UserMap um = user_map(g);
  std::vector<bool> realize = find_realize_points(um, g);

  std::unordered_map<const Node*, NodeRef> buf_of;   // realize point -> its buffer
  std::unordered_map<const Node*, NodeRef> read_of;  // how it is read: its buffer, or a range view
  for (size_t i = 0; i < um.order.size(); i++) {
    if (!realize[i]) continue;
    const Node* n = um.order[i];
    buf_of[n] = buffer_for(n);
    bool part = (n->op == Op::ASSIGN || n->op == Op::SCATTER_ADD) && !is_contiguous_buffer_view(written_view(n));
    read_of[n] = part ? NodeRef::share(written_view(n)) : buf_of[n];
  }
  // The run of a buffer a copy reads: a realize point's (through its read view) or a view's.
  auto copy_range = [&](const Node* s) {
    ElementRange r = element_range(s);
    if (auto it = read_of.find(s); it != read_of.end()) r = {it->second.get(), 0};
    else if (auto b = read_of.find(r.base); b != read_of.end() && r.base->op != Op::BUFFER) r.base = b->second.get();
    if (r.base->op != Op::BUFFER) {  // a range view of a buffer (an ASSIGN into a range)
      ElementRange inner = element_range(r.base);
      r = {inner.base, inner.offset + r.offset};
    }
    LG_CHECK(r.base->op == Op::BUFFER, "COPY source is not a run of a buffer");
    return r;
  };

  std::vector<Planned> plan;
  for (size_t i = 0; i < um.order.size(); i++) {
    if (!realize[i]) continue;
    const Node* n = um.order[i];
    NodeRef point = NodeRef::share(n);
    Planned p;
    p.points = {n};
    p.offsets = {0};
    if (n->op == Op::COPY) {
      const Node* s = n->src[0].get();
      if (n->numel() == 0) continue;
      ElementRange range = copy_range(s);
      NodeRef src_buf = NodeRef::share(range.base);
      p.item = {ScheduleItem::Kind::Copy,
                {},
                {buf_of[n], src_buf},
                str("copy ", s->device_name(), " -> ", n->device_name()),
                range.offset};
      const Node* point_read = read_of.count(s) ? s : element_range(s).base;
      p.reads = {read_of.count(point_read) ? point_read : src_buf.get()};
      p.spans = {{src_buf.get(), range.offset, range.offset + n->numel() - 1}};
    } else if (n->op == Op::SCATTER_ADD) {
      if (n->src[2]->numel() == 0) continue;  // nothing to add
      p.offsets[0] = written_range(n).offset;
      KernelizeResult k = kernelize_scatter(point, buf_of[n], read_of, p.offsets[0]);
      p.reads = k.reads;
      p.spans = k.spans;
      p.reads.push_back(n->src[0].get());  // after the target's value is in the buffer
      p.item = {ScheduleItem::Kind::Kernel, k.ast, k.buffers, k.name, 0, k.offsets};
    } else if (n->op == Op::FLASH_ATTENTION || n->op == Op::FLASH_ATTENTION_GRAD) {
      if (n->numel() == 0) continue;
      KernelizeResult k = kernelize_attention(point, buf_of[n], read_of);
      p.reads = k.reads;
      p.item = {ScheduleItem::Kind::Kernel, k.ast, k.buffers, k.name, 0, k.offsets};
    } else {
      if (n->numel() == 0) continue;  // nothing to compute; the buffer is empty
      if (n->op == Op::ASSIGN) p.offsets[0] = written_range(n).offset;
      KernelizeResult k = kernelize(point, buf_of[n], read_of, p.offsets[0]);
      p.reads = k.reads;
      p.spans = k.spans;
      p.item = {ScheduleItem::Kind::Kernel, k.ast, k.buffers, k.name, 0, k.offsets};
    }
    plan.push_back(std::move(p));
  }

  merge_outputs(plan, read_of);
  Schedule s;
  s.items = order_items(plan);
  for (size_t i = 0; i < g->src.size(); i++) {
    const NodeRef& n = g->src[i];
    auto it = buf_of.find(n.get());
    if (it == buf_of.end() && is_reshaped_contiguous(n.get()))
      s.outputs.push_back(make(Op::RESHAPE, n->dtype, {buf_of.at(n->src[0].get())}, n->shape));
    else if (it == buf_of.end())
      s.outputs.push_back(n);
    else if (n->op == Op::ASSIGN || n->op == Op::SCATTER_ADD)  // the view it writes (maybe part of a buffer)
      s.outputs.push_back(NodeRef::share(written_view(n.get())));
    else if (n->shape.size() == 1)
      s.outputs.push_back(it->second);
    else
      s.outputs.push_back(make(Op::RESHAPE, n->dtype, {it->second}, n->shape));
  }
  if (config().debug >= 2) std::fputs(describe(s).c_str(), stderr);
  return s;
}

static std::string buf_desc(const NodeRef& b, int64_t offset = 0) {
  return str("buf#", b->get_arg<BufferArg>().uid, " ", name(b->dtype), "[", b->get_arg<BufferArg>().size, "]",
             offset ? str("+", offset) : "");
}

std::string describe(const Schedule& s) {
  std::string out = str("schedule: ", s.items.size(), " items\n");
  for (size_t i = 0; i < s.items.size(); i++) {
    const ScheduleItem& it = s.items[i];
    auto offset = [&](size_t j) { return j < it.offsets.size() ? it.offsets[j] : 0; };
    out += str("  ", i, " ", it.kind == ScheduleItem::Kind::Kernel ? "kernel " : "copy   ", it.name, "  out ",
               buf_desc(it.buffers[0], offset(0)));
    for (size_t j = 1; j < it.outputs; j++) out += " " + buf_desc(it.buffers[j], offset(j));
    out += str(" on ", it.buffers[0]->device_name(), "  in");
    for (size_t j = it.outputs; j < it.buffers.size(); j++) out += " " + buf_desc(it.buffers[j], offset(j));
    if (it.src_offset) out += str(" from element ", it.src_offset);
    out += "\n";
  }
  return out;
}

}  // namespace lg
