#include "llm/mlperf_progress.h"

namespace lg::llm {

MlperfProgressPrinter::MlperfProgressPrinter(int run, const MlperfConfig& config, double every_s,
                                             std::FILE* out)
    : run_(run), warmup_steps_(config.warmup_steps), target_(config.target), every_s_(every_s), out_(out) {}

void MlperfProgressPrinter::operator()(const MlperfProgress& p) {
  if (every_s_ <= 0) return;
  using Phase = MlperfProgress::Phase;
  const long long step = p.step, samples = p.samples;
  switch (p.phase) {
    case Phase::Init:
      if (p.step == 0) {
        std::fprintf(out_,
                     "run %d init: model built in %.1f s; compiling the training and eval steps (untimed)\n",
                     run_, p.seconds);
        break;
      }
      std::fprintf(out_, "run %d init: warm-up step %lld of %lld done, %.1f s (untimed)\n", run_, step,
                   static_cast<long long>(warmup_steps_), p.seconds);
      break;
    case Phase::Train: {
      if (printed_train_ && p.seconds - mark_s_ < every_s_) return;
      double per_step =
          p.step > mark_step_ ? (p.seconds - mark_s_) / static_cast<double>(p.step - mark_step_) : 0;
      std::fprintf(out_,
                   "run %d: step %lld, %lld sequences, loss %.4f, %.3f s/step; eval at %lld sequences\n",
                   run_, step, samples, p.loss, per_step, static_cast<long long>(p.next_eval));
      printed_train_ = true;
      mark_step_ = p.step, mark_s_ = p.seconds;
      break;
    }
    case Phase::Eval:
      std::fprintf(out_, "run %d: eval at %lld sequences: %.4f (target %.3f%s), %.1f s into the run\n", run_,
                   samples, p.loss, target_, p.loss <= target_ ? ", reached" : "", p.seconds);
      mark_step_ = p.step, mark_s_ = p.seconds;  // the next s/step leaves the evaluation out
      break;
  }
  std::fflush(out_);
}

}  // namespace lg::llm
