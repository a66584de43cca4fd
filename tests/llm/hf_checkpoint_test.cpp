#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/user_error.h"
#include "llm/data_paths.h"
#include "llm/hf_checkpoint.h"
#include "nn/safetensors.h"

namespace lg::llm {
namespace {

using testing_util::error_of;
namespace fs = std::filesystem;

LlamaConfig micro() {
  LlamaConfig c = llama_preset("tiny");
  c.name = "micro";
  c.dim = 16, c.n_layers = 2, c.n_heads = 2, c.n_kv_heads = 1, c.ffn_dim = 24, c.vocab_size = 40;
  c.max_seq_len = 8;
  return c;
}

Tensor tokens() { return Tensor::from_vector(std::vector<int32_t>{1, 5, 9, 13}, {1, 4}); }

TEST(HfCheckpoint, SaveThenLoadGivesTheSameModel) {
  auto dir = testing::fresh_temp_dir("hf_roundtrip");
  Tensor::manual_seed(41);
  Llama a(micro());
  save_hf_model(a, dir.string());
  EXPECT_TRUE(fs::exists(dir / "config.json"));
  Tensor::manual_seed(42);
  Llama b = load_hf_model(dir.string());
  EXPECT_EQ(b.config().dim, 16);
  EXPECT_EQ(b.config().n_kv_heads, 1);
  EXPECT_EQ(a.logits(tokens()).to_doubles(), b.logits(tokens()).to_doubles());
  fs::remove_all(dir);
}

// Shards listed by model.safetensors.index.json, stored in bfloat16: loaded as float32.
TEST(HfCheckpoint, LoadsBfloat16Shards) {
  auto dir = testing::fresh_temp_dir("hf_shards");
  Tensor::manual_seed(43);
  Llama a(micro());
  save_hf_model(a, dir.string());
  fs::remove(dir / "model.safetensors");
  nn::ParamList first, second;
  nlohmann::json map;
  size_t i = 0;
  for (const auto& [name, p] : a.params()) {
    (i++ % 2 ? second : first).add(name, p.cast(dtypes::bfloat16));
    map[name] = i % 2 ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  nn::save_safetensors((dir / "model-00001-of-00002.safetensors").string(), first);
  nn::save_safetensors((dir / "model-00002-of-00002.safetensors").string(), second);
  std::ofstream((dir / "model.safetensors.index.json").string()) << nlohmann::json{{"weight_map", map}}.dump();
  Llama b = load_hf_model(dir.string());
  for (const auto& [name, p] : a.params()) {
    Tensor got = b.params().at(name);
    EXPECT_EQ(got.dtype(), dtypes::float32);
    EXPECT_EQ(got.to_doubles(), p.cast(dtypes::bfloat16).to_doubles()) << name;
  }
  fs::remove_all(dir);
}

TEST(HfCheckpoint, MissingOrMisshapenTensorsAreUserErrors) {
  auto dir = testing::fresh_temp_dir("hf_bad");
  Tensor::manual_seed(44);
  Llama a(micro());
  EXPECT_NE(error_of([&] { load_hf_model(dir.string()); }).find("config.json"), std::string::npos);
  save_hf_model(a, dir.string());
  nn::ParamList some;
  for (const auto& [name, p] : a.params()) some.add(name, name == "lm_head.weight" ? Tensor::zeros({41, 16}) : p);
  nn::save_safetensors((dir / "model.safetensors").string(), some);
  Llama b(micro());
  std::string e = error_of([&] { load_hf_weights(b, dir.string()); });
  EXPECT_NE(e.find("lm_head.weight"), std::string::npos) << e;
  EXPECT_NE(e.find("(41, 16)"), std::string::npos) << e;
  some = nn::ParamList();
  for (const auto& [name, p] : a.params())
    if (name != "model.norm.weight") some.add(name, p);
  nn::save_safetensors((dir / "model.safetensors").string(), some);
  e = error_of([&] { load_hf_weights(b, dir.string()); });
  EXPECT_NE(e.find("model.norm.weight"), std::string::npos) << e;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lg::llm
