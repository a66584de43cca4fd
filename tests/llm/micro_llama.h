#pragma once
// The micro Llama configuration the training tests share: dim 32, 2 layers, 4/2 heads, ffn 48,
// vocab 64, sequences up to 16 (fast on INTERP).
#include "llm/llama_config.h"

namespace lg::llm::testing {

inline LlamaConfig micro_llama() {
  LlamaConfig c = llama_preset("tiny");
  c.name = "micro";
  c.dim = 32, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = 2, c.ffn_dim = 48, c.vocab_size = 64;
  c.max_seq_len = 16;
  return c;
}

}  // namespace lg::llm::testing
