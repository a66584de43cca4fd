#pragma once
// Mixed precision training: float32 master weights and optimizer state, 16-bit compute.
//
// Per step:
//   ParamList w = mp.begin_step();   // the compute copies: every master cast to the compute dtype
//                                    // ONCE (one realize), fresh buffers that require grad
//   model.bind(w);                   // the model's forward and backward now run in bfloat16
//   for each micro-batch: loss (float32, e.g. logits.cast(f32).cross_entropy(...)) .backward();
//                         mp.accumulate_grads();   // master.grad += float32(compute.grad)
//   clip_grad_norm(mp.master(), ...); opt.step(...);   // the optimizer owns the masters
// Gradients are summed in float32 across micro-batches; each micro-batch's sum is realized at once,
// so the graph does not grow with the number of micro-batches.
#include "nn/params.h"

namespace lg::nn {

class MixedPrecision {
 public:
  explicit MixedPrecision(ParamList master, DType compute = dtypes::bfloat16);
  const ParamList& master() const { return master_; }
  const ParamList& compute() const { return compute_; }  // empty before begin_step()
  // Makes new compute copies of the current masters (one schedule) and returns them.
  const ParamList& begin_step();
  // Adds each compute copy's gradient, cast to float32, into its master's gradient, clears the
  // compute gradients, and realizes the sums (one schedule).
  void accumulate_grads();

 private:
  ParamList master_, compute_;
  DType dtype_;
};

}  // namespace lg::nn
