#include "runtime/realize.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "base/config.h"
#include "base/error.h"
#include "codegen/program.h"
#include "ir/build.h"
#include "runtime/buffer.h"
#include "runtime/capture.h"
#include "runtime/device.h"
#include "runtime/profile.h"
#include "runtime/program_build.h"
#include "runtime/transfer.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

struct CacheEntry {
  NodeRef ast;  // held so the key's address is never reused
  std::shared_ptr<Program> program;
};

std::mutex cache_mu;
std::map<std::pair<std::string, const Node*>, CacheEntry> cache;
size_t built = 0;

bool has_program(Device& dev, const ScheduleItem& item) {
  std::lock_guard lock(cache_mu);
  return cache.count({dev.name(), item.ast.get()}) > 0;
}

PendingProgram render_for(Device& dev, const ScheduleItem& item) {
  return render_program(dev, lower_kernel(item.ast, item.name, choose_opts(dev, item), dev.renderer() ? dev.renderer()->vector_lanes() : 0));
}

std::shared_ptr<Program> keep_program(Device& dev, const ScheduleItem& item, PendingProgram& pending) {
  BuiltProgram b = load_program(dev, pending);
  if (config().debug >= 1 && dev.renderer())
    std::fprintf(stderr, "%s %s\n", b.compiled ? "compiled" : "cached  ", item.name.c_str());
  if (config().ptxas && dev.renderer())
    if (std::optional<ResourceReport> r = dev.compiler()->resource_report(pending.source))
      std::fprintf(stderr, "ptxas %s %s: %s\n", dev.name().c_str(), item.name.c_str(), r->text.c_str());
  std::shared_ptr<Program> p = std::move(b.program);
  std::lock_guard lock(cache_mu);
  built++;
  cache[{dev.name(), item.ast.get()}] = {item.ast, p};
  return p;
}

std::shared_ptr<Program> program_for(Device& dev, const ScheduleItem& item) {
  {
    std::lock_guard lock(cache_mu);
    if (auto it = cache.find({dev.name(), item.ast.get()}); it != cache.end()) return it->second.program;
  }
  PendingProgram pending = render_for(dev, item);
  return keep_program(dev, item, pending);
}

// The programs of the schedule's kernels that have none yet, their compiles (disk cache misses)
// together (compile_programs: many kernels a compiler run, the runs on the thread pool): a cold
// start of a training step (100-200 kernels) waits for a few compiler runs, not one per kernel.
// Lowering, rendering and loading stay on this thread in schedule order (they use the IR's tables,
// BEAM's timings and the device's context); only the compiles run elsewhere. Not with BEAM, which
// times its candidates one at a time.
void build_programs(const Schedule& s) {
  if (config().beam > 0) return;
  std::vector<std::pair<Device*, const ScheduleItem*>> items;
  std::set<std::pair<std::string, const Node*>> seen;
  for (const ScheduleItem& item : s.items) {
    if (item.kind == ScheduleItem::Kind::Copy) continue;
    Device& dev = get_device(item.buffers[0]->device_name());
    if (dev.remote_rank() >= 0 || !dev.renderer() || has_program(dev, item)) continue;
    if (seen.insert({dev.name(), item.ast.get()}).second) items.emplace_back(&dev, &item);
  }
  std::vector<PendingProgram> pending;
  pending.reserve(items.size());  // compile_programs holds pointers to them
  std::vector<std::pair<Device*, PendingProgram*>> to_compile;
  for (auto& [dev, item] : items) {
    pending.push_back(render_for(*dev, *item));
    if (pending.back().needs_compile) to_compile.emplace_back(dev, &pending.back());
  }
  compile_programs(to_compile);
  std::map<Device*, std::vector<const LinearProgram*>> loads;
  for (size_t i = 0; i < items.size(); i++) loads[items[i].first].push_back(&pending[i].prog);
  for (auto& [dev, progs] : loads) dev->prepare_loads(progs);
  for (size_t i = 0; i < items.size(); i++) keep_program(*items[i].first, *items[i].second, pending[i]);
}

// The memory of buffer b (null on another process's device, which holds none here).
void* memory_of(const Node& b, Device& dev) { return dev.remote_rank() >= 0 ? nullptr : buffer_memory(b).ptr; }

void run_copy(const ScheduleItem& item) {
  const Node& dst = *item.buffers[0];
  const Node& src = *item.buffers[1];
  size_t elem = itemsize(dst.dtype);
  size_t bytes = static_cast<size_t>(dst.get_arg<BufferArg>().size) * elem;
  Device& dst_dev = get_device(dst.device_name());
  Device& src_dev = get_device(src.device_name());
  char* from = static_cast<char*>(memory_of(src, src_dev));
  if (from) from += static_cast<size_t>(item.src_offset) * elem;
  transfer(dst_dev, memory_of(dst, dst_dev), src_dev, from, bytes);
  if (CaptureSession* c = CaptureSession::active()) c->record(item, nullptr);
}

// Kernels of another process's devices run there, not here (runtime/transport.h).
void run_kernel(const ScheduleItem& item) {
  Device& dev = get_device(item.buffers[0]->device_name());
  if (dev.remote_rank() >= 0) return;
  std::shared_ptr<Program> p = program_for(dev, item);
  if (CaptureSession* c = CaptureSession::active()) c->record(item, p);
  run_program(*p, kernel_args(item), dev.name(), item.name, item.ast);
}

// The schedule's intermediate buffers by the item after which nothing reads them: buffers the
// scheduler made (uid >= first_new) that no output views, released after their last kernel so a
// long schedule (a whole training step run eagerly) holds only what is still to be read, as the
// Jit's memory plan does. Buffers a copy touches are left to the end (copies may still be in
// flight until finish_transfers()).
std::vector<std::vector<const Node*>> release_points(const Schedule& s, uint64_t first_new) {
  std::unordered_set<const Node*> keep;
  for (const NodeRef& o : s.outputs)
    if (const Node* b = view_base(o.get())) keep.insert(b);
  std::unordered_map<const Node*, size_t> last;
  for (size_t i = 0; i < s.items.size(); i++)
    for (const NodeRef& b : s.items[i].buffers) {
      if (s.items[i].kind == ScheduleItem::Kind::Copy) keep.insert(b.get());
      if (b->get_arg<BufferArg>().uid >= first_new) last[b.get()] = i;
    }
  std::vector<std::vector<const Node*>> after(s.items.size());
  for (const auto& [b, i] : last)
    if (!keep.count(b)) after[i].push_back(b);
  return after;
}

}  // namespace

KernelArgs kernel_args(const ScheduleItem& item, const std::vector<void*>& outs) {
  KernelArgs args;
  for (size_t k = 0; k < item.buffers.size(); k++) {
    const Node& b = *item.buffers[k];
    int64_t offset = k < item.offsets.size() ? item.offsets[k] : 0;
    char* base = static_cast<char*>(k < outs.size() ? outs[k] : buffer_memory(b).ptr);
    args.buffers.push_back(base + static_cast<size_t>(offset) * itemsize(b.dtype));
    args.sizes.push_back(b.get_arg<BufferArg>().size - offset);
  }
  return args;
}

std::vector<NodeRef> realize(const NodeRef& sink) {
  uint64_t first_new = next_buffer_uid();
  Schedule s = create_schedule(sink);
  build_programs(s);
  std::vector<std::vector<const Node*>> release_after = release_points(s, first_new);
  for (size_t i = 0; i < s.items.size(); i++) {
    const ScheduleItem& item = s.items[i];
    auto t0 = std::chrono::steady_clock::now();
    if (item.kind == ScheduleItem::Kind::Copy)
      run_copy(item);
    else
      run_kernel(item);
    for (const Node* b : release_after[i]) buffer_release(*b);
    if (config().debug >= 1) {
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "*** %-8s %4zu %-28s %10.1f us\n", item.buffers[0]->device_name().c_str(), i,
                   item.name.c_str(), us);
    }
  }
  finish_transfers();
  return s.outputs;
}

size_t programs_built() {
  std::lock_guard lock(cache_mu);
  return built;
}

}  // namespace lg
