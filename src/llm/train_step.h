#pragma once
// One optimizer step of a Llama model: micro-batches with gradient accumulation, global-norm
// clipping and AdamW, with float32 master weights and optional bfloat16 compute; plus evaluation.
//
// Buffers that live across steps (all realized once, written with assign):
//   masters    float32 parameters (the model's own), owned by the AdamW optimizer
//   compute    bfloat16 copies the model is bound to (compute dtype bf16), recast after each update;
//              for float32 compute the masters themselves
//   grad_acc   float32 gradient sums over the micro-batches of a step, zeroed by the update
// Per step:
//   micro (x grad_accum)   loss_sum/T forward + backward; grad_acc += float32(grad)   [Jit "micro"]
//   update                 grad = grad_acc; norm = clip(grad); AdamW; compute = cast(masters);
//                          grad_acc = 0                                                 [Jit "update"]
// where T = micro_batch * seq_len * grad_accum, so grad_acc ends as the gradient of the mean token
// loss of the whole step. The per-step AdamW numbers enter the update as an input tensor, so both
// captured steps replay with no scheduling (docs/jit.md); with jit off the same functions run eagerly.
#include <cstdint>
#include <memory>
#include <vector>

#include "llm/llama.h"
#include "nn/optim.h"
#include "tensor/jit.h"

namespace lg::llm {

struct TrainStepOptions {
  int64_t micro_batch = 8, seq_len = 256, grad_accum = 1;
  DType compute = dtypes::bfloat16;  // bfloat16 or float32
  // "adamw", "sgd" (momentum 0: no optimizer state) or "none" (forward and backward only: the
  // gradients are computed and dropped; for measuring and for models too big to update)
  std::string optimizer = "adamw";
  nn::AdamWConfig adamw;             // adamw.lr is replaced by step()'s lr
  nn::SGDConfig sgd;
  double clip = 1.0;                 // global gradient norm bound (<= 0: no clipping)
  int64_t loss_chunk = 0;            // tokens per chunk of the head + loss (0: all at once)
  bool jit = true;
};

struct StepResult {
  double loss = 0;       // mean token cross-entropy of the step (nats)
  double grad_norm = 0;  // global gradient norm before clipping
};

// Host batch data: tokens and labels, (micro_batch, seq_len) int32 each.
struct HostBatch {
  const int32_t* tokens;
  const int32_t* labels;
};

class TrainStep {
 public:
  TrainStep(Llama& model, TrainStepOptions options);
  ~TrainStep();

  // One optimizer step over options.grad_accum micro-batches at learning rate lr.
  StepResult step(const std::vector<HostBatch>& micro, double lr);
  // Sum of the token cross-entropies of one batch (micro_batch, seq_len), with no gradients.
  double eval_loss_sum(const HostBatch& batch);

  nn::Optimizer& optimizer();  // a user error for optimizer "none"
  const nn::ParamList& masters() const { return masters_; }
  const TrainStepOptions& options() const { return o_; }
  // Bytes of the captured steps' planned intermediates (0 before capture).
  size_t planned_bytes() const;
  // After masters or optimizer state were overwritten (checkpoint load): recast the compute copies.
  void refresh_compute();
  // Zeroes the optimizer's state and step count (after warm-up steps at learning rate 0, which leave
  // the weights exactly as they were: the MLPerf driver compiles and captures before the clock).
  void reset_optimizer();

 private:
  Tensor upload(const int32_t* data) const;
  std::vector<Tensor> micro_fn(const std::vector<Tensor>& in);
  std::vector<Tensor> update_fn(const std::vector<Tensor>& in);
  std::vector<Tensor> eval_fn(const std::vector<Tensor>& in);

  Llama& model_;
  TrainStepOptions o_;
  nn::ParamList masters_, compute_;
  std::vector<Tensor> grad_acc_;
  std::unique_ptr<nn::Optimizer> opt_;
  std::unique_ptr<Jit> micro_jit_, update_jit_, eval_jit_;
};

}  // namespace lg::llm
