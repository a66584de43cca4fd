#pragma once
// The GPT-2 byte-level alphabet: each of the 256 byte values is shown as one printable Unicode
// character, so a token's vocabulary string is the concatenation of its bytes' characters.
// Bytes 0x21..0x7E, 0xA1..0xAC, 0xAE..0xFF map to the code point of the same value; the other 68
// bytes map, in increasing byte order, to U+0100, U+0101, ... (so ' ' is U+0120 "Ġ", '\n' is U+010A "Ċ").
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace lg::llm {

// The code point that represents byte b.
char32_t byte_to_char(unsigned char b);

// The UTF-8 text of the character of each byte (256 entries).
const std::array<std::string, 256>& byte_level_table();

// The bytes a vocabulary string stands for; nullopt when a character is not in the alphabet or the
// string is not valid UTF-8.
std::optional<std::string> byte_level_decode(std::string_view token);

// The vocabulary string of raw bytes.
std::string byte_level_encode(std::string_view bytes);

}  // namespace lg::llm
