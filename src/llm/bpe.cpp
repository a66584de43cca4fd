#include "llm/bpe.h"

#include <queue>

#include "base/error.h"
#include "llm/byte_level.h"

namespace lg::llm {
namespace {

// One symbol of a word being merged: a doubly linked list over a vector. len == 0 marks a symbol
// absorbed into its left neighbour.
struct Symbol {
  int32_t id;
  int32_t prev, next;  // -1 at the ends
  int32_t len;         // bytes covered
};

// A candidate merge of the symbol at pos with its right neighbour. Ordered so the priority queue
// yields the lowest rank first, then the leftmost position (the Hugging Face order).
struct Candidate {
  int32_t rank, pos, id;
  bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

}  // namespace

Bpe::Bpe(StringIdMap vocab, const std::vector<std::pair<std::string, std::string>>& merges,
         bool ignore_merges, const std::string& origin)
    : vocab_(std::move(vocab)), ignore_merges_(ignore_merges) {
  const auto& table = byte_level_table();
  for (int b = 0; b < 256; ++b) {
    auto id = find(table[b]);
    LG_USER_CHECK(id.has_value(), origin, ": model.vocab lacks the byte-level token for byte ", b,
                  "; lazygrad needs a byte-level BPE vocabulary (all 256 bytes)");
    byte_ids_[b] = *id;
  }
  merges_.reserve(merges.size() * 2);
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    auto l = find(left), r = find(right), m = find(left + right);
    LG_USER_CHECK(l && r && m, origin, ": model.merges[", rank, "] \"", left, " ", right,
                  "\" names a token missing from model.vocab");
    merges_.emplace(pair_key(*l, *r), Merge{static_cast<int32_t>(rank), *m});  // first rank wins
  }
}

std::optional<int32_t> Bpe::find(std::string_view token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const Bpe::Merge* Bpe::find_merge(int32_t left, int32_t right) const {
  auto it = merges_.find(pair_key(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

void Bpe::encode_word(std::string_view bytes, std::vector<int32_t>& out) const {
  if (bytes.empty()) return;
  if (ignore_merges_) {
    if (auto id = find(byte_level_encode(bytes))) {
      out.push_back(*id);
      return;
    }
  }
  const int32_t n = static_cast<int32_t>(bytes.size());
  std::vector<Symbol> symbols(n);
  for (int32_t i = 0; i < n; ++i)
    symbols[i] = {byte_ids_[static_cast<unsigned char>(bytes[i])], i - 1, i + 1 < n ? i + 1 : -1, 1};
  std::priority_queue<Candidate> queue;
  auto push = [&](int32_t pos) {
    int32_t next = symbols[pos].next;
    if (next < 0) return;
    if (const Merge* m = find_merge(symbols[pos].id, symbols[next].id)) queue.push({m->rank, pos, m->id});
  };
  for (int32_t i = 0; i + 1 < n; ++i) push(i);
  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (left.len == 0 || left.next < 0) continue;
    const Merge* m = find_merge(left.id, symbols[left.next].id);
    if (m == nullptr || m->id != top.id) continue;  // stale: a neighbour changed since the push
    Symbol& right = symbols[left.next];
    left.id = top.id;
    left.len += right.len;
    right.len = 0;
    left.next = right.next;
    if (left.next >= 0) symbols[left.next].prev = top.pos;
    if (left.prev >= 0) push(left.prev);
    push(top.pos);
  }
  for (int32_t i = 0; i >= 0; i = symbols[i].next) out.push_back(symbols[i].id);
}

}  // namespace lg::llm
