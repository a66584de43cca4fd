#pragma once
// Byte-level BPE over one pre-token, as the Hugging Face "BPE" model does it.
//
// A word starts as one symbol per byte (the byte's alphabet character, see byte_level.h). Merges are
// applied by rank: repeatedly the adjacent pair with the lowest merge rank, leftmost among equal
// ranks, becomes the merged token, until no adjacent pair has a merge. With ignore_merges (Llama 3),
// a word whose whole byte-level string is a vocabulary token is that token, without merging.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace lg::llm {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using StringIdMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

class Bpe {
 public:
  // vocab: byte-level token string -> id; merges: (left, right) token strings in rank order.
  // Inconsistent inputs (a merge of unknown tokens, a missing byte) are user errors naming origin.
  Bpe(StringIdMap vocab, const std::vector<std::pair<std::string, std::string>>& merges,
      bool ignore_merges, const std::string& origin);

  // Appends the ids of one pre-token, given as raw bytes, to out.
  void encode_word(std::string_view bytes, std::vector<int32_t>& out) const;

  std::optional<int32_t> find(std::string_view token) const;
  const StringIdMap& vocab() const { return vocab_; }

 private:
  struct Merge {
    int32_t rank;
    int32_t id;  // the merged token
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  const Merge* find_merge(int32_t left, int32_t right) const;

  StringIdMap vocab_;
  std::array<int32_t, 256> byte_ids_{};  // id of each single-byte token
  std::unordered_map<uint64_t, Merge> merges_;
  bool ignore_merges_;
};

}  // namespace lg::llm
