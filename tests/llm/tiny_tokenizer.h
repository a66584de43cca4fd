#pragma once
// A hand-made byte-level BPE tokenizer.json for tests that need no fetched data.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "llm/byte_level.h"

namespace lg::llm::testing {

// A byte-level BPE tokenizer.json: ids 0..255 are the bytes, then merged tokens, then one special.
inline std::string tiny_tokenizer_json(const std::vector<std::string>& merges, bool ignore_merges,
                                 const std::vector<std::string>& extra_tokens = {}) {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_level_encode(std::string(1, static_cast<char>(b)))] = b;
  int next = 256;
  for (const std::string& m : merges) {
    std::string merged = m.substr(0, m.find(' ')) + m.substr(m.find(' ') + 1);
    if (!vocab.contains(merged)) vocab[merged] = next++;
  }
  for (const std::string& t : extra_tokens) vocab[t] = next++;
  nlohmann::json j = {
      {"normalizer", nullptr},
      {"added_tokens",
       {{{"id", 1000}, {"content", "<|s|>"}}, {{"id", 1001}, {"content", "<|s|>x"}}, {{"id", 1002}, {"content", "<|end_of_text|>"}}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", R"( ?\p{L}+|\s+|[^\s\p{L}]+)"}}}, {"behavior", "Isolated"}, {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
      {"model", {{"type", "BPE"}, {"ignore_merges", ignore_merges}, {"vocab", vocab}, {"merges", merges}}}};
  return j.dump();
}

}  // namespace lg::llm::testing
