#pragma once
// Training checkpoints: a directory per save,
//   <root>/step_00000012/model.safetensors       the model's parameters (their own dtypes)
//                        optimizer.safetensors   the optimizer's state tensors (Optimizer::state())
//                        manifest.json           step, optimizer step count and LR, RNG position,
//                                                data position, user fields; written last
// A save writes everything into "<root>/.tmp.step_..." (each file fsynced), then renames that
// directory to its final name and fsyncs <root>: a save interrupted at any point leaves the previous
// checkpoints untouched, and a directory without a manifest is never loaded. After a save only the
// newest keep_last checkpoints are kept.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "nn/optim.h"

namespace lg::nn {

// What a checkpoint records besides tensors.
struct TrainProgress {
  int64_t step = 0;           // completed training steps
  int64_t data_position = 0;  // where the data pipeline resumes (its own meaning, e.g. sample index)
  RngPosition rng;            // Tensor's generator position (Tensor::rng_position())
  std::map<std::string, std::string> extra;  // free-form fields (run name, config hash, ...)
};

class CheckpointManager {
 public:
  CheckpointManager(std::string root, int keep_last = 3);
  // Saves model, optimizer state and progress as checkpoint `progress.step`; returns its directory.
  std::string save(const ParamList& model, const Optimizer& opt, const TrainProgress& progress);
  // The directory of the newest complete checkpoint, if any.
  std::optional<std::string> latest() const;
  // Every complete checkpoint directory, oldest first.
  std::vector<std::string> list() const;
  // Restores model parameters and optimizer state in place (one realize), the optimizer's step count
  // and LR, and Tensor's RNG position; returns the saved progress. Names, dtypes and shapes must
  // match (a user error naming the tensor otherwise).
  static TrainProgress load(const std::string& dir, ParamList& model, Optimizer& opt);

 private:
  std::string root_;
  int keep_last_;
};

}  // namespace lg::nn
