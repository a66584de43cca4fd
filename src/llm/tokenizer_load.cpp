// Loading a Hugging Face tokenizer.json into a Tokenizer. Only what lazygrad implements exactly is
// accepted: a BPE model without byte fallback or subword affixes, no normalizer, and a byte-level
// pre-tokenizer (Llama 3's Split regex + ByteLevel without regex, or GPT-2's ByteLevel with regex).
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "llm/bpe.h"
#include "llm/byte_level.h"
#include "llm/pretokenizer.h"
#include "llm/tokenizer.h"

namespace lg::llm {
namespace {

using json = nlohmann::json;

// The pattern ByteLevel uses when use_regex is true (GPT-2).
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

const json& field(const json& j, const char* name, const std::string& origin, const std::string& where) {
  LG_USER_CHECK(j.is_object() && j.contains(name), origin, ": missing field ", where, ".", name,
                " (is this a Hugging Face tokenizer.json?)");
  return j.at(name);
}

bool is_null_or_empty(const json& j, const char* name) {
  return !j.contains(name) || j.at(name).is_null() || (j.at(name).is_string() && j.at(name).get<std::string>().empty());
}

// The regex of the pre-tokenizer (see the file comment for what is accepted).
std::string pre_tokenizer_pattern(const json& pre, const std::string& origin) {
  auto unsupported = [&](const std::string& why) {
    user_error(origin, ": pre_tokenizer ", why, "; lazygrad supports Llama 3 style [Split(Regex), ",
               "ByteLevel(use_regex=false)] or GPT-2 style ByteLevel(use_regex=true)");
  };
  auto check_byte_level = [&](const json& b) {
    if (b.value("add_prefix_space", false)) unsupported("ByteLevel.add_prefix_space=true");
  };
  std::string type = field(pre, "type", origin, "pre_tokenizer").get<std::string>();
  if (type == "ByteLevel") {
    check_byte_level(pre);
    if (!pre.value("use_regex", true)) unsupported("is a ByteLevel without regex");
    return kGpt2Pattern;
  }
  if (type != "Sequence") unsupported("has type " + type);
  const json& steps = field(pre, "pretokenizers", origin, "pre_tokenizer");
  if (steps.size() != 2) unsupported("is a Sequence of " + std::to_string(steps.size()) + " steps");
  const json& split = steps[0];
  if (split.value("type", "") != "Split") unsupported("does not start with Split");
  if (split.value("behavior", "") != "Isolated" || split.value("invert", false))
    unsupported("Split is not behavior=Isolated, invert=false");
  const json& pattern = field(split, "pattern", origin, "pre_tokenizer.pretokenizers[0]");
  if (!pattern.contains("Regex")) unsupported("Split pattern is not a Regex");
  if (steps[1].value("type", "") != "ByteLevel" || steps[1].value("use_regex", true))
    unsupported("second step is not ByteLevel(use_regex=false)");
  check_byte_level(steps[1]);
  return pattern.at("Regex").get<std::string>();
}

std::vector<std::pair<std::string, std::string>> parse_merges(const json& merges, const std::string& origin) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const json& m = merges[i];
    if (m.is_array() && m.size() == 2) {  // newer tokenizers: ["a", "b"]
      out.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
      continue;
    }
    LG_USER_CHECK(m.is_string(), origin, ": model.merges[", i, "] is neither \"a b\" nor [\"a\", \"b\"]");
    const std::string& s = m.get_ref<const std::string&>();
    size_t space = s.find(' ');
    LG_USER_CHECK(space != std::string::npos && space > 0 && space + 1 < s.size(), origin,
                  ": model.merges[", i, "] \"", s, "\" is not two tokens separated by one space");
    out.emplace_back(s.substr(0, space), s.substr(space + 1));
  }
  return out;
}

std::shared_ptr<const Bpe> parse_model(const json& model, const std::string& origin) {
  LG_USER_CHECK(model.value("type", "BPE") == "BPE", origin, ": model.type is ",
                model.value("type", ""), "; lazygrad supports only BPE");
  LG_USER_CHECK(!model.value("byte_fallback", false) && is_null_or_empty(model, "continuing_subword_prefix") &&
                    is_null_or_empty(model, "end_of_word_suffix") && is_null_or_empty(model, "dropout"),
                origin, ": model uses byte_fallback, subword affixes or dropout, which lazygrad does not support");
  StringIdMap vocab;
  for (const auto& [token, id] : field(model, "vocab", origin, "model").items())
    vocab.emplace(token, id.get<int32_t>());
  auto merges = parse_merges(field(model, "merges", origin, "model"), origin);
  return std::make_shared<const Bpe>(std::move(vocab), merges, model.value("ignore_merges", false), origin);
}

}  // namespace

Tokenizer Tokenizer::load(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path file = path;
  if (fs::is_directory(file)) file /= "tokenizer.json";
  std::ifstream in(file, std::ios::binary);
  LG_USER_CHECK(in.good(), "tokenizer: cannot read ", file.string(),
                " (pass --tokenizer a tokenizer.json or a directory holding one)");
  std::stringstream text;
  text << in.rdbuf();
  return from_json(text.str(), file.string());
}

Tokenizer Tokenizer::from_json(std::string_view json_text, const std::string& origin) {
  json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  LG_USER_CHECK(!j.is_discarded() && j.is_object(), origin, ": not valid JSON");
  LG_USER_CHECK(!j.contains("normalizer") || j.at("normalizer").is_null(), origin,
                ": has a normalizer, which lazygrad does not implement (Llama 3 has none)");
  Tokenizer t;
  t.bpe_ = parse_model(field(j, "model", origin, "(top)"), origin);
  t.pre_ = std::make_shared<const PreTokenizer>(pre_tokenizer_pattern(field(j, "pre_tokenizer", origin, "(top)"), origin));
  if (j.contains("added_tokens"))
    for (const json& a : j.at("added_tokens"))
      t.added_.push_back({field(a, "content", origin, "added_tokens[]").get<std::string>(),
                          field(a, "id", origin, "added_tokens[]").get<int32_t>()});
  std::stable_sort(t.added_.begin(), t.added_.end(),
                   [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
  int32_t size = 0;
  for (const auto& [token, id] : t.bpe_->vocab()) size = std::max(size, id + 1);
  for (const AddedToken& a : t.added_) size = std::max(size, a.id + 1);
  t.id_to_bytes_.resize(size);
  for (const auto& [token, id] : t.bpe_->vocab()) {
    auto bytes = byte_level_decode(token);
    LG_USER_CHECK(bytes.has_value(), origin, ": model.vocab token \"", token, "\" (id ", id,
                  ") is not a byte-level string");
    t.id_to_bytes_[id] = *bytes;
  }
  for (const AddedToken& a : t.added_) {
    LG_USER_CHECK(!a.content.empty(), origin, ": added token ", a.id, " is empty");
    t.id_to_bytes_[a.id] = a.content;
    if (t.added_first_bytes_.find(a.content[0]) == std::string::npos) t.added_first_bytes_ += a.content[0];
    if (a.content == "<|begin_of_text|>") t.bos_id_ = a.id;
    if (a.content == "<|end_of_text|>") t.eos_id_ = a.id;
  }
  static std::atomic<uint64_t> next_serial{1};
  t.serial_ = next_serial++;
  return t;
}

}  // namespace lg::llm
