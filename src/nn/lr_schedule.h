#pragma once
// Learning-rate schedules: plain functions from the 0-based step index s to the learning rate.
#include <cstdint>
#include <functional>

namespace lg::nn {

using LRSchedule = std::function<double(int64_t step)>;

// The MLPerf llama31_8b schedule (shared/spec/MLPERF_LLAMA31_8B.md), W = warmup steps, T = total:
//   s <= W: base * (s+1) / (W+1)
//   s >  W: end + (base-end) * 0.5 * (1 + cos(pi * (s-W) / (T-W)))      (s beyond T stays at end)
LRSchedule warmup_cosine(double base, double end, int64_t warmup, int64_t total);
LRSchedule constant_lr(double lr);
// Warmup-stable-decay: linear warmup as above for s <= W, base until decay_start, then linear decay
// to end over decay_steps (end afterwards).
LRSchedule warmup_stable_decay(double base, double end, int64_t warmup, int64_t decay_start,
                               int64_t decay_steps);

}  // namespace lg::nn
