#include "llm/llama.h"

#include <cmath>

#include "base/config.h"
#include "base/error.h"
#include "nn/init.h"
#include "runtime/device.h"

namespace lg::llm {

std::vector<double> rope_inv_freq(const LlamaConfig& c) {
  int64_t hd = c.head_dim();
  std::vector<double> f(static_cast<size_t>(hd / 2));
  const RopeScaling& r = c.rope_scaling;
  double low_wavelen = static_cast<double>(r.original_context) / r.low_freq_factor;
  double high_wavelen = static_cast<double>(r.original_context) / r.high_freq_factor;
  for (int64_t i = 0; i < hd / 2; i++) {
    double freq = 1.0 / std::pow(c.rope_theta, static_cast<double>(2 * i) / static_cast<double>(hd));
    if (r.enabled) {
      double wavelen = 2 * M_PI / freq;
      if (wavelen > low_wavelen) {
        freq /= r.factor;
      } else if (wavelen >= high_wavelen) {
        double s = (static_cast<double>(r.original_context) / wavelen - r.low_freq_factor) /
                   (r.high_freq_factor - r.low_freq_factor);
        freq = (1 - s) * freq / r.factor + s * freq;
      }
    }
    f[static_cast<size_t>(i)] = freq;
  }
  return f;
}

LlamaBlock::LlamaBlock(const LlamaConfig& c)
    : attn_norm(c.dim, c.norm_eps),
      ffn_norm(c.dim, c.norm_eps),
      wq(c.dim, c.n_heads * c.head_dim(), false, c.init_std),
      wk(c.dim, c.n_kv_heads * c.head_dim(), false, c.init_std),
      wv(c.dim, c.n_kv_heads * c.head_dim(), false, c.init_std),
      wo(c.n_heads * c.head_dim(), c.dim, false, c.init_std / std::sqrt(2.0 * static_cast<double>(c.n_layers))),
      w1(c.dim, c.ffn_dim, false, c.init_std),
      w2(c.ffn_dim, c.dim, false, c.init_std / std::sqrt(2.0 * static_cast<double>(c.n_layers))),
      w3(c.dim, c.ffn_dim, false, c.init_std) {}

nn::ParamList LlamaBlock::params() const {
  nn::ParamList p;
  p.add("self_attn.q_proj.weight", wq.weight);
  p.add("self_attn.k_proj.weight", wk.weight);
  p.add("self_attn.v_proj.weight", wv.weight);
  p.add("self_attn.o_proj.weight", wo.weight);
  p.add("mlp.gate_proj.weight", w1.weight);
  p.add("mlp.up_proj.weight", w3.weight);
  p.add("mlp.down_proj.weight", w2.weight);
  p.add("input_layernorm.weight", attn_norm.weight);
  p.add("post_attention_layernorm.weight", ffn_norm.weight);
  return p;
}

// The sub-list of p whose names start with prefix + ".", with the prefix removed.
static nn::ParamList under(const nn::ParamList& p, const std::string& prefix) {
  nn::ParamList r;
  std::string dot = prefix + ".";
  for (const auto& [name, t] : p)
    if (name.rfind(dot, 0) == 0) r.add(name.substr(dot.size()), t);
  return r;
}

static nn::ParamList one(const std::string& name, const Tensor& t) {
  nn::ParamList r;
  r.add(name, t);
  return r;
}

void LlamaBlock::bind(const nn::ParamList& p) {
  wq.bind(under(p, "self_attn.q_proj"));
  wk.bind(under(p, "self_attn.k_proj"));
  wv.bind(under(p, "self_attn.v_proj"));
  wo.bind(under(p, "self_attn.o_proj"));
  w1.bind(under(p, "mlp.gate_proj"));
  w3.bind(under(p, "mlp.up_proj"));
  w2.bind(under(p, "mlp.down_proj"));
  attn_norm.bind(under(p, "input_layernorm"));
  ffn_norm.bind(under(p, "post_attention_layernorm"));
}

static LlamaConfig validated(LlamaConfig c) {
  c.validate();
  return c;
}

// Members are initialized in declaration order, which is also the order of random draws:
// embedding, then each block (q, k, v, o, gate, down, up), then the head.
Llama::Llama(LlamaConfig config) : Llama(std::move(config), nn::init::Deferred{}) {}

// `params` is a temporary of the delegating constructor's initializer: it lives through this whole
// constructor, so every member's initializer records into it.
Llama::Llama(LlamaConfig config, nn::init::Deferred&& params)
    : tok_embeddings(validated(config).vocab_size, config.dim, config.init_std),
      layers([&] {
        std::vector<LlamaBlock> v;
        v.reserve(static_cast<size_t>(config.n_layers));
        for (int64_t i = 0; i < config.n_layers; i++) v.emplace_back(config);
        return v;
      }()),
      norm(config.dim, config.norm_eps),
      output(config.dim, config.vocab_size, false, config.init_std),
      cfg_(std::move(config)) {
  params.realize();
}

nn::ParamList Llama::params() const {
  nn::ParamList p;
  p.add("model.embed_tokens.weight", tok_embeddings.weight);
  for (size_t i = 0; i < layers.size(); i++) p.add_all("model.layers." + std::to_string(i), layers[i].params());
  p.add("model.norm.weight", norm.weight);
  p.add("lm_head.weight", output.weight);
  return p;
}

void Llama::bind(const nn::ParamList& p) {
  tok_embeddings.bind(one("weight", p.at("model.embed_tokens.weight")));
  for (size_t i = 0; i < layers.size(); i++) layers[i].bind(under(p, "model.layers." + std::to_string(i)));
  norm.bind(one("weight", p.at("model.norm.weight")));
  output.bind(one("weight", p.at("lm_head.weight")));
}

const Llama::PositionTables& Llama::tables(int64_t seq) const {
  auto it = tables_.find(seq);
  if (it != tables_.end()) return it->second;
  std::vector<double> inv = rope_inv_freq(cfg_);
  int64_t hd = cfg_.head_dim(), half = hd / 2;
  std::vector<double> c(static_cast<size_t>(seq * hd)), s(c.size());
  for (int64_t p = 0; p < seq; p++)
    for (int64_t i = 0; i < hd; i++) {
      double angle = static_cast<double>(p) * inv[static_cast<size_t>(i % half)];
      c[static_cast<size_t>(p * hd + i)] = std::cos(angle);
      s[static_cast<size_t>(p * hd + i)] = std::sin(angle);
    }
  std::string dev = tok_embeddings.weight.device();
  PositionTables t{Tensor::from_doubles(c, {seq, hd}, dtypes::float32, dev).realize(),
                   Tensor::from_doubles(s, {seq, hd}, dtypes::float32, dev).realize()};
  return tables_.emplace(seq, std::move(t)).first->second;
}

Tensor swiglu(const Tensor& gate, const Tensor& up) {
  return gate.cast(dtypes::float32).silu().cast(gate.dtype()) * up;
}

// x (..., S, hd) rotated by the tables (S, hd): x*cos + rotate_half(x)*sin, where rotate_half(x) is
// (-x[hd/2:], x[:hd/2]).
static Tensor apply_rope(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  int64_t hd = x.shape().back();
  Tensor x1 = x.slice(-1, 0, hd / 2), x2 = x.slice(-1, hd / 2, hd);
  Tensor rotated = Tensor::cat({x2.neg(), x1}, -1);
  return x * cos.cast(x.dtype()) + rotated * sin.cast(x.dtype());
}

// x (B, S, d) -> attention output (B, S, d). Queries are grouped by the kv head they share:
// q (B, KV, rep, S, hd) against k, v (B, KV, 1, S, hd), so the kv heads are broadcast, not copied.
Tensor Llama::attention(const LlamaBlock& b, const Tensor& x, const Tensor& cos, const Tensor& sin) const {
  int64_t B = x.size(0), S = x.size(1), H = cfg_.n_heads, KV = cfg_.n_kv_heads, hd = cfg_.head_dim();
  int64_t rep = H / KV;
  Tensor q = b.wq(x).reshape({B, S, KV, rep, hd}).permute({0, 2, 3, 1, 4});  // (B, KV, rep, S, hd)
  Tensor k = b.wk(x).reshape({B, S, KV, 1, hd}).permute({0, 2, 3, 1, 4});    // (B, KV, 1, S, hd)
  Tensor v = b.wv(x).reshape({B, S, KV, 1, hd}).permute({0, 2, 3, 1, 4});
  q = apply_rope(q, cos, sin);
  k = apply_rope(k, cos, sin);
  if (lg::config().flash_attention) {  // one fused op: nothing of size S x S is stored
    Tensor out = q.reshape({B, H, S, hd}).flash_attention(k.reshape({B, KV, S, hd}), v.reshape({B, KV, S, hd}), true);
    Tensor merged = out.permute({0, 2, 1, 3}).reshape({B, S, H * hd});
    return b.wo(merged.contiguous());  // as below
  }
  double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  Tensor scores = q.matmul(k.transpose(-2, -1)).cast(dtypes::float32) * scale;  // (B, KV, rep, S, S)
  Tensor pos = Tensor::arange(0, S, 1, dtypes::int32, x.device());
  Tensor future = pos.unsqueeze(1).lt(pos.unsqueeze(0));  // (S, S): key after query
  scores = future.where(scores.scalar_like(-INFINITY).expand(scores.shape()), scores);
  Tensor probs = scores.softmax(-1).cast(x.dtype());
  // realized in this layout: written straight into (B, S, H * hd), the heads and head dims would be
  // one output axis that both operands move along, which no tensor-core matmul maps
  Tensor out = probs.matmul(v).contiguous();  // (B, KV, rep, S, hd)
  Tensor merged = out.permute({0, 3, 1, 2, 4}).reshape({B, S, H * hd});
  // The heads are merged by a copy: read through the permute, the output projection's operand (and
  // its weight gradient's) is not linear along the merged axis (indices divided and taken modulo
  // per element, no vector lanes or register tiles on CPUs), and block-tiled tensor-core matmuls
  // (codegen/block_mma.h) copy tiles of linear operands only.
  return b.wo(merged.contiguous());
}

Tensor Llama::hidden(const Tensor& tokens) const {
  LG_USER_CHECK(tokens.ndim() == 2, "Llama: tokens must be (batch, seq), got rank ", tokens.ndim());
  int64_t S = tokens.size(1);
  LG_USER_CHECK(S <= cfg_.max_seq_len, "Llama: sequence length ", S, " exceeds the model's max_seq_len ",
                cfg_.max_seq_len, "; raise max_seq_len in the config");
  const PositionTables& t = tables(S);
  Tensor h = tok_embeddings(tokens);
  for (const LlamaBlock& b : layers) {
    h = h + attention(b, b.attn_norm(h), t.cos, t.sin);
    Tensor x = b.ffn_norm(h);
    h = h + b.w2(swiglu(b.w1(x), b.w3(x)));
  }
  return norm(h);
}

Tensor Llama::head(const Tensor& hidden) const { return output(hidden); }

Tensor Llama::loss_sum(const Tensor& tokens, const Tensor& labels, int64_t loss_chunk) const {
  LG_USER_CHECK(labels.shape() == tokens.shape(), "Llama: labels must have the tokens' shape (batch, seq)");
  Tensor h = hidden(tokens).reshape({-1, cfg_.dim});
  Tensor y = labels.reshape({-1});
  int64_t n = h.size(0);
  int64_t chunk = loss_chunk > 0 ? std::min(loss_chunk, n) : n;
  Tensor total;
  for (int64_t begin = 0; begin < n; begin += chunk) {
    int64_t end = std::min(n, begin + chunk);
    Tensor logits = head(h.slice(0, begin, end)).cast(dtypes::float32);
    Tensor part = logits.cross_entropy(y.slice(0, begin, end), "sum");
    total = total.defined() ? total + part : part;
  }
  return total;
}

Tensor Llama::loss(const Tensor& tokens, const Tensor& labels, int64_t loss_chunk) const {
  return loss_sum(tokens, labels, loss_chunk) / static_cast<double>(tokens.numel());
}

}  // namespace lg::llm
