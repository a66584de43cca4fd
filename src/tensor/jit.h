#pragma once
// Jit: capture a function of tensors once, then replay its kernels on new inputs with no
// scheduling, no lowering and no program-cache lookups (docs/jit.md).
//
//   Jit step([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{f(in[0], in[1])}; });
//   for (...) std::vector<Tensor> out = step({x, y});
//
//   call 1   runs fn eagerly (compiles its kernels)
//   call 2   runs fn under a CaptureSession: inputs are realized (contiguous) first, outputs are
//            realized inside the capture; every item realize() runs is recorded. Intermediates get
//            a memory plan (runtime/replay.h).
//   call 3+  checks the inputs (count, shape, dtype, device; lg::Error otherwise), binds their buffers
//            in place of the captured inputs and runs the recorded items.
// Replays return tensors over the same output buffers every call: a replay overwrites the values
// the previous call returned (copy them with .contiguous().realize() to keep them). fn must do the
// same work on every call; host-side branching on values, host reads and host uploads inside fn
// are not replayed (their capture-time effect is frozen). A Jit is not thread-safe.
#include <functional>
#include <memory>
#include <vector>

#include "tensor/tensor.h"

namespace lg {

class ReplayPlan;

class Jit {
 public:
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

  explicit Jit(Fn fn);
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);

  size_t calls() const { return calls_; }  // calls that returned (a throwing call does not count)
  bool captured() const { return plan_ != nullptr; }
  // The captured step (valid once captured()): items replayed per call, and the memory plan of its
  // intermediates: their summed size and the arena bytes they were planned into.
  size_t captured_items() const;
  size_t intermediate_bytes() const;
  size_t planned_bytes() const;

 private:
  // An output is a view (movement ops) over a buffer; over an input's buffer it is rebuilt on
  // every replay over the new input's buffer.
  struct Output {
    NodeRef view;
    int input = -1;  // which input's buffer the view reads, or -1 (a kept buffer)
  };
  struct InputSig {
    Shape shape;
    DType dtype;
    std::string device;
  };

  std::vector<Tensor> capture(const std::vector<Tensor>& inputs);
  std::vector<Tensor> replay(const std::vector<Tensor>& inputs);
  void check_inputs(const std::vector<Tensor>& inputs) const;

  Fn fn_;
  size_t calls_ = 0;
  std::vector<InputSig> signature_;  // set by the capture
  std::vector<Output> outputs_;
  std::unique_ptr<ReplayPlan> plan_;
};

}  // namespace lg
