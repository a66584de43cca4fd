#include "llm/synthetic.h"

#include <algorithm>
#include <random>
#include <unordered_map>

#include "base/error.h"

namespace lg::llm {

// splitmix64: a stateless hash of (seed, k) for the start of sample k.
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

SyntheticSource::SyntheticSource(int64_t vocab, int64_t seq_len, uint64_t seed, int64_t period,
                                 uint64_t first_sample)
    : seq_len_(seq_len), seed_(seed), first_(first_sample) {
  LG_USER_CHECK(vocab > 1 && seq_len > 0 && period > 1, "synthetic data: vocab (", vocab, ") and period (", period,
                ") must exceed 1 and seq_len (", seq_len, ") must be positive");
  period = std::min(period, vocab);
  // period distinct ids: a partial Fisher-Yates over [0, vocab) with a sparse swap map.
  std::mt19937_64 rng(mix(seed ^ 0x5eed));
  std::vector<int32_t> ids;
  std::unordered_map<int64_t, int64_t> swapped;
  auto at = [&](int64_t i) {
    auto it = swapped.find(i);
    return it == swapped.end() ? i : it->second;
  };
  for (int64_t i = 0; i < period; i++) {
    int64_t j = i + static_cast<int64_t>(rng() % static_cast<uint64_t>(vocab - i));
    int64_t vi = at(i), vj = at(j);
    swapped[j] = vi;
    ids.push_back(static_cast<int32_t>(vj));
  }
  cycle_ = std::move(ids);
}

void SyntheticSource::read(uint64_t k, int32_t* out) const {
  uint64_t n = cycle_.size();
  uint64_t start = mix(seed_ * 0x100000001b3ULL + first_ + k) % n;
  for (int64_t t = 0; t <= seq_len_; t++) out[t] = cycle_[(start + static_cast<uint64_t>(t)) % n];
}

}  // namespace lg::llm
