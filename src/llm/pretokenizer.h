#pragma once
// The regex pre-tokenizer of a Hugging Face "Split" step (behavior "Isolated"): the text is cut into
// the pattern's successive leftmost matches and the gaps between them, in order; the pieces tile
// the text exactly. Runs on PCRE2 with UTF and Unicode properties (UCP), JIT-compiled.
//
// The Hugging Face tokenizer runs these patterns on Oniguruma, where \s is the Unicode White_Space
// property. PCRE2's \s under UCP is "Z category or \t\n\v\f\r", which lacks U+0085 (NEXT LINE); the
// pattern is translated so \s and \S mean White_Space exactly (translate_whitespace).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lg::llm {

// The pattern with \s -> [\s\x{85}] (or \s\x{85} inside a class) and \S -> [^\s\x{85}]. A \S inside
// a character class cannot be rewritten this way: user error.
std::string translate_whitespace(std::string_view pattern);

class PreTokenizer {
 public:
  // Compiles a pattern in the Hugging Face (Oniguruma) dialect; bad patterns are user errors.
  explicit PreTokenizer(const std::string& pattern);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Appends the pieces of text (valid UTF-8) to out, in order. Thread-safe.
  void split(std::string_view text, std::vector<std::string_view>& out) const;

 private:
  struct Code;
  std::unique_ptr<Code> code_;
};

}  // namespace lg::llm
