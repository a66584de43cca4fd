// MlperfProgressPrinter: which events become lines, their text, the throttle and s/step between
// printed lines (an evaluation's time left out).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "llm/mlperf_progress.h"

namespace lg::llm {
namespace {

using Phase = MlperfProgress::Phase;

// The text the printer writes for the events, with `every_s` between training lines.
std::string printed(const std::vector<MlperfProgress>& events, double every_s) {
  char* buf = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buf, &size);
  MlperfConfig c;
  c.warmup_steps = 2, c.target = 7.8;
  MlperfProgressPrinter print(1, c, every_s, out);
  for (const MlperfProgress& e : events) print(e);
  std::fclose(out);
  std::string text(buf, size);
  std::free(buf);
  return text;
}

const std::vector<MlperfProgress> kRun = {
    {Phase::Init, 0, 0, 0, 0, 2.5},
    {Phase::Init, 1, 0, 0, 0, 14.0},
    {Phase::Init, 2, 0, 0, 0, 15.0},
    {Phase::Train, 1, 16, 64, 11.5, 1.0},   // the first step: always a line
    {Phase::Train, 2, 32, 64, 11.0, 2.0},   // 1 s after it: quiet
    {Phase::Train, 3, 48, 64, 10.5, 3.0},   // quiet
    {Phase::Train, 4, 64, 64, 10.25, 4.5},  // 3.5 s after the last line: printed, 3.5 s over 3 steps
    {Phase::Eval, 4, 64, 0, 7.75, 6.5},
    {Phase::Train, 5, 80, 128, 9.0, 7.5},  // 1 s after the eval: quiet
    {Phase::Train, 6, 96, 128, 8.5, 9.5},  // 3 s after the eval: 1.5 s/step, the eval left out
};

TEST(MlperfProgress, LinesForInitTheFirstStepThrottledStepsAndEvals) {
  EXPECT_EQ(printed(kRun, 3.0),
            "run 1 init: model built in 2.5 s; compiling the training and eval steps (untimed)\n"
            "run 1 init: warm-up step 1 of 2 done, 14.0 s (untimed)\n"
            "run 1 init: warm-up step 2 of 2 done, 15.0 s (untimed)\n"
            "run 1: step 1, 16 sequences, loss 11.5000, 1.000 s/step; eval at 64 sequences\n"
            "run 1: step 4, 64 sequences, loss 10.2500, 1.167 s/step; eval at 64 sequences\n"
            "run 1: eval at 64 sequences: 7.7500 (target 7.800, reached), 6.5 s into the run\n"
            "run 1: step 6, 96 sequences, loss 8.5000, 1.500 s/step; eval at 128 sequences\n");
}

TEST(MlperfProgress, ZeroSecondsPrintsNothing) { EXPECT_EQ(printed(kRun, 0), ""); }

TEST(MlperfProgress, ShortIntervalsPrintEveryStep) {
  std::string text = printed(kRun, 1e-9);
  size_t lines = 0;
  for (char ch : text) lines += ch == '\n';
  EXPECT_EQ(lines, kRun.size());
  EXPECT_NE(text.find("run 1: eval at 64 sequences: 7.7500 (target 7.800, reached)"), std::string::npos);
}

}  // namespace
}  // namespace lg::llm
