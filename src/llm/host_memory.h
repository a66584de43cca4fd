#pragma once
// Whether a training run's lasting state fits in the host's memory, checked before the model is
// built: a model too large for the machine would otherwise be killed by the kernel's OOM killer
// part way through initialization, with no word of why.
#include <cstdint>
#include <optional>
#include <string>

#include "llm/llama_config.h"
#include "llm/train_step.h"

namespace lg::llm {

// Bytes per parameter a training run keeps for the whole run, before any activation: the float32
// master, then by optimizer its float32 gradient sum and state (adamw: gradient, m, v: 12; sgd
// without momentum: gradient, 4; none: 0), and a 2-byte compute copy for bf16 compute.
int64_t state_bytes_per_param(const TrainStepOptions& step);

// MemAvailable of /proc/meminfo in bytes; nullopt where it cannot be read.
std::optional<int64_t> host_available_bytes();

// A user error when `replicas` copies of the model's lasting state (state_bytes_per_param each
// parameter) exceed `available` bytes: it names the model, the bytes it needs, the bytes there are,
// and what to do. `device` is where it would live (for the message).
void check_fits_host_memory(const LlamaConfig& c, const TrainStepOptions& step, int64_t replicas,
                            const std::string& device, int64_t available);

// check_fits_host_memory for the devices the run trains on, when they keep their buffers in host
// memory and run kernels (CPU, INTERP, CUDACHECK; not a GPU, not CUDANULL), against
// host_available_bytes(); nothing when that cannot be read.
void check_host_memory_for(const LlamaConfig& c, const TrainStepOptions& step,
                           const std::string& model_device);

}  // namespace lg::llm
