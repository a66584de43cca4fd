#include "nn/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "base/error.h"

namespace lg::nn {

static double warmup_lr(double base, int64_t s, int64_t warmup) {
  return base * static_cast<double>(s + 1) / static_cast<double>(warmup + 1);
}

LRSchedule warmup_cosine(double base, double end, int64_t warmup, int64_t total) {
  LG_USER_CHECK(warmup >= 0 && total > warmup, "warmup_cosine: need 0 <= warmup < total, got warmup=", warmup,
                " total=", total);
  return [=](int64_t s) {
    if (s <= warmup) return warmup_lr(base, s, warmup);
    double frac = static_cast<double>(std::min(s, total) - warmup) / static_cast<double>(total - warmup);
    return end + (base - end) * 0.5 * (1 + std::cos(std::numbers::pi * frac));
  };
}

LRSchedule constant_lr(double lr) {
  return [=](int64_t) { return lr; };
}

LRSchedule warmup_stable_decay(double base, double end, int64_t warmup, int64_t decay_start,
                               int64_t decay_steps) {
  LG_USER_CHECK(warmup >= 0 && decay_start > warmup && decay_steps > 0,
                "warmup_stable_decay: need 0 <= warmup < decay_start and decay_steps > 0, got warmup=",
                warmup, " decay_start=", decay_start, " decay_steps=", decay_steps);
  return [=](int64_t s) {
    if (s <= warmup) return warmup_lr(base, s, warmup);
    if (s < decay_start) return base;
    double frac = std::min(1.0, static_cast<double>(s - decay_start) / static_cast<double>(decay_steps));
    return base + (end - base) * frac;
  };
}

}  // namespace lg::nn
