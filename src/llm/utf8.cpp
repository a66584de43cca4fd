#include "llm/utf8.h"

#include "base/error.h"

namespace lg::llm {
namespace {

// The allowed range of the second byte of a sequence led by b (Unicode Table 3-7); the third and
// fourth bytes are always 0x80..0xBF.
struct Lead {
  int length;                  // 0: b never starts a well-formed sequence
  unsigned char lo, hi;        // second-byte range
};

Lead lead_of(unsigned char b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

}  // namespace

size_t utf8_sequence_length(std::string_view s, size_t i, size_t* bad_len) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  Lead lead = lead_of(at(i));
  if (lead.length == 1) return 1;
  *bad_len = 1;
  if (lead.length == 0) return 0;
  if (i + 1 >= s.size() || at(i + 1) < lead.lo || at(i + 1) > lead.hi) return 0;
  for (int k = 2; k < lead.length; ++k) {
    *bad_len = static_cast<size_t>(k);
    if (i + k >= s.size() || at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  }
  return static_cast<size_t>(lead.length);
}

bool utf8_is_valid(std::string_view s) {
  size_t bad = 0;
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t n = utf8_sequence_length(s, i, &bad);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string utf8_lossy(std::string_view s) {
  if (utf8_is_valid(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 16);
  size_t bad = 0;
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_sequence_length(s, i, &bad);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      i += bad;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

void utf8_append(std::string& out, char32_t cp) {
  LG_CHECK(cp < 0x110000 && (cp < 0xD800 || cp > 0xDFFF), "not a scalar value: ", uint32_t(cp));
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace lg::llm
