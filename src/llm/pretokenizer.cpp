#include "llm/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/error.h"

namespace lg::llm {

struct PreTokenizer::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

namespace {

// Per-thread matching state, shared by all patterns: PCRE2 match data and a JIT stack large enough
// for long whitespace runs with the (?!\S) lookahead.
struct MatchState {
  pcre2_match_data* data = pcre2_match_data_create(16, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 16 * 1024 * 1024, nullptr);
  MatchState() { pcre2_jit_stack_assign(context, nullptr, stack); }
  ~MatchState() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
};

MatchState& match_state() {
  thread_local MatchState state;
  return state;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof(buffer));
  return reinterpret_cast<const char*>(buffer);
}

// Length of the UTF-8 character starting with byte b (text is valid UTF-8).
size_t char_length(unsigned char b) { return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4; }

}  // namespace

std::string translate_whitespace(std::string_view pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      char e = pattern[++i];
      if (e == 's') {
        out += in_class ? "\\s\\x{85}" : "[\\s\\x{85}]";
      } else if (e == 'S') {
        LG_USER_CHECK(!in_class, "tokenizer: pre-tokenizer regex uses \\S inside a character class, ",
                      "which lazygrad cannot map to Unicode White_Space: ", pattern);
        out += "[^\\s\\x{85}]";
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];  // literal ']'
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

PreTokenizer::PreTokenizer(const std::string& pattern) : code_(std::make_unique<Code>()) {
  std::string translated = translate_whitespace(pattern);
  int error = 0;
  PCRE2_SIZE offset = 0;
  code_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                              PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  LG_USER_CHECK(code_->code != nullptr, "tokenizer: pre-tokenizer regex does not compile (",
                pcre2_message(error), " at offset ", offset, "): ", pattern);
  pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE);  // without JIT support pcre2_match interprets
}

PreTokenizer::~PreTokenizer() = default;

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& out) const {
  MatchState& state = match_state();
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0, last = 0;
  while (pos <= text.size()) {
    int rc = pcre2_match(code_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, state.data,
                         state.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    LG_USER_CHECK(rc >= 0, "tokenizer: regex match failed (", pcre2_message(rc), ") at byte ", pos,
                  " of a ", text.size(), "-byte text");
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.data);
    size_t begin = ovector[0], end = ovector[1];
    if (begin > last) out.push_back(text.substr(last, begin - last));
    if (end > begin) out.push_back(text.substr(begin, end - begin));
    last = end;
    if (end > begin) {
      pos = end;
    } else {  // an empty match: step over one character
      if (begin >= text.size()) break;
      pos = begin + char_length(static_cast<unsigned char>(text[begin]));
    }
  }
  if (last < text.size()) out.push_back(text.substr(last));
}

}  // namespace lg::llm
