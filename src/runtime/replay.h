#pragma once
// A captured step (capture.h) made ready to run again on new input buffers: no scheduling, no
// lowering, no program-cache lookups, just the recorded programs and copies in recorded order.
//
// Every buffer the recorded items use is exactly one of:
//   input    rebound on every run, by input position
//   kept     the captured BUFFER itself, held by the plan: outputs, buffers older than the capture
//            (parameters), buffers no recorded item wrote before reading (uploaded constants), and
//            buffers of other processes' devices (no memory here)
//   planned  an intermediate: made during the capture, first written by a recorded item, neither
//            input nor kept. A planned buffer sent to another process lives to the end of the run
//            (the send completes only then). Planned buffers live at planned offsets in one arena per device
//            (memory_plan.h); their captured memory is not used (the plan does not hold them).
// Invariant: a planned buffer is fully written before it is read within one run, so its contents
// need not survive between runs (or between buffers sharing its memory).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/node.h"
#include "runtime/capture.h"
#include "runtime/memory_plan.h"

namespace lg {

class Device;

class ReplayPlan {
 public:
  // inputs: the BUFFERs bound to each input position during the capture; outputs: BUFFERs whose
  // values the caller reads after a run (they keep their own memory).
  ReplayPlan(Capture capture, const std::vector<NodeRef>& inputs, const std::vector<NodeRef>& outputs);
  ~ReplayPlan();
  ReplayPlan(const ReplayPlan&) = delete;
  ReplayPlan& operator=(const ReplayPlan&) = delete;

  // Runs the recorded items with inputs[i] in place of captured input i. Each input must have the
  // captured input's dtype, element count and device (the caller checks; an internal error here).
  // Not safe to call from two threads at once (runs share the arenas and the kept outputs).
  void run(const std::vector<NodeRef>& inputs) const;

  size_t item_count() const { return steps_.size(); }
  size_t planned_buffer_count() const;
  size_t intermediate_bytes() const;  // the planned buffers' sizes, summed
  size_t arena_bytes() const;         // what the arenas hold: the planned peak

 private:
  enum class SlotKind { Input, Kept, Planned };
  struct Slot {
    SlotKind kind;
    size_t input = 0;     // Input: the position
    NodeRef kept;         // Kept: the buffer (held so its memory stays)
    size_t arena = 0;     // Planned: which arena
    size_t offset = 0;    // Planned: bytes into the arena
    void* ptr = nullptr;  // Kept and Planned: resolved at construction
    std::string device;
    int64_t size = 0;  // elements
    size_t bytes = 0;
  };
  struct Step {
    ScheduleItem::Kind kind;
    std::string name;
    std::shared_ptr<Program> program;  // null for copies
    NodeRef ast;                       // kernels: the item's (PROFILE's key, runtime/profile.h)
    std::vector<size_t> slots;         // by the item's buffer position
    int64_t src_offset = 0;            // copies: first source element
    // kernels, by buffer position: bytes from the buffer's start to where the slot's pointer starts,
    // and the elements from there (ScheduleItem::offsets, resolved once at capture)
    std::vector<size_t> byte_offsets;
    std::vector<int64_t> sizes;
  };
  struct Arena {
    Device* device;
    void* ptr;
    size_t bytes;
  };

  struct InputSpec {
    DType dtype;
    int64_t size;
    std::string device;
  };

  // Fills slots_ and steps_; returns each slot's lifetime (first and last step using it).
  std::vector<BufferLifetime> classify(const Capture& capture, const std::vector<NodeRef>& inputs,
                                       const std::vector<NodeRef>& outputs);
  void plan_arenas(const std::vector<BufferLifetime>& lifetimes);
  void run_step(const Step& step, const std::vector<void*>& ptrs) const;

  std::vector<Slot> slots_;
  std::vector<Step> steps_;
  std::vector<Arena> arenas_;
  std::vector<InputSpec> input_specs_;  // the captured inputs, by position (their buffers are not held)
};

}  // namespace lg
