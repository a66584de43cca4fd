#include "llm/hf_checkpoint.h"

#include <filesystem>
#include <map>

#include "base/error.h"
#include "nn/file_io.h"
#include "nn/safetensors.h"

namespace lg::llm {

namespace fs = std::filesystem;
using json = nlohmann::json;

LlamaConfig load_hf_config(const std::string& dir) {
  fs::path cfg = fs::path(dir) / "config.json";
  LG_USER_CHECK(fs::exists(cfg), dir, ": no config.json; a Hugging Face checkpoint directory holds config.json and ",
                "model.safetensors (or shards with model.safetensors.index.json)");
  return load_llama_config(cfg.string());
}

Llama load_hf_model(const std::string& dir) {
  Llama model(load_hf_config(dir));
  load_hf_weights(model, dir);
  return model;
}

// Which file holds each tensor: the index's weight_map, or everything in model.safetensors.
static std::map<std::string, std::string> weight_files(const std::string& dir) {
  fs::path index = fs::path(dir) / "model.safetensors.index.json";
  fs::path single = fs::path(dir) / "model.safetensors";
  std::map<std::string, std::string> where;
  if (fs::exists(index)) {
    json j = json::parse(nn::read_file(index.string()), nullptr, /*allow_exceptions=*/false);
    LG_USER_CHECK(!j.is_discarded() && j.is_object() && j.contains("weight_map") && j["weight_map"].is_object(),
                  index.string(), ": expected a JSON object with a \"weight_map\" object {tensor: file}");
    for (auto& [name, file] : j["weight_map"].items()) {
      LG_USER_CHECK(file.is_string(), index.string(), ": weight_map[\"", name, "\"] must be a file name");
      where[name] = (fs::path(dir) / file.get<std::string>()).string();
    }
    return where;
  }
  LG_USER_CHECK(fs::exists(single), dir, ": no model.safetensors and no model.safetensors.index.json");
  nn::SafeTensorsFile file = nn::SafeTensorsFile::open(single.string());
  for (const nn::SafeTensorInfo& t : file.tensors()) where[t.name] = single.string();
  return where;
}

static std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

void load_hf_weights(Llama& model, const std::string& dir) {
  std::map<std::string, std::string> where = weight_files(dir);
  std::map<std::string, nn::SafeTensorsFile> files;
  std::vector<Tensor> writes;
  for (const auto& [name, param] : model.params()) {
    auto it = where.find(name);
    LG_USER_CHECK(it != where.end(), dir, ": the checkpoint has no tensor \"", name, "\" (model ",
                  model.config().summary(), ")");
    auto f = files.find(it->second);
    if (f == files.end()) f = files.emplace(it->second, nn::SafeTensorsFile::open(it->second)).first;
    const nn::SafeTensorInfo& info = f->second.info(name);
    LG_USER_CHECK(info.shape == param.shape(), it->second, ": tensor \"", name, "\" has shape ",
                  shape_str(info.shape), ", the model needs ", shape_str(param.shape()),
                  "; check that config.json matches the weights");
    LG_USER_CHECK(is_float(info.dtype), it->second, ": tensor \"", name, "\" is ", lg::name(info.dtype),
                  "; weights must be F32, BF16 or F16");
    Tensor dst = param;
    writes.push_back(dst.assign(f->second.load(name, param.device()).cast(param.dtype())));
  }
  Tensor::realize(writes);
}

void save_hf_model(const Llama& model, const std::string& dir) {
  nn::make_directories(dir, "the Hugging Face checkpoint directory");
  nn::write_file_atomic((fs::path(dir) / "config.json").string(), llama_config_to_hf(model.config()).dump(2) + "\n");
  nn::save_safetensors((fs::path(dir) / "model.safetensors").string(), model.params(), {{"format", "pt"}});
}

}  // namespace lg::llm
