#pragma once
// Synthetic training data for throughput runs (--synthetic): no files. Sample k is a window of
// seq_len+1 tokens of one fixed random cycle of `period` distinct token ids drawn from [0, vocab),
// starting at a position drawn from (seed, k). The next token is a function of the current one, so
// a model can learn it (the loss falls from ln(vocab) toward 0), while the token ids still range
// over the whole vocabulary, touching every row of the embedding and head as real text does.
#include <cstdint>
#include <vector>

#include "llm/sampler.h"

namespace lg::llm {

class SyntheticSource : public WindowSource {
 public:
  // period: length of the token cycle (at most vocab). Sources of the same (vocab, seed, period)
  // share the cycle; first_sample shifts the sample numbers (an eval set uses other samples of the
  // same cycle).
  SyntheticSource(int64_t vocab, int64_t seq_len, uint64_t seed, int64_t period = 4096, uint64_t first_sample = 0);
  int64_t seq_len() const override { return seq_len_; }
  uint64_t num_samples() const override { return UINT64_MAX; }
  void read(uint64_t k, int32_t* out) const override;

 private:
  int64_t seq_len_;
  uint64_t seed_, first_;
  std::vector<int32_t> cycle_;
};

}  // namespace lg::llm
