#include "runtime/replay.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "base/config.h"
#include "base/error.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/profile.h"
#include "runtime/transfer.h"

namespace lg {

ReplayPlan::ReplayPlan(Capture capture, const std::vector<NodeRef>& inputs,
                       const std::vector<NodeRef>& outputs) {
  for (const NodeRef& b : inputs) {
    LG_CHECK(b->op == Op::BUFFER, "replay input is ", op_name(b->op));
    input_specs_.push_back({b->dtype, b->get_arg<BufferArg>().size, b->device_name()});
  }
  std::vector<BufferLifetime> lifetimes = classify(capture, inputs, outputs);
  plan_arenas(lifetimes);
  if (config().debug >= 2)
    std::fprintf(stderr, "jit: %zu items, %zu planned buffers, %zu bytes in %zu bytes of arenas\n",
                 steps_.size(), planned_buffer_count(), intermediate_bytes(), arena_bytes());
}

ReplayPlan::~ReplayPlan() {
  for (const Arena& a : arenas_) a.device->allocator().free(a.ptr, a.bytes);
}

std::vector<BufferLifetime> ReplayPlan::classify(const Capture& capture, const std::vector<NodeRef>& inputs,
                                                 const std::vector<NodeRef>& outputs) {
  std::unordered_map<uint64_t, size_t> input_of, slot_of;  // by BufferArg uid
  for (size_t i = 0; i < inputs.size(); i++) input_of.emplace(inputs[i]->get_arg<BufferArg>().uid, i);
  std::unordered_set<uint64_t> output_uids;
  for (const NodeRef& b : outputs) output_uids.insert(b->get_arg<BufferArg>().uid);
  std::vector<BufferLifetime> life;
  for (size_t s = 0; s < capture.items.size(); s++) {
    const CapturedItem& c = capture.items[s];
    Step step{c.item.kind, c.item.name, c.program, c.item.ast, {}, c.item.src_offset, {}, {}};
    for (size_t k = 0; k < c.item.buffers.size(); k++) {
      const NodeRef& b = c.item.buffers[k];
      uint64_t uid = b->get_arg<BufferArg>().uid;
      auto [it, fresh] = slot_of.emplace(uid, slots_.size());
      if (fresh) {
        Slot slot{SlotKind::Planned};
        slot.device = b->device_name();
        slot.size = b->get_arg<BufferArg>().size;
        slot.bytes = static_cast<size_t>(slot.size) * itemsize(b->dtype);
        bool written_first = k < c.item.outputs;  // the first slots are the item's outputs
        if (auto in = input_of.find(uid); in != input_of.end()) {
          slot.kind = SlotKind::Input;
          slot.input = in->second;
        } else if (get_device(slot.device).remote_rank() >= 0) {
          slot.kind = SlotKind::Kept;
          slot.kept = b;
        } else if (output_uids.count(uid) || uid < capture.first_new_uid || !written_first) {
          slot.kind = SlotKind::Kept;
          slot.kept = b;
          slot.ptr = buffer_memory(*b).ptr;
        }
        slots_.push_back(std::move(slot));
        life.push_back({slots_.back().bytes, s, s});
      }
      life[it->second].last = s;
      step.slots.push_back(it->second);
      int64_t offset = k < c.item.offsets.size() ? c.item.offsets[k] : 0;
      step.byte_offsets.push_back(static_cast<size_t>(offset) * itemsize(b->dtype));
      step.sizes.push_back(b->get_arg<BufferArg>().size - offset);
    }
    steps_.push_back(std::move(step));
  }
  for (const Step& step : steps_)  // a send reads its source until the end of the run
    if (step.kind == ScheduleItem::Kind::Copy && get_device(slots_[step.slots[0]].device).remote_rank() >= 0)
      life[step.slots[1]].last = steps_.size() - 1;
  return life;
}

// One arena per device holds that device's planned buffers. Device pointers must allow byte offsets
// (true of host memory and of CUDA device pointers).
void ReplayPlan::plan_arenas(const std::vector<BufferLifetime>& lifetimes) {
  std::map<std::string, std::vector<size_t>> planned_on;  // device -> planned slots (ordered: deterministic)
  for (size_t i = 0; i < slots_.size(); i++)
    if (slots_[i].kind == SlotKind::Planned) planned_on[slots_[i].device].push_back(i);
  for (auto& [device, ids] : planned_on) {
    std::vector<BufferLifetime> group;
    for (size_t i : ids) group.push_back(lifetimes[i]);
    MemoryPlan plan = plan_memory(group);
    Device& dev = get_device(device);
    Arena arena{&dev, allocate(dev.allocator(), plan.arena_bytes), plan.arena_bytes};
    for (size_t k = 0; k < ids.size(); k++) {
      Slot& slot = slots_[ids[k]];
      slot.arena = arenas_.size();
      slot.offset = plan.offsets[k];
      slot.ptr = static_cast<char*>(arena.ptr) + plan.offsets[k];
    }
    arenas_.push_back(arena);
  }
}

void ReplayPlan::run(const std::vector<NodeRef>& inputs) const {
  LG_CHECK(inputs.size() == input_specs_.size(), "replay with ", inputs.size(), " inputs, captured with ",
           input_specs_.size());
  for (size_t i = 0; i < inputs.size(); i++) {
    const InputSpec& want = input_specs_[i];
    const Node& b = *inputs[i];
    LG_CHECK(b.op == Op::BUFFER && b.dtype == want.dtype && b.get_arg<BufferArg>().size == want.size &&
                 b.device_name() == want.device,
             "replay input ", i, " differs from the captured one");
  }
  std::vector<void*> ptrs(slots_.size());
  for (size_t i = 0; i < slots_.size(); i++)
    ptrs[i] = slots_[i].kind == SlotKind::Input ? buffer_memory(*inputs[slots_[i].input]).ptr : slots_[i].ptr;
  for (size_t i = 0; i < steps_.size(); i++) {
    auto t0 = std::chrono::steady_clock::now();
    run_step(steps_[i], ptrs);
    if (config().debug >= 1) {
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "*** %-8s %4zu %-28s %10.1f us (jit)\n", slots_[steps_[i].slots[0]].device.c_str(),
                   i, steps_[i].name.c_str(), us);
    }
  }
  finish_transfers();
}

void ReplayPlan::run_step(const Step& step, const std::vector<void*>& ptrs) const {
  if (step.kind == ScheduleItem::Kind::Copy) {
    const Slot& dst = slots_[step.slots[0]];
    const Slot& src = slots_[step.slots[1]];
    char* from = static_cast<char*>(ptrs[step.slots[1]]);  // null on another process's device
    size_t elem = src.size > 0 ? src.bytes / static_cast<size_t>(src.size) : 0;
    if (from) from += static_cast<size_t>(step.src_offset) * elem;
    transfer(get_device(dst.device), ptrs[step.slots[0]], get_device(src.device), from, dst.bytes);
    return;
  }
  KernelArgs args;
  for (size_t k = 0; k < step.slots.size(); k++)
    args.buffers.push_back(static_cast<char*>(ptrs[step.slots[k]]) + step.byte_offsets[k]);
  args.sizes = step.sizes;
  run_program(*step.program, args, slots_[step.slots[0]].device, step.name, step.ast);
}

size_t ReplayPlan::planned_buffer_count() const {
  size_t n = 0;
  for (const Slot& s : slots_) n += s.kind == SlotKind::Planned;
  return n;
}

size_t ReplayPlan::intermediate_bytes() const {
  size_t n = 0;
  for (const Slot& s : slots_)
    if (s.kind == SlotKind::Planned) n += s.bytes;
  return n;
}

size_t ReplayPlan::arena_bytes() const {
  size_t n = 0;
  for (const Arena& a : arenas_) n += a.bytes;
  return n;
}

}  // namespace lg
