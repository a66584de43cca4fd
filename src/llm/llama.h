#pragma once
// Llama 3.1 (../shared/spec/MLPERF_LLAMA31_8B.md): token embedding, n_layers pre-norm blocks of
// grouped-query attention with rotary positions (Llama 3.1 frequency scaling) and a SwiGLU MLP, a
// final RMSNorm and an untied output head; no biases, no dropout.
//
// Parameters are float32 and named as in Hugging Face checkpoints (model.embed_tokens.weight,
// model.layers.<i>.self_attn.q_proj.weight, ..., lm_head.weight), with the Hugging Face rotary layout
// (each head's dimensions split into halves that rotate together, "rotate_half"). The forward pass
// computes in the dtype of the bound embedding table: bind() bfloat16 copies (nn::MixedPrecision)
// for bf16 compute; norms, softmax and the loss run in float32 either way.
#include <map>
#include <vector>

#include "llm/llama_config.h"
#include "nn/init.h"
#include "nn/layers.h"

namespace lg::llm {

// Rotary tables for positions 0..seq-1: cos and sin of position * inv_freq[i], each (seq, head_dim)
// with the head_dim/2 frequencies repeated twice (the rotate_half layout), computed in float64 on
// the host and stored as float32.
std::vector<double> rope_inv_freq(const LlamaConfig& c);  // head_dim/2 entries, scaled for Llama 3.1

// The SwiGLU MLP's product silu(gate) * up, gate and up (..., ffn) in the compute dtype. SiLU runs
// in float32 and is rounded once to the compute dtype, as PyTorch's F.silu does for 16-bit inputs
// (composed of bfloat16 ops it would round after each of its five steps: about 3x the kernel time,
// forward and backward, on the CPU, and up to 8 ulps of error); the product is rounded once more.
Tensor swiglu(const Tensor& gate, const Tensor& up);

struct LlamaBlock {
  nn::RMSNorm attn_norm, ffn_norm;
  nn::Linear wq, wk, wv, wo;  // q (H*hd, d), k/v (KV*hd, d), o (d, H*hd)
  nn::Linear w1, w2, w3;      // gate (ffn, d), down (d, ffn), up (ffn, d)
  explicit LlamaBlock(const LlamaConfig& c);
  nn::ParamList params() const;  // Hugging Face names below "model.layers.<i>."
  void bind(const nn::ParamList& p);
};

class Llama {
 public:
  // Random MLPerf initialization, drawn from Tensor's generator in parameter order: normal with
  // init_std, and init_std/sqrt(2*n_layers) for the attention output projection and w2; norm gains 1.
  // The parameters are realized together at the end (nn::init::Deferred).
  explicit Llama(LlamaConfig config);

  const LlamaConfig& config() const { return cfg_; }
  DType compute_dtype() const { return tok_embeddings.weight.dtype(); }

  // tokens: integer (B, S) with S <= max_seq_len -> the final-normed hidden states (B, S, dim).
  Tensor hidden(const Tensor& tokens) const;
  // The head applied to hidden states: (..., dim) -> logits (..., vocab) in the compute dtype.
  Tensor head(const Tensor& hidden) const;
  Tensor logits(const Tensor& tokens) const { return head(hidden(tokens)); }
  // Mean token cross-entropy (float32 scalar) of the next-token labels (B, S). The head and the
  // loss run over chunks of at most loss_chunk tokens (0: one chunk), so the float32 logits of at
  // most one chunk are live at a time.
  Tensor loss(const Tensor& tokens, const Tensor& labels, int64_t loss_chunk = 0) const;
  // Sum (not mean) of the token cross-entropies, for averaging over micro-batches and evals.
  Tensor loss_sum(const Tensor& tokens, const Tensor& labels, int64_t loss_chunk = 0) const;

  nn::ParamList params() const;
  // Uses other tensors of the same names and shapes (e.g. bfloat16 compute copies).
  void bind(const nn::ParamList& p);

  nn::Embedding tok_embeddings;
  std::vector<LlamaBlock> layers;
  nn::RMSNorm norm;
  nn::Linear output;

 private:
  // Builds the layers inside `params`' scope, then realizes them all.
  Llama(LlamaConfig config, nn::init::Deferred&& params);
  Tensor attention(const LlamaBlock& b, const Tensor& x, const Tensor& cos, const Tensor& sin) const;
  // The rotary tables for sequence length seq, uploaded once and cached.
  struct PositionTables {
    Tensor cos, sin;  // (seq, hd) float32
  };
  const PositionTables& tables(int64_t seq) const;

  LlamaConfig cfg_;
  mutable std::map<int64_t, PositionTables> tables_;
};

}  // namespace lg::llm
