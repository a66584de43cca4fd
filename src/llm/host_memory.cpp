#include "llm/host_memory.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "runtime/device.h"

namespace lg::llm {

int64_t state_bytes_per_param(const TrainStepOptions& step) {
  int64_t bytes = 4;  // the float32 master
  if (step.optimizer == "adamw") bytes += 12;
  if (step.optimizer == "sgd") bytes += 4;
  if (step.compute != dtypes::float32) bytes += 2;
  return bytes;
}

std::optional<int64_t> host_available_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key, unit;
  int64_t value = 0;
  while (f >> key >> value) {
    std::getline(f, unit);
    if (key == "MemAvailable:") return value * 1024;  // the kernel reports kB
  }
  return std::nullopt;
}

static std::string gib(double bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return s;
}

void check_fits_host_memory(const LlamaConfig& c, const TrainStepOptions& step, int64_t replicas,
                            const std::string& device, int64_t available) {
  const int64_t per_param = state_bytes_per_param(step);
  const double need = static_cast<double>(c.num_params()) * static_cast<double>(per_param * replicas);
  if (need <= static_cast<double>(available)) return;
  std::ostringstream what;
  what << "float32 weights";
  if (step.optimizer == "adamw") what << ", their gradients and AdamW's two moments";
  if (step.optimizer == "sgd") what << " and their gradients";
  if (step.compute != dtypes::float32) what << ", and the bf16 compute copy";
  char params[32];
  std::snprintf(params, sizeof params, "%.2f B", static_cast<double>(c.num_params()) / 1e9);
  LG_USER_CHECK(
      false, "model ", c.name, " (", params, " parameters) needs at least ", gib(need), " of host memory on ",
      device, replicas > 1 ? str(" (", replicas, " replicas)") : std::string(), " for its ", what.str(), " (",
      per_param, " bytes a parameter, before activations); this machine has ",
      gib(static_cast<double>(available)),
      " available (MemAvailable, /proc/meminfo): choose a smaller --model, cut this one (--set layers=N), "
      "or train on a GPU (DEVICE=CUDA)");
}

void check_host_memory_for(const LlamaConfig& c, const TrainStepOptions& step,
                           const std::string& model_device) {
  // this process's replicas: the data-parallel devices without "@rank", else the model's device
  int64_t replicas = 0;
  for (const std::string& d : step.devices) replicas += d.find('@') == std::string::npos;
  replicas = std::max<int64_t>(replicas, 1);
  Device& dev = get_device(model_device);
  if (!dev.allocator().host_memory() || !dev.runs_kernels()) return;
  if (std::optional<int64_t> available = host_available_bytes())
    check_fits_host_memory(c, step, replicas, model_device, *available);
}

}  // namespace lg::llm
