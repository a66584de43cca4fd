#pragma once
// Timing for the kernel benchmarks: warm-up runs, then the median of timed runs (steady_clock).
#include <functional>

namespace lg::bench {

struct Timing {
  double median_s = 0;  // median wall time of one timed run
  int runs = 0;         // timed runs behind the median
};

// Runs fn `warmup` times untimed, then up to `repeats` timed times; stops early (after at least one
// timed run) once the timed runs add up to more than budget_s, so slow kernels do not take minutes.
Timing time_runs(const std::function<void()>& fn, int warmup, int repeats, double budget_s);

}  // namespace lg::bench
