#pragma once
// Where the llm tests find fetched data (scripts/fetch_data.sh): $LG_DATA_DIR, else <source>/data.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace lg::llm::testing {

inline std::filesystem::path data_dir() {
  if (const char* env = std::getenv("LG_DATA_DIR")) return env;
  return std::filesystem::path(LG_SOURCE_DIR) / "data";
}

// data/tokenizer/tokenizer.json (the Llama 3.1 tokenizer); empty when not fetched.
inline std::string llama_tokenizer_path() {
  auto p = data_dir() / "tokenizer" / "tokenizer.json";
  return std::filesystem::exists(p) ? p.string() : std::string();
}

inline std::filesystem::path source_dir() { return LG_SOURCE_DIR; }

// A fresh, empty directory for one test: <tmp>/lg_<name>_<pid>.
inline std::filesystem::path fresh_temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("lg_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace lg::llm::testing
