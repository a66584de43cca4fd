#include "llm/byte_level.h"

#include "llm/utf8.h"

namespace lg::llm {
namespace {

bool is_printable_byte(unsigned b) {
  return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

// Inverse of byte_to_char over U+0000..U+0143; -1 where no byte maps.
const std::array<int, 0x144>& char_to_byte_table() {
  static const std::array<int, 0x144> table = [] {
    std::array<int, 0x144> t;
    t.fill(-1);
    for (unsigned b = 0; b < 256; ++b) t[byte_to_char(static_cast<unsigned char>(b))] = static_cast<int>(b);
    return t;
  }();
  return table;
}

}  // namespace

char32_t byte_to_char(unsigned char b) {
  if (is_printable_byte(b)) return b;
  unsigned n = 0;  // number of non-printable bytes before b
  for (unsigned k = 0; k < b; ++k) n += is_printable_byte(k) ? 0 : 1;
  return 0x100 + n;
}

const std::array<std::string, 256>& byte_level_table() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    for (unsigned b = 0; b < 256; ++b) utf8_append(t[b], byte_to_char(static_cast<unsigned char>(b)));
    return t;
  }();
  return table;
}

std::optional<std::string> byte_level_decode(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  size_t bad = 0;
  for (size_t i = 0; i < token.size();) {
    size_t n = utf8_sequence_length(token, i, &bad);
    if (n == 0 || n > 2) return std::nullopt;  // every alphabet character is 1 or 2 bytes
    char32_t cp = n == 1 ? static_cast<unsigned char>(token[i])
                         : ((static_cast<unsigned char>(token[i]) & 0x1F) << 6) |
                               (static_cast<unsigned char>(token[i + 1]) & 0x3F);
    if (cp >= char_to_byte_table().size() || char_to_byte_table()[cp] < 0) return std::nullopt;
    out += static_cast<char>(char_to_byte_table()[cp]);
    i += n;
  }
  return out;
}

std::string byte_level_encode(std::string_view bytes) {
  const auto& table = byte_level_table();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += table[static_cast<unsigned char>(c)];
  return out;
}

}  // namespace lg::llm
