#include "nn/checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "nn/file_io.h"
#include "nn/safetensors.h"

namespace lg::nn {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

constexpr const char* kFormat = "lazygrad-checkpoint";
constexpr int kVersion = 1;

std::string step_name(int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step_%08lld", static_cast<long long>(step));
  return buf;
}

json manifest_of(const Optimizer& opt, const TrainProgress& p) {
  return json{{"format", kFormat},
              {"version", kVersion},
              {"step", p.step},
              {"data_position", p.data_position},
              {"rng", {{"seed", p.rng.seed}, {"offset", p.rng.offset}}},
              {"optimizer", {{"steps", opt.steps()}, {"lr", opt.lr()}}},
              {"files", {{"model", "model.safetensors"}, {"optimizer", "optimizer.safetensors"}}},
              {"extra", p.extra}};
}

// Writes `tensors` into dst (assign, lazy): names, dtypes and shapes must match the file.
void restore(const SafeTensorsFile& f, const ParamList& tensors, const char* what, std::vector<Tensor>& out) {
  LG_USER_CHECK(f.tensors().size() == tensors.size(), "checkpoint ", f.path(), ": ", f.tensors().size(), " ",
                what, " tensors saved, ", tensors.size(), " expected");
  for (const auto& [name, t] : tensors) {
    LG_USER_CHECK(f.contains(name), "checkpoint ", f.path(), ": ", what, " tensor \"", name, "\" is missing");
    Tensor dst = t;
    f.load_into(name, dst);
    out.push_back(dst);
  }
}

}  // namespace

CheckpointManager::CheckpointManager(std::string root, int keep_last)
    : root_(std::move(root)), keep_last_(keep_last) {
  LG_USER_CHECK(keep_last_ >= 1, "CheckpointManager: keep_last must be at least 1, got ", keep_last_);
  fs::create_directories(root_);
}

std::string CheckpointManager::save(const ParamList& model, const Optimizer& opt,
                                    const TrainProgress& progress) {
  std::string final_dir = (fs::path(root_) / step_name(progress.step)).string();
  std::string tmp =
      (fs::path(root_) / (".tmp." + step_name(progress.step) + "." + std::to_string(::getpid()))).string();
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  save_safetensors((fs::path(tmp) / "model.safetensors").string(), model);
  save_safetensors((fs::path(tmp) / "optimizer.safetensors").string(), opt.state());
  write_file_atomic((fs::path(tmp) / "manifest.json").string(), manifest_of(opt, progress).dump(1));
  fsync_dir(tmp);
  if (fs::exists(final_dir)) {  // re-saving a step: move the old one aside first
    std::string old = tmp + ".old";
    fs::rename(final_dir, old);
    fs::rename(tmp, final_dir);
    fs::remove_all(old);
  } else {
    fs::rename(tmp, final_dir);
  }
  fsync_dir(root_);
  std::vector<std::string> all = list();
  for (size_t i = 0; i + keep_last_ < all.size(); i++) fs::remove_all(all[i]);
  return final_dir;
}

std::vector<std::string> CheckpointManager::list() const {
  std::vector<std::string> out;
  for (const fs::directory_entry& e : fs::directory_iterator(root_)) {
    std::string n = e.path().filename().string();
    if (e.is_directory() && n.rfind("step_", 0) == 0 && fs::exists(e.path() / "manifest.json"))
      out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());  // zero-padded step numbers sort by step
  return out;
}

std::optional<std::string> CheckpointManager::latest() const {
  std::vector<std::string> all = list();
  if (all.empty()) return std::nullopt;
  return all.back();
}

TrainProgress CheckpointManager::load(const std::string& dir, ParamList& model, Optimizer& opt) {
  std::string manifest_path = (fs::path(dir) / "manifest.json").string();
  json m;
  try {
    m = json::parse(read_file(manifest_path));
  } catch (const json::exception& e) {
    user_error("checkpoint ", manifest_path, ": not valid JSON: ", e.what());
  }
  LG_USER_CHECK(m.value("format", "") == kFormat && m.value("version", 0) == kVersion, "checkpoint ",
                manifest_path, ": not a lazygrad checkpoint of version ", kVersion);
  TrainProgress p;
  try {
    p.step = m.at("step");
    p.data_position = m.at("data_position");
    p.rng = {m.at("rng").at("seed"), m.at("rng").at("offset")};
    p.extra = m.at("extra").get<std::map<std::string, std::string>>();
    opt.set_steps(m.at("optimizer").at("steps"));
    opt.set_lr(m.at("optimizer").at("lr"));
  } catch (const json::exception& e) {
    user_error("checkpoint ", manifest_path, ": bad field: ", e.what());
  }
  std::vector<Tensor> restored;
  restore(SafeTensorsFile::open((fs::path(dir) / "model.safetensors").string()), model, "model", restored);
  restore(SafeTensorsFile::open((fs::path(dir) / "optimizer.safetensors").string()), opt.state(), "optimizer",
          restored);
  Tensor::realize(restored);
  Tensor::set_rng_position(p.rng);
  return p;
}

}  // namespace lg::nn
