#pragma once
// Progress lines of an MLPerf run for the person watching it (standard error): the MLPerf log says
// nothing between a block's start and its end, which is hundreds of steps in the real benchmark.
// One line when the model is built, one per warm-up step of init (the first compiles the step), the
// run's first training step, then at most one training line per `every_s` seconds, and one line per
// evaluation.
#include <cstdint>
#include <cstdio>

#include "llm/mlperf.h"

namespace lg::llm {

class MlperfProgressPrinter {
 public:
  // run: the run's number (of --runs); every_s <= 0 prints nothing.
  MlperfProgressPrinter(int run, const MlperfConfig& config, double every_s, std::FILE* out);
  void operator()(const MlperfProgress& p);

 private:
  int run_;
  int64_t warmup_steps_;
  double target_, every_s_;
  std::FILE* out_;
  // the last printed training line (or evaluation): s/step is measured from it
  int64_t mark_step_ = 0;
  double mark_s_ = 0;
  bool printed_train_ = false;
};

}  // namespace lg::llm
