#include "bench/timing.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace lg::bench {

Timing time_runs(const std::function<void()>& fn, int warmup, int repeats, double budget_s) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < warmup; i++) fn();
  std::vector<double> seconds;
  double total = 0;
  for (int i = 0; i < std::max(1, repeats) && (seconds.empty() || total < budget_s); i++) {
    auto t0 = clock::now();
    fn();
    seconds.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    total += seconds.back();
  }
  std::sort(seconds.begin(), seconds.end());
  size_t n = seconds.size();
  double median = n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  return {median, static_cast<int>(n)};
}

}  // namespace lg::bench
