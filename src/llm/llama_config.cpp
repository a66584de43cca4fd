#include "llm/llama_config.h"

#include <cmath>
#include <filesystem>
#include <sstream>

#include "base/error.h"
#include "nn/file_io.h"

namespace lg::llm {

using json = nlohmann::json;

void LlamaConfig::validate() const {
  auto positive = [&](const char* field, int64_t v) {
    LG_USER_CHECK(v > 0, "Llama config \"", name, "\": ", field, " must be positive, got ", v);
  };
  positive("dim", dim);
  positive("layers", n_layers);
  positive("heads", n_heads);
  positive("kv_heads", n_kv_heads);
  positive("ffn_dim", ffn_dim);
  positive("vocab", vocab_size);
  positive("max_seq_len", max_seq_len);
  LG_USER_CHECK(dim % n_heads == 0, "Llama config \"", name, "\": dim ", dim, " is not divisible by heads ",
                n_heads, "; choose heads that divide dim");
  LG_USER_CHECK(n_heads % n_kv_heads == 0, "Llama config \"", name, "\": heads ", n_heads,
                " is not a multiple of kv_heads ", n_kv_heads, " (grouped-query attention shares each kv head)");
  LG_USER_CHECK(head_dim() % 2 == 0, "Llama config \"", name, "\": head dim ", head_dim(),
                " must be even for rotary embeddings");
  LG_USER_CHECK(norm_eps > 0, "Llama config \"", name, "\": norm_eps must be positive, got ", norm_eps);
  LG_USER_CHECK(rope_theta > 1, "Llama config \"", name, "\": rope_theta must be > 1, got ", rope_theta);
  LG_USER_CHECK(init_std >= 0, "Llama config \"", name, "\": init_std must be >= 0, got ", init_std);
  if (rope_scaling.enabled) {
    const RopeScaling& r = rope_scaling;
    LG_USER_CHECK(r.factor >= 1 && r.low_freq_factor > 0 && r.high_freq_factor > r.low_freq_factor &&
                      r.original_context > 0,
                  "Llama config \"", name, "\": rope_scaling needs factor >= 1, 0 < low_freq_factor < ",
                  "high_freq_factor and original_context > 0");
  }
}

int64_t LlamaConfig::matmul_params() const {
  int64_t kv = n_kv_heads * head_dim();
  int64_t per_layer = dim * dim * 2 + dim * kv * 2 + dim * ffn_dim * 3;
  return per_layer * n_layers + vocab_size * dim;  // + head
}

int64_t LlamaConfig::num_params() const {
  return matmul_params() + vocab_size * dim /*embedding*/ + dim * (2 * n_layers + 1) /*norms*/;
}

double LlamaConfig::train_flops_per_token(int64_t seq) const {
  return 6.0 * static_cast<double>(matmul_params()) + 12.0 * static_cast<double>(n_layers * dim * seq);
}

static int64_t parse_int(const std::string& key, const std::string& v) {
  size_t used = 0;
  int64_t r = 0;
  try {
    r = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  LG_USER_CHECK(used == v.size() && !v.empty(), "model option ", key, "=", v, ": expected an integer");
  return r;
}

static double parse_double(const std::string& key, const std::string& v) {
  size_t used = 0;
  double r = 0;
  try {
    r = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  LG_USER_CHECK(used == v.size() && !v.empty(), "model option ", key, "=", v, ": expected a number");
  return r;
}

void LlamaConfig::set(const std::string& key, const std::string& v) {
  if (key == "dim") dim = parse_int(key, v);
  else if (key == "layers" || key == "n_layers") n_layers = parse_int(key, v);
  else if (key == "heads" || key == "n_heads") n_heads = parse_int(key, v);
  else if (key == "kv_heads" || key == "n_kv_heads") n_kv_heads = parse_int(key, v);
  else if (key == "ffn_dim") ffn_dim = parse_int(key, v);
  else if (key == "vocab" || key == "vocab_size") vocab_size = parse_int(key, v);
  else if (key == "max_seq_len") max_seq_len = parse_int(key, v);
  else if (key == "norm_eps") norm_eps = parse_double(key, v);
  else if (key == "rope_theta") rope_theta = parse_double(key, v);
  else if (key == "init_std") init_std = parse_double(key, v);
  else if (key == "rope_scaling") {
    LG_USER_CHECK(v == "on" || v == "off" || v == "true" || v == "false", "model option rope_scaling=", v,
                  ": expected on or off");
    rope_scaling.enabled = v == "on" || v == "true";
  } else if (key == "name") name = v;
  else
    user_error("unknown model option \"", key, "\"; known: dim, layers, heads, kv_heads, ffn_dim, vocab, ",
               "max_seq_len, norm_eps, rope_theta, rope_scaling, init_std, name");
}

std::string LlamaConfig::summary() const {
  std::ostringstream os;
  os << name << ": dim " << dim << ", " << n_layers << " layers, " << n_heads << "/" << n_kv_heads
     << " heads, ffn " << ffn_dim << ", vocab " << vocab_size << ", " << std::fixed;
  double n = static_cast<double>(num_params());
  os.precision(n < 1e7 ? 3 : 1);
  os << n / 1e6 << "M parameters";
  return os.str();
}

std::vector<std::string> llama_preset_names() {
  return {"llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "tiny", "small"};
}

LlamaConfig llama_preset(const std::string& name) {
  LlamaConfig c;
  c.name = name;
  auto sizes = [&](int64_t d, int64_t l, int64_t h, int64_t kv, int64_t ffn) {
    c.dim = d, c.n_layers = l, c.n_heads = h, c.n_kv_heads = kv, c.ffn_dim = ffn;
  };
  if (name == "llama3.1-8b") sizes(4096, 32, 32, 8, 14336);
  else if (name == "llama3.1-70b") sizes(8192, 80, 64, 8, 28672);
  else if (name == "llama3.1-405b") sizes(16384, 126, 128, 8, 53248);
  else if (name == "tiny") sizes(256, 4, 8, 2, 768);
  else if (name == "small") sizes(512, 8, 8, 2, 1536);
  else {
    std::string names;
    for (const std::string& n : llama_preset_names()) names += (names.empty() ? "" : ", ") + n;
    user_error("unknown model preset \"", name, "\"; presets: ", names, " (or a path to a config.json)");
  }
  return c;
}

template <class T>
static T field(const json& j, const char* key, const std::string& source) {
  LG_USER_CHECK(j.contains(key), source, ": missing field \"", key, "\"");
  const json& v = j.at(key);
  if constexpr (std::is_integral_v<T>) {
    LG_USER_CHECK(v.is_number_integer(), source, ": field \"", key, "\" must be an integer, got ", v.dump());
  } else {
    LG_USER_CHECK(v.is_number(), source, ": field \"", key, "\" must be a number, got ", v.dump());
  }
  return v.get<T>();
}

LlamaConfig llama_config_from_hf(const json& j, const std::string& source) {
  LG_USER_CHECK(j.is_object(), source, ": expected a JSON object");
  LlamaConfig c;
  c.name = std::filesystem::path(source).parent_path().filename().string();
  if (c.name.empty()) c.name = "hf";
  c.dim = field<int64_t>(j, "hidden_size", source);
  c.n_layers = field<int64_t>(j, "num_hidden_layers", source);
  c.n_heads = field<int64_t>(j, "num_attention_heads", source);
  c.n_kv_heads = j.contains("num_key_value_heads") ? field<int64_t>(j, "num_key_value_heads", source) : c.n_heads;
  c.ffn_dim = field<int64_t>(j, "intermediate_size", source);
  c.vocab_size = field<int64_t>(j, "vocab_size", source);
  if (j.contains("max_position_embeddings")) c.max_seq_len = field<int64_t>(j, "max_position_embeddings", source);
  if (j.contains("rms_norm_eps")) c.norm_eps = field<double>(j, "rms_norm_eps", source);
  if (j.contains("rope_theta")) c.rope_theta = field<double>(j, "rope_theta", source);
  if (j.contains("initializer_range")) c.init_std = field<double>(j, "initializer_range", source);
  if (j.contains("head_dim") && !j.at("head_dim").is_null())
    LG_USER_CHECK(field<int64_t>(j, "head_dim", source) == c.dim / std::max<int64_t>(c.n_heads, 1), source,
                  ": head_dim other than hidden_size/num_attention_heads is not supported");
  if (j.contains("tie_word_embeddings"))
    LG_USER_CHECK(!j.at("tie_word_embeddings").is_boolean() || !j.at("tie_word_embeddings").get<bool>(), source,
                  ": tied embeddings are not supported (Llama 3.1 unties the head)");
  c.rope_scaling.enabled = false;
  if (j.contains("rope_scaling") && !j.at("rope_scaling").is_null()) {
    const json& r = j.at("rope_scaling");
    std::string where = source + " rope_scaling";
    LG_USER_CHECK(r.is_object(), where, ": expected an object or null");
    std::string type = r.value("rope_type", r.value("type", std::string()));
    LG_USER_CHECK(type == "llama3", where, ": rope_type \"", type, "\" is not supported (only \"llama3\")");
    c.rope_scaling.enabled = true;
    c.rope_scaling.factor = field<double>(r, "factor", where);
    c.rope_scaling.low_freq_factor = field<double>(r, "low_freq_factor", where);
    c.rope_scaling.high_freq_factor = field<double>(r, "high_freq_factor", where);
    c.rope_scaling.original_context = field<int64_t>(r, "original_max_position_embeddings", where);
  }
  c.validate();
  return c;
}

json llama_config_to_hf(const LlamaConfig& c) {
  json j = {{"architectures", {"LlamaForCausalLM"}},
            {"model_type", "llama"},
            {"hidden_size", c.dim},
            {"num_hidden_layers", c.n_layers},
            {"num_attention_heads", c.n_heads},
            {"num_key_value_heads", c.n_kv_heads},
            {"intermediate_size", c.ffn_dim},
            {"vocab_size", c.vocab_size},
            {"max_position_embeddings", c.max_seq_len},
            {"rms_norm_eps", c.norm_eps},
            {"rope_theta", c.rope_theta},
            {"initializer_range", c.init_std},
            {"hidden_act", "silu"},
            {"attention_bias", false},
            {"mlp_bias", false},
            {"tie_word_embeddings", false},
            {"torch_dtype", "float32"}};
  if (c.rope_scaling.enabled)
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", c.rope_scaling.factor},
                         {"low_freq_factor", c.rope_scaling.low_freq_factor},
                         {"high_freq_factor", c.rope_scaling.high_freq_factor},
                         {"original_max_position_embeddings", c.rope_scaling.original_context}};
  else
    j["rope_scaling"] = nullptr;
  return j;
}

LlamaConfig load_llama_config(const std::string& name_or_path) {
  if (!std::filesystem::exists(name_or_path) || std::filesystem::is_directory(name_or_path)) {
    std::filesystem::path dir_cfg = std::filesystem::path(name_or_path) / "config.json";
    if (std::filesystem::is_directory(name_or_path) && std::filesystem::exists(dir_cfg))
      return load_llama_config(dir_cfg.string());
    return llama_preset(name_or_path);
  }
  json j = json::parse(nn::read_file(name_or_path), nullptr, /*allow_exceptions=*/false);
  LG_USER_CHECK(!j.is_discarded(), name_or_path, ": not valid JSON");
  LG_USER_CHECK(j.is_object(), name_or_path, ": expected a JSON object");
  if (j.contains("hidden_size")) return llama_config_from_hf(j, name_or_path);
  LG_USER_CHECK(j.contains("preset") && j.at("preset").is_string(), name_or_path,
                ": a lazygrad model config needs \"preset\" (one of the preset names) and optional field ",
                "overrides; a Hugging Face config.json needs \"hidden_size\"");
  LlamaConfig c = llama_preset(j.at("preset").get<std::string>());
  for (auto& [k, v] : j.items()) {
    if (k == "preset") continue;
    std::string text = v.is_string() ? v.get<std::string>() : v.is_boolean() ? (v.get<bool>() ? "on" : "off") : v.dump();
    try {
      c.set(k, text);
    } catch (const Error& e) {
      user_error(name_or_path, ": ", e.what());
    }
  }
  c.validate();
  return c;
}

}  // namespace lg::llm
