#pragma once
// UTF-8 validity and the lossy decoding policy of the tokenizer.
//
// Policy for invalid UTF-8 (documented in docs/data.md): every maximal ill-formed subpart is replaced
// by U+FFFD ("\xEF\xBF\xBD"), the Unicode Standard's recommended practice (chapter 3, "U+FFFD
// Substitution of Maximal Subparts"). It is exactly what Rust's String::from_utf8_lossy does (so what
// the Hugging Face tokenizer sees when bytes become a Rust string), and what the WHATWG TextDecoder and
// Node's Buffer.toString("utf8") do (so what the JavaScript reference sees).
#include <cstddef>
#include <string>
#include <string_view>

namespace lg::llm {

// Length of the well-formed UTF-8 sequence starting at s[i], or 0 when it is ill-formed. When 0,
// *bad_len receives the length of the maximal ill-formed subpart there (>= 1).
size_t utf8_sequence_length(std::string_view s, size_t i, size_t* bad_len);

bool utf8_is_valid(std::string_view s);

// s with each maximal ill-formed subpart replaced by U+FFFD; s itself when it is valid.
std::string utf8_lossy(std::string_view s);

// Appends the UTF-8 encoding of code point cp (< 0x110000, not a surrogate) to out.
void utf8_append(std::string& out, char32_t cp);

}  // namespace lg::llm
