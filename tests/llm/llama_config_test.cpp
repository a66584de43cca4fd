#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "common/user_error.h"
#include "llm/llama.h"
#include "llm/llama_config.h"
#include "llm/data_paths.h"

namespace lg::llm {
namespace {

using testing_util::error_of;

TEST(LlamaConfig, PresetsHaveThePublishedSizes) {
  LlamaConfig c = llama_preset("llama3.1-8b");
  EXPECT_EQ(c.dim, 4096);
  EXPECT_EQ(c.n_layers, 32);
  EXPECT_EQ(c.n_heads, 32);
  EXPECT_EQ(c.n_kv_heads, 8);
  EXPECT_EQ(c.ffn_dim, 14336);
  EXPECT_EQ(c.vocab_size, 128256);
  EXPECT_EQ(c.head_dim(), 128);
  // spec: about 8.03B parameters, 7.505e9 matmul parameters
  EXPECT_NEAR(static_cast<double>(c.num_params()), 8.03e9, 0.01e9);
  EXPECT_NEAR(static_cast<double>(c.matmul_params()), 7.505e9, 0.001e9);
  // spec: 57.9 GFLOP per token at 8192 counting full attention
  EXPECT_NEAR(c.train_flops_per_token(8192) / 1e9, 57.9, 0.1);
  EXPECT_EQ(llama_preset("llama3.1-70b").n_layers, 80);
  EXPECT_EQ(llama_preset("llama3.1-405b").dim, 16384);
  LlamaConfig tiny = llama_preset("tiny");
  EXPECT_EQ(tiny.dim, 256);
  EXPECT_EQ(tiny.n_layers, 4);
  EXPECT_EQ(tiny.n_kv_heads, 2);
  EXPECT_EQ(tiny.ffn_dim, 768);
  LlamaConfig small = llama_preset("small");
  EXPECT_EQ(small.dim, 512);
  EXPECT_EQ(small.ffn_dim, 1536);
  EXPECT_EQ(small.n_layers, 8);
}

TEST(LlamaConfig, FlopsOfBaselineConfigA) {
  // bench/BASELINE.md config A (tiny, vocab 8192, seq 256): per layer q,o 256x256, k,v 64x256,
  // gate/up/down 768x256 = 753664; head 8192x256. BASELINE.md: 69 GFLOP per step of 8 x 256 tokens.
  LlamaConfig a = llama_preset("tiny");
  a.vocab_size = 8192;
  EXPECT_EQ(a.matmul_params(), 4 * 753664 + 2097152);
  EXPECT_DOUBLE_EQ(a.train_flops_per_token(256), 6.0 * (4 * 753664 + 2097152) + 12.0 * 4 * 256 * 256);
  EXPECT_NEAR(a.train_flops_per_token(256) * 8 * 256 / 1e9, 69, 0.5);
}

TEST(LlamaConfig, UnknownPresetAndBadFieldsAreUserErrors) {
  EXPECT_NE(error_of([] { llama_preset("llama2"); }).find("tiny"), std::string::npos);
  LlamaConfig c = llama_preset("tiny");
  c.n_heads = 6;
  EXPECT_NE(error_of([&] { c.validate(); }).find("divisible"), std::string::npos);
  c = llama_preset("tiny");
  c.n_kv_heads = 3;
  EXPECT_NE(error_of([&] { c.validate(); }).find("kv_heads"), std::string::npos);
  EXPECT_NE(error_of([&] { c.set("layers", "two"); }).find("integer"), std::string::npos);
  EXPECT_NE(error_of([&] { c.set("colour", "1"); }).find("unknown model option"), std::string::npos);
  c.set("layers", "1");
  c.set("norm_eps", "1e-6");
  c.set("rope_scaling", "off");
  EXPECT_EQ(c.n_layers, 1);
  EXPECT_DOUBLE_EQ(c.norm_eps, 1e-6);
  EXPECT_FALSE(c.rope_scaling.enabled);
}

TEST(LlamaConfig, HuggingFaceJsonRoundTrips) {
  LlamaConfig c = llama_preset("small");
  c.vocab_size = 1000;
  nlohmann::json j = llama_config_to_hf(c);
  EXPECT_EQ(j["num_key_value_heads"], 2);
  EXPECT_EQ(j["rope_scaling"]["rope_type"], "llama3");
  LlamaConfig back = llama_config_from_hf(j, "x/config.json");
  EXPECT_EQ(back.dim, c.dim);
  EXPECT_EQ(back.n_layers, c.n_layers);
  EXPECT_EQ(back.n_kv_heads, c.n_kv_heads);
  EXPECT_EQ(back.vocab_size, 1000);
  EXPECT_EQ(back.rope_scaling.original_context, 8192);
  EXPECT_DOUBLE_EQ(back.rope_theta, 500000);
  j.erase("hidden_size");
  EXPECT_NE(error_of([&] { llama_config_from_hf(j, "x/config.json"); }).find("hidden_size"), std::string::npos);
  j = llama_config_to_hf(c);
  j["rope_scaling"]["rope_type"] = "yarn";
  EXPECT_NE(error_of([&] { llama_config_from_hf(j, "x/config.json"); }).find("yarn"), std::string::npos);
}

TEST(LlamaConfig, LoadsPresetsHfFilesAndLazygradFiles) {
  auto dir = testing::fresh_temp_dir("llama_config");
  std::ofstream((dir / "config.json").string()) << llama_config_to_hf(llama_preset("tiny")).dump();
  EXPECT_EQ(load_llama_config(dir.string()).dim, 256);  // a directory holding config.json
  std::ofstream((dir / "mine.json").string()) << R"({"preset": "small", "layers": 2, "vocab": 512})";
  LlamaConfig m = load_llama_config((dir / "mine.json").string());
  EXPECT_EQ(m.dim, 512);
  EXPECT_EQ(m.n_layers, 2);
  EXPECT_EQ(m.vocab_size, 512);
  std::ofstream((dir / "bad.json").string()) << R"({"preset": "small", "layers": "many"})";
  EXPECT_NE(error_of([&] { load_llama_config((dir / "bad.json").string()); }).find("bad.json"), std::string::npos);
  std::ofstream((dir / "broken.json").string()) << "{";
  EXPECT_NE(error_of([&] { load_llama_config((dir / "broken.json").string()); }).find("not valid JSON"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

// Llama 3.1's scaled frequencies, from the published formula evaluated independently here.
TEST(LlamaConfig, RopeFrequenciesFollowTheLlama31Scaling) {
  LlamaConfig c = llama_preset("llama3.1-8b");
  std::vector<double> f = rope_inv_freq(c);
  ASSERT_EQ(f.size(), 64u);
  int kept = 0, divided = 0, smoothed = 0;
  for (size_t i = 0; i < f.size(); i++) {
    double base = std::pow(500000.0, -2.0 * static_cast<double>(i) / 128.0);
    double wavelen = 2 * M_PI / base;
    if (wavelen < 8192.0 / 4) {
      EXPECT_DOUBLE_EQ(f[i], base);
      kept++;
    } else if (wavelen > 8192.0) {
      EXPECT_DOUBLE_EQ(f[i], base / 8);
      divided++;
    } else {
      double s = (8192.0 / wavelen - 1) / 3;
      EXPECT_NEAR(f[i], (1 - s) * base / 8 + s * base, 1e-15);
      EXPECT_GT(f[i], base / 8);
      EXPECT_LT(f[i], base);
      smoothed++;
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(divided, 0);
  EXPECT_GT(smoothed, 0);
  EXPECT_DOUBLE_EQ(f[0], 1.0);
  c.rope_scaling.enabled = false;
  EXPECT_DOUBLE_EQ(rope_inv_freq(c)[63], std::pow(500000.0, -126.0 / 128.0));
}

}  // namespace
}  // namespace lg::llm
