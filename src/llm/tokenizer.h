#pragma once
// The Llama 3.1 tokenizer: a Hugging Face tokenizer.json of byte-level BPE type, encoded and decoded
// exactly as the Hugging Face `tokenizers` library does.
//
// encode(text):
//   1. invalid UTF-8 becomes U+FFFD per maximal ill-formed subpart (utf8.h: the policy)
//   2. added tokens (the 256 specials of Llama 3.1, "<|begin_of_text|>" ...) are matched whole,
//      leftmost first, longest among those starting at the same byte; they are never split or merged
//   3. the text between them is cut by the pre-tokenizer regex (pretokenizer.h)
//   4. each piece is BPE-merged (bpe.h); ids are appended in order
// No normalizer runs (Llama 3 has none). BOS is prepended only when asked.
// decode(ids) returns the raw bytes the ids stand for (the specials as their text); decode(encode(t))
// == t for valid UTF-8 t.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lg::llm {

class Bpe;
class PreTokenizer;

struct AddedToken {
  std::string content;
  int32_t id;
};

class Tokenizer {
 public:
  // path: a tokenizer.json or a directory that holds one. Unsupported or malformed files are user
  // errors naming the file and the field.
  static Tokenizer load(const std::string& path);
  // The same from the JSON text; origin names it in errors.
  static Tokenizer from_json(std::string_view json_text, const std::string& origin);

  std::vector<int32_t> encode(std::string_view text, bool add_bos = false) const;
  // Appends to out instead of returning (reuses the caller's buffer).
  void encode_into(std::string_view text, std::vector<int32_t>& out) const;
  std::string decode(std::span<const int32_t> ids) const;

  int32_t vocab_size() const { return static_cast<int32_t>(id_to_bytes_.size()); }  // max id + 1
  int32_t bos_id() const { return bos_id_; }  // "<|begin_of_text|>"; -1 when absent
  int32_t eos_id() const { return eos_id_; }  // "<|end_of_text|>" (Megatron's eod); -1 when absent
  const std::vector<AddedToken>& added_tokens() const { return added_; }

 private:
  Tokenizer() = default;
  void encode_ordinary(std::string_view text, std::vector<int32_t>& out) const;
  // Position and token of the first added token in text at or after from; npos when none.
  size_t find_added(std::string_view text, size_t from, const AddedToken** which) const;

  std::shared_ptr<const Bpe> bpe_;
  std::shared_ptr<const PreTokenizer> pre_;
  std::vector<AddedToken> added_;   // sorted by content length, longest first
  std::string added_first_bytes_;   // the first byte of every added token (for a fast scan)
  std::vector<std::string> id_to_bytes_;  // the bytes each id decodes to
  int32_t bos_id_ = -1, eos_id_ = -1;
  uint64_t serial_ = 0;  // identifies this tokenizer's vocabulary in the per-thread piece cache
};

}  // namespace lg::llm
