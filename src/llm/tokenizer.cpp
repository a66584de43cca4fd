#include "llm/tokenizer.h"

#include <unordered_map>

#include "base/error.h"
#include "llm/bpe.h"
#include "llm/pretokenizer.h"
#include "llm/utf8.h"

namespace lg::llm {
namespace {

// Per-thread cache of piece -> ids for one tokenizer (pieces repeat a lot in text). Bounded: cleared
// when full. Pieces longer than kMaxCachedPiece bytes are not cached.
constexpr size_t kMaxCachedPiece = 64;
constexpr size_t kMaxCacheEntries = 1 << 20;

struct PieceCache {
  uint64_t serial = 0;
  std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> map;
};

PieceCache& piece_cache(uint64_t serial) {
  thread_local PieceCache cache;
  if (cache.serial != serial || cache.map.size() >= kMaxCacheEntries) {
    cache.map.clear();
    cache.serial = serial;
  }
  return cache;
}

}  // namespace

size_t Tokenizer::find_added(std::string_view text, size_t from, const AddedToken** which) const {
  if (added_.empty()) return std::string_view::npos;
  for (size_t pos = text.find_first_of(added_first_bytes_, from); pos != std::string_view::npos;
       pos = text.find_first_of(added_first_bytes_, pos + 1)) {
    for (const AddedToken& a : added_) {  // longest first
      if (text.compare(pos, a.content.size(), a.content) == 0) {
        *which = &a;
        return pos;
      }
    }
  }
  return std::string_view::npos;
}

void Tokenizer::encode_ordinary(std::string_view text, std::vector<int32_t>& out) const {
  thread_local std::vector<std::string_view> pieces;
  pieces.clear();
  pre_->split(text, pieces);
  PieceCache& cache = piece_cache(serial_);
  for (std::string_view piece : pieces) {
    if (piece.size() > kMaxCachedPiece) {
      bpe_->encode_word(piece, out);
      continue;
    }
    auto it = cache.map.find(piece);
    if (it == cache.map.end()) {
      std::vector<int32_t> ids;
      bpe_->encode_word(piece, ids);
      it = cache.map.emplace(std::string(piece), std::move(ids)).first;
    }
    out.insert(out.end(), it->second.begin(), it->second.end());
  }
}

void Tokenizer::encode_into(std::string_view text, std::vector<int32_t>& out) const {
  std::string repaired;
  if (!utf8_is_valid(text)) {
    repaired = utf8_lossy(text);
    text = repaired;
  }
  size_t from = 0;
  while (from < text.size()) {
    const AddedToken* added = nullptr;
    size_t pos = find_added(text, from, &added);
    size_t end = pos == std::string_view::npos ? text.size() : pos;
    if (end > from) encode_ordinary(text.substr(from, end - from), out);
    if (added == nullptr) break;
    out.push_back(added->id);
    from = pos + added->content.size();
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 2);
  if (add_bos) {
    LG_USER_CHECK(bos_id_ >= 0, "tokenizer: asked for BOS but the tokenizer has no <|begin_of_text|>");
    ids.push_back(bos_id_);
  }
  encode_into(text, ids);
  return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    int32_t id = ids[i];
    LG_USER_CHECK(id >= 0 && id < vocab_size() && !id_to_bytes_[id].empty(), "tokenizer: id ", id,
                  " at position ", i, " is not in the vocabulary (0..", vocab_size() - 1, ")");
    out += id_to_bytes_[id];
  }
  return out;
}

}  // namespace lg::llm
