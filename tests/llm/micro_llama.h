#pragma once
// The micro Llama configuration the training tests share: dim 32, 2 layers, 4/2 heads, ffn 48,
// vocab 64, sequences up to 16 (fast on INTERP).
#include <cstdint>
#include <vector>

#include "llm/llama_config.h"
#include "llm/synthetic.h"

namespace lg::llm::testing {

inline LlamaConfig micro_llama() {
  LlamaConfig c = llama_preset("tiny");
  c.name = "micro";
  c.dim = 32, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = 2, c.ffn_dim = 48, c.vocab_size = 64;
  c.max_seq_len = 16;
  return c;
}

// Batch k of b sequences of length s from the synthetic cycle over the micro vocabulary: tokens and
// next-token labels, row-major (b, s).
struct SyntheticBatch {
  std::vector<int32_t> tokens, labels;
};
inline SyntheticBatch synthetic_batch(int64_t k, int64_t b, int64_t s, uint64_t seed) {
  SyntheticSource src(64, s, seed, 64);
  SyntheticBatch d;
  std::vector<int32_t> w(static_cast<size_t>(s + 1));
  for (int64_t r = 0; r < b; r++) {
    src.read(static_cast<uint64_t>(k * b + r), w.data());
    d.tokens.insert(d.tokens.end(), w.begin(), w.end() - 1);
    d.labels.insert(d.labels.end(), w.begin() + 1, w.end());
  }
  return d;
}

}  // namespace lg::llm::testing
