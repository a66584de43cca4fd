#include <gtest/gtest.h>

#include <cmath>

#include "base/config.h"
#include "common/user_error.h"
#include "ir/dtype.h"
#include "llm/llama.h"
#include "nn/init.h"

namespace lg::llm {
namespace {

using testing_util::error_of;

LlamaConfig micro() {
  LlamaConfig c = llama_preset("tiny");
  c.name = "micro";
  c.dim = 32, c.n_layers = 2, c.n_heads = 4, c.n_kv_heads = 2, c.ffn_dim = 48, c.vocab_size = 50;
  c.max_seq_len = 16;
  c.rope_scaling.original_context = 16;  // every branch of the scaling at head_dim 8
  return c;
}

Tensor ids(const std::vector<int32_t>& v, int64_t b, int64_t s) { return Tensor::from_vector(v, {b, s}); }

TEST(LlamaModel, ParametersHaveHuggingFaceNamesShapesAndMLPerfInit) {
  Tensor::manual_seed(3);
  LlamaConfig c = micro();
  c.dim = 64, c.ffn_dim = 128, c.vocab_size = 512;  // enough elements for the std estimates
  Llama m(c);
  nn::ParamList p = m.params();
  EXPECT_EQ(p.size(), 2u + 9u * 2u + 1u);
  EXPECT_EQ(p.numel(), c.num_params());
  EXPECT_EQ(p.at("model.embed_tokens.weight").shape(), (Shape{512, 64}));
  EXPECT_EQ(p.at("model.layers.1.self_attn.k_proj.weight").shape(), (Shape{32, 64}));  // 2 kv heads x 16
  EXPECT_EQ(p.at("model.layers.0.mlp.down_proj.weight").shape(), (Shape{64, 128}));
  EXPECT_EQ(p.at("lm_head.weight").shape(), (Shape{512, 64}));
  auto stdev = [](const Tensor& t) {
    std::vector<double> v = t.to_doubles();
    double s = 0;
    for (double x : v) s += x * x;
    return std::sqrt(s / static_cast<double>(v.size()));
  };
  EXPECT_NEAR(stdev(p.at("model.embed_tokens.weight")), 0.02, 0.001);
  EXPECT_NEAR(stdev(p.at("model.layers.0.self_attn.q_proj.weight")), 0.02, 0.001);
  EXPECT_NEAR(stdev(p.at("model.layers.0.self_attn.o_proj.weight")), 0.01, 0.0006);  // 0.02/sqrt(2*2)
  EXPECT_NEAR(stdev(p.at("model.layers.0.mlp.down_proj.weight")), 0.01, 0.0006);
  EXPECT_EQ(p.at("model.norm.weight").to_doubles(), std::vector<double>(64, 1.0));
  // drawn together (nn::init::Deferred), realized by the constructor, the values of the draws made
  // one at a time in parameter order (the embedding first, then q_proj of layer 0)
  for (const auto& [name, t] : p.items()) EXPECT_NE(t.node()->op, Op::CONTIGUOUS) << name << " is realized";
  Tensor::manual_seed(3);
  Tensor embed = nn::init::normal({512, 64}, 0.02), q0 = nn::init::normal({64, 64}, 0.02);
  EXPECT_EQ(p.at("model.embed_tokens.weight").to_doubles(), embed.to_doubles());
  EXPECT_EQ(p.at("model.layers.0.self_attn.q_proj.weight").to_doubles(), q0.to_doubles());
}

TEST(LlamaModel, LogitsAreCausal) {
  Tensor::manual_seed(4);
  Llama m(micro());
  std::vector<int32_t> a = {1, 7, 3, 9, 4, 4, 0, 12}, b = a;
  b[5] = 31, b[6] = 2, b[7] = 49;  // change the future of position 4
  std::vector<double> la = m.logits(ids(a, 1, 8)).to_doubles(), lb = m.logits(ids(b, 1, 8)).to_doubles();
  ASSERT_EQ(la.size(), 8u * 50u);
  for (size_t i = 0; i < 5 * 50; i++) ASSERT_EQ(la[i], lb[i]) << "position " << i / 50;
  double diff = 0;
  for (size_t i = 5 * 50; i < la.size(); i++) diff = std::max(diff, std::abs(la[i] - lb[i]));
  EXPECT_GT(diff, 1e-4);
}

TEST(LlamaModel, BatchRowsAreIndependentAndPositionsMatter) {
  Tensor::manual_seed(5);
  Llama m(micro());
  std::vector<int32_t> r0 = {5, 6, 7, 8}, r1 = {8, 7, 6, 5};
  std::vector<int32_t> both = r0;
  both.insert(both.end(), r1.begin(), r1.end());
  std::vector<double> lb = m.logits(ids(both, 2, 4)).to_doubles();
  std::vector<double> l0 = m.logits(ids(r0, 1, 4)).to_doubles(), l1 = m.logits(ids(r1, 1, 4)).to_doubles();
  for (size_t i = 0; i < l0.size(); i++) {
    EXPECT_NEAR(lb[i], l0[i], 1e-5);
    EXPECT_NEAR(lb[l0.size() + i], l1[i], 1e-5);
  }
}

// With one layer the keys are the embeddings, so without positions the last query would see the
// same set of keys in [a, b, c] and [b, a, c] and give the same logits; rotary positions differ.
TEST(LlamaModel, RotaryPositionsReachTheOutput) {
  Tensor::manual_seed(9);
  LlamaConfig c = micro();
  c.n_layers = 1;
  Llama m(c);
  std::vector<double> x = m.logits(ids({11, 22, 33}, 1, 3)).to_doubles();
  std::vector<double> y = m.logits(ids({22, 11, 33}, 1, 3)).to_doubles();
  double diff = 0;
  for (size_t i = 100; i < 150; i++) diff = std::max(diff, std::abs(x[i] - y[i]));
  EXPECT_GT(diff, 1e-6);
}

TEST(LlamaModel, ChunkedLossEqualsTheWholeLossAndGradients) {
  Tensor::manual_seed(6);
  Llama m(micro());
  std::vector<int32_t> t = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, y = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
  Tensor w = m.output.weight;
  Tensor whole = m.loss(ids(t, 2, 6), ids(y, 2, 6));
  std::vector<Tensor> gw = Tensor::gradients(whole, {w});
  Tensor chunked = m.loss(ids(t, 2, 6), ids(y, 2, 6), /*loss_chunk=*/5);  // chunks of 5, 5, 2 tokens
  std::vector<Tensor> gc = Tensor::gradients(chunked, {w});
  EXPECT_NEAR(whole.to_doubles()[0], chunked.to_doubles()[0], 1e-6);
  EXPECT_NEAR(whole.to_doubles()[0], std::log(50.0), 0.1);  // near-uniform predictions at init
  std::vector<double> a = gw[0].to_doubles(), b = gc[0].to_doubles();
  for (size_t i = 0; i < a.size(); i++) ASSERT_NEAR(a[i], b[i], 1e-7);
}

// FLASH_ATTENTION=1 (one fused attention op, ir/attention.h) computes the same model: loss and the
// gradients of every attention weight match the matmul-and-softmax attention's. On INTERP only (a
// suite outside the CPU filter): the kernels' values on CPU are FlashAttention.*'s.
TEST(LlamaFlashAttention, GivesTheSameLossAndGradientsAsMatmulAndSoftmax) {
  Tensor::manual_seed(8);
  Llama m(micro());
  std::vector<int32_t> t = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, y = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
  const LlamaBlock& b = m.layers[1];
  std::vector<Tensor> wrt{b.wq.weight, b.wk.weight, b.wv.weight, b.wo.weight, m.tok_embeddings.weight};
  auto run = [&](bool flash) {
    bool was = lg::config().flash_attention;
    lg::config().flash_attention = flash;
    Tensor loss = m.loss(ids(t, 2, 6), ids(y, 2, 6));
    std::vector<Tensor> g = Tensor::gradients(loss, wrt);
    lg::config().flash_attention = was;
    g.insert(g.begin(), loss);
    return g;
  };
  std::vector<Tensor> flash = run(true), plain = run(false);
  for (size_t i = 0; i < flash.size(); i++) {
    std::vector<double> a = flash[i].to_doubles(), want = plain[i].to_doubles();
    double scale = 0;
    for (double x : want) scale = std::max(scale, std::abs(x));
    ASSERT_GT(scale, 0.0) << "output " << i;
    for (size_t j = 0; j < a.size(); j++) ASSERT_NEAR(a[j], want[j], 1e-5 * scale) << "output " << i << " element " << j;
  }
}

TEST(LlamaModel, BindsBfloat16ComputeCopies) {
  Tensor::manual_seed(7);
  Llama m(micro());
  std::vector<int32_t> t = {3, 1, 4, 1, 5, 9};
  std::vector<double> ref = m.logits(ids(t, 1, 6)).to_doubles();
  nn::ParamList masters = m.params(), copies;
  for (const auto& [n, p] : masters) copies.add(n, p.cast(dtypes::bfloat16).contiguous().realize());
  m.bind(copies);
  EXPECT_EQ(m.compute_dtype(), dtypes::bfloat16);
  Tensor lg16 = m.logits(ids(t, 1, 6));
  EXPECT_EQ(lg16.dtype(), dtypes::bfloat16);
  std::vector<double> got = lg16.to_doubles();
  double scale = 0;
  for (double x : ref) scale = std::max(scale, std::abs(x));
  for (size_t i = 0; i < ref.size(); i++) ASSERT_NEAR(got[i], ref[i], 0.05 * scale);
  m.bind(masters);
  EXPECT_EQ(m.compute_dtype(), dtypes::float32);
}

// SwiGLU on bfloat16 activations rounds SiLU once: every gate value is float64's silu rounded to
// bfloat16 but for float32's own error at a rounding midpoint (at most one ulp, rarely: none of
// these 2048; composed of five bfloat16 ops, 1012 differed, by up to 8 ulps), and the product is
// that value times up, rounded once.
TEST(LlamaModel, SwigluRoundsSiluOnceInBfloat16) {
  std::vector<float> g, u;
  for (int i = 0; i < 2048; i++) {
    g.push_back(bf16_bits_to_float(float_to_bf16_bits(-10.0f + 20.0f * static_cast<float>(i) / 2047.0f)));
    u.push_back(bf16_bits_to_float(float_to_bf16_bits(0.75f + static_cast<float>(i % 13) / 8.0f)));
  }
  auto bf16 = [](const std::vector<float>& v) {
    return Tensor::from_vector(v, {1, static_cast<int64_t>(v.size())}).cast(dtypes::bfloat16);
  };
  std::vector<float> ones(g.size(), 1.0f);
  std::vector<float> gate = swiglu(bf16(g), bf16(ones)).cast(dtypes::float32).to_vector<float>();
  std::vector<float> prod = swiglu(bf16(g), bf16(u)).cast(dtypes::float32).to_vector<float>();
  ASSERT_EQ(gate.size(), g.size());
  int differ = 0;
  for (size_t i = 0; i < g.size(); i++) {
    double x = g[i], silu = x / (1.0 + std::exp(-x));
    float want = bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(silu)));
    double ulp = std::ldexp(1.0, std::ilogb(want) - 7);
    if (gate[i] != want) differ++;
    EXPECT_LE(std::abs(gate[i] - want), ulp) << "silu(" << g[i] << ")";
    EXPECT_EQ(prod[i], bf16_bits_to_float(float_to_bf16_bits(gate[i] * u[i])))
        << "silu(" << g[i] << ") * " << u[i];
  }
  EXPECT_LE(differ, 4) << "of " << g.size() << " gate values differ from float64's rounded once";
}

TEST(LlamaModel, BadInputsAreUserErrors) {
  Tensor::manual_seed(8);
  Llama m(micro());
  EXPECT_NE(error_of([&] { m.hidden(Tensor::from_vector(std::vector<int32_t>{1, 2}, {2})); }).find("(batch, seq)"),
            std::string::npos);
  std::vector<int32_t> long_seq(17, 1);
  EXPECT_NE(error_of([&] { m.hidden(ids(long_seq, 1, 17)); }).find("max_seq_len"), std::string::npos);
  EXPECT_NE(error_of([&] { m.loss(ids({1, 2}, 1, 2), ids({1, 2, 3}, 1, 3)); }).find("labels"), std::string::npos);
  LlamaConfig bad = micro();
  bad.n_kv_heads = 3;
  EXPECT_NE(error_of([&] { Llama x(bad); }).find("kv_heads"), std::string::npos);
  nn::ParamList p = m.params();
  nn::ParamList wrong;
  for (const auto& [n, t] : p) wrong.add(n, n == "lm_head.weight" ? Tensor::zeros({3, 3}) : t);
  EXPECT_NE(error_of([&] { m.bind(wrong); }).find("shape"), std::string::npos);
}

}  // namespace
}  // namespace lg::llm
