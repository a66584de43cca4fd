#pragma once
// Llama checkpoints in Hugging Face layout: a directory with config.json and either
// model.safetensors or shards listed by model.safetensors.index.json ({"weight_map": {name: file}}).
// Tensor names are Hugging Face's (llama.h); the q/k projections are stored in the Hugging Face
// rotary layout, which is the layout lazygrad's rotate_half attention uses, so no permutation is
// needed. Stored dtypes (F32, BF16, F16) are converted to the float32 masters on load.
#include <string>

#include "llm/llama.h"

namespace lg::llm {

// Reads config.json and the weights. Every parameter of the model must be present with its shape
// (a user error names the missing or mis-shaped tensor and the file); extra tensors (e.g. rotary
// caches some exporters write) are ignored.
Llama load_hf_model(const std::string& dir);
// The configuration of the checkpoint in `dir` (its config.json) without its weights.
LlamaConfig load_hf_config(const std::string& dir);
// Loads the weights of `dir` into an existing model of the same configuration.
void load_hf_weights(Llama& model, const std::string& dir);
// Writes config.json and model.safetensors (float32) into dir (created if needed), each atomically.
void save_hf_model(const Llama& model, const std::string& dir);

}  // namespace lg::llm
