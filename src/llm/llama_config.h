#pragma once
// Llama 3.1 model configurations: the published sizes (8B, 70B, 405B), small presets for a 2-core
// machine, Hugging Face config.json in and out, and "key=value" overrides for command-line flags.
// Every field is checked by validate(): a bad value is a user error naming the field and the fix.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lg::llm {

// Llama 3.1's RoPE frequency scaling (Hugging Face "rope_scaling" with rope_type "llama3"): for a
// base frequency f with wavelength w = 2*pi/f,
//   w < original/high_freq_factor  -> f                      (short wavelengths kept)
//   w > original/low_freq_factor   -> f / factor             (long wavelengths stretched)
//   otherwise, with s = (original/w - low) / (high - low):  (1-s) * f/factor + s * f
struct RopeScaling {
  bool enabled = true;
  double factor = 8, low_freq_factor = 1, high_freq_factor = 4;
  int64_t original_context = 8192;
};

struct LlamaConfig {
  std::string name = "custom";
  int64_t dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, ffn_dim = 0;
  int64_t vocab_size = 128256;
  int64_t max_seq_len = 8192;
  double norm_eps = 1e-5;
  double rope_theta = 500000;
  RopeScaling rope_scaling;
  double init_std = 0.02;  // MLPerf: 0.02; attention output and w2 get init_std/sqrt(2*n_layers)

  int64_t head_dim() const { return dim / n_heads; }
  // A user error naming the first inconsistent field (sizes not positive, dim not divisible by
  // heads, heads not divisible by kv heads, odd head dim, ...).
  void validate() const;

  // Parameter counts: all parameters; the matmul parameters N_mm of ../bench FLOPs (every matmul
  // weight including the head, excluding the embedding table and the norm gains).
  int64_t num_params() const;
  int64_t matmul_params() const;
  // Training FLOPs per token at sequence length seq: 6*N_mm + 12*L*d*seq (full attention, the
  // convention of bench/BASELINE.md and of MFU reports).
  double train_flops_per_token(int64_t seq) const;

  // Sets one field from text ("dim", "layers"/"n_layers", "heads", "kv_heads", "ffn_dim", "vocab",
  // "max_seq_len", "norm_eps", "rope_theta", "rope_scaling" (on/off), "init_std"); a user error
  // for an unknown key or a value that does not parse. Does not validate().
  void set(const std::string& key, const std::string& value);
  std::string summary() const;  // one line: name, sizes, parameter count
};

// Preset names: "llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "tiny" (d 256, 4 layers, 8/2 heads,
// ffn 768), "small" (d 512, 8 layers, 8/2 heads, ffn 1536); all with vocabulary 128,256.
std::vector<std::string> llama_preset_names();
// A preset by name; a user error listing the names otherwise.
LlamaConfig llama_preset(const std::string& name);
// A preset name, a Hugging Face config.json, or a lazygrad JSON config file ({"preset": name,
// field: value...} using the keys of set()).
LlamaConfig load_llama_config(const std::string& name_or_path);

// Hugging Face LlamaConfig JSON (config.json of a Llama checkpoint) <-> LlamaConfig. Reading
// requires hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, vocab_size;
// a user error names a missing or mistyped field and the file (`source`).
LlamaConfig llama_config_from_hf(const nlohmann::json& j, const std::string& source);
nlohmann::json llama_config_to_hf(const LlamaConfig& c);

}  // namespace lg::llm
