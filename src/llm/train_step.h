#pragma once
// One optimizer step of a Llama model: micro-batches with gradient accumulation, global-norm
// clipping and AdamW, with float32 master weights and optional bfloat16 compute; plus evaluation.
//
// Buffers that live across steps (all realized once, written with assign), each one flat buffer in
// the optimizer's layout (nn/flat_layout.h) whose runs are the per-parameter tensors:
//   masters    float32 parameters (the model's own, moved into the optimizer's flat buffer)
//   compute    bfloat16 copies the model is bound to (compute dtype bf16), recast after each update
//              by one kernel; for float32 compute the masters themselves
//   grad_acc   the optimizer's float32 gradient buffer: sums over the micro-batches of a step,
//              zeroed by the update (one kernel); without accumulation (grad_accum 1) the micro
//              step writes it instead (no zero fill, and no read of zeros: 8 bytes a parameter less
//              per step, the weight gradients' kernels store their float32 results straight there)
//   m, v       AdamW's state
// Per step:
//   micro (x grad_accum)   loss_sum/T forward + backward; grad_acc[run] += float32(grad), or = with
//                          grad_accum 1 (a parameter's gradient is defined in every step or in
//                          none: the graph is the same each step)  [Jit "micro"]
//   update                 norm = |grad_acc| (one flat reduction); AdamW's m, v and p over the
//                          flat buffers and compute = cast(masters), one kernel of four outputs
//                          (schedule/multi_output.h; the clip scale applied inside); grad_acc = 0
//                          with accumulation: 2-4 kernels whatever the model [Jit "update"]
// where T = micro_batch * seq_len * grad_accum, so grad_acc ends as the gradient of the mean token
// loss of the whole step. The per-step AdamW numbers enter the update as an input tensor, so both
// captured steps replay with no scheduling (docs/jit.md); with jit off the same functions run eagerly.
//
// Data parallel (options.devices, docs/distributed.md): one replica of all of the above per device;
// each device runs the rows [g*M/n, (g+1)*M/n) of every micro-batch of M rows (g its position in the
// global device list of n devices). The update first sums grad_acc over all devices with one
// allreduce per bucket (a run of bucket_bytes of the flat gradient buffer: a few large transfers,
// not one per small tensor), once per step, not per micro-batch; every replica then clips and updates
// identically (the reduced gradients are bitwise equal), so the replicas never drift apart.
// Devices of other processes ("CPU:0@1") have stand-in replicas here: buffers of the same shapes
// that hold no memory. Every process builds the update for every replica, so all processes schedule
// the same graph and meet the allreduce's copies in the same order; each runs only its own
// devices' kernels, and the copies between processes go through the transport (runtime/transport.h).
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
  double clip = 1.0;                 // global gradient norm bound (0: no clipping)
  int64_t loss_chunk = 0;            // tokens per chunk of the head + loss (0: all at once)
  bool jit = true;
  // Data parallel: the global device list (every process's devices, "NAME@rank" for other
  // processes'; this process's first one must hold the model). Empty: the model's device alone.
  std::vector<std::string> devices;
  int64_t bucket_bytes = 32 << 20;  // gradient bytes per allreduce bucket
};

// A user error when the options are out of range (batch, sequence length or accumulation not
// positive, an unknown optimizer or compute dtype, a negative clip, loss chunk, momentum or weight
// decay, a bucket that is not positive); checks what needs no model, so a command can check before
// building one. TrainStep's constructor checks too.
void check_train_step_options(const TrainStepOptions& options);

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

  nn::Optimizer& optimizer();  // replica 0's; a user error for optimizer "none"
  // This process's replica k's masters (0: the caller's model's).
  const nn::ParamList& masters(size_t k = 0) const { return replicas_[local_.at(k)].masters; }
  size_t replicas() const { return local_.size(); }  // this process's devices
  const TrainStepOptions& options() const { return o_; }
  // Bytes of the captured steps' planned intermediates (0 before capture).
  size_t planned_bytes() const;
  // Kernels and copies the captured optimizer update replays per step (0 before capture).
  size_t update_items() const { return update_jit_ && update_jit_->captured() ? update_jit_->captured_items() : 0; }
  // After replica 0's masters or optimizer state were overwritten (checkpoint load): copy them to
  // the other replicas and recast the compute copies.
  void refresh_compute();
  // Zeroes the optimizer's state and step count (after warm-up steps at learning rate 0, which leave
  // the weights exactly as they were: the MLPerf driver compiles and captures before the clock).
  void reset_optimizer();

 private:
  // One device's copy of the model, its float32 masters and compute copies, gradient and loss sums
  // and optimizer. The first local replica holds the caller's model; a remote replica (another
  // process's device) has no model and stand-in tensors.
  struct Replica {
    std::string device;
    bool remote = false;
    int64_t rows_begin = 0;  // its rows of every micro-batch
    std::unique_ptr<Llama> owned;
    Llama* model = nullptr;
    nn::ParamList masters, compute;  // views of the optimizer's and of compute_flat (with an optimizer)
    Tensor compute_flat;             // bfloat16 compute with an optimizer: the buffer compute views
    Tensor loss_acc;    // float32 (1): the step's loss share of its rows (data parallel only)
    Tensor scalars;     // remote: stand-in of the optimizer's per-step scalars
    Tensor eval_loss;   // remote: stand-in of an eval batch's loss share (1)
    std::unique_ptr<nn::Optimizer> opt;
  };
  void init_replica(Replica& r);
  void init_remote_replica(Replica& r);
  void make_optimizer(Replica& r);
  void make_compute(Replica& r);
  bool parallel() const { return replicas_.size() > 1; }
  // Whether the micro step writes the step's sums (gradients, data-parallel loss) rather than adding
  // to sums the update zeroed: when there is one micro step per step.
  bool assign_sums() const { return o_.grad_accum == 1; }
  int64_t rows() const { return o_.micro_batch / static_cast<int64_t>(replicas_.size()); }
  Replica& first() { return replicas_[local_[0]]; }
  const Replica& first() const { return replicas_[local_[0]]; }
  Tensor upload(const int32_t* data, const Replica& r) const;
  std::vector<Tensor> inputs(const HostBatch& b) const;
  // Sums of xs[replica] over every replica (each a list of tensors, flattened into one float32
  // allreduce), as each replica sees them, split back into the shapes of xs.
  std::vector<std::vector<Tensor>> sum_over_devices(const std::vector<std::vector<Tensor>>& xs);
  std::vector<Tensor> micro_fn(const std::vector<Tensor>& in);
  std::vector<Tensor> update_fn(const std::vector<Tensor>& in);
  std::vector<Tensor> eval_fn(const std::vector<Tensor>& in);

  Llama& model_;
  TrainStepOptions o_;
  std::vector<Replica> replicas_;    // every device of the run, in global order
  std::vector<size_t> local_;        // this process's replicas
  std::vector<std::pair<int64_t, int64_t>> buckets_;  // runs of the flat gradient buffer per allreduce
  std::unique_ptr<Jit> micro_jit_, update_jit_, eval_jit_;
};

}  // namespace lg::llm
