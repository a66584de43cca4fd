// lazygrad tokenize: standard input -> token ids on one line (or ids -> text with --decode).
#include <cctype>
#include <climits>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "apps/commands.h"
#include "base/error.h"
#include "llm/tokenizer.h"

namespace lg::apps {
namespace {

struct TokenizeOptions {
  std::string tokenizer;
  bool bos = false;
  bool decode = false;
};

std::string read_stdin() {
  std::ios::sync_with_stdio(false);
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

// Whitespace-separated decimal ids -> ids; anything else is a user error naming the word.
std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  size_t i = 0, word = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i == text.size()) break;
    size_t end = i;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    std::string w = text.substr(i, end - i);
    ++word;
    LG_USER_CHECK(w.size() <= 10 && w.find_first_not_of("0123456789") == std::string::npos,
                  "tokenize --decode: word ", word, " of standard input (\"", w.substr(0, 20),
                  "\") is not a token id; give space-separated non-negative integers");
    long long v = std::stoll(w);
    LG_USER_CHECK(v <= INT32_MAX, "tokenize --decode: id ", w, " is too large");
    ids.push_back(static_cast<int32_t>(v));
    i = end;
  }
  return ids;
}

void run_tokenize(const TokenizeOptions& o) {
  llm::Tokenizer tok = llm::Tokenizer::load(o.tokenizer);
  std::string input = read_stdin();
  if (o.decode) {
    std::vector<int32_t> ids = parse_ids(input);
    std::string text = tok.decode(ids);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  std::vector<int32_t> ids = tok.encode(input, o.bos);
  std::string line;
  line.reserve(ids.size() * 7);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) line += ' ';
    line += std::to_string(ids[i]);
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto o = std::make_shared<TokenizeOptions>();
  auto* cmd = app.add_subcommand(
      "tokenize", "tokenize standard input with a Hugging Face tokenizer.json; print the ids on one line");
  cmd->add_option("--tokenizer", o->tokenizer, "tokenizer.json, or a directory holding one")->required();
  cmd->add_flag("--bos", o->bos, "prepend <|begin_of_text|> (encoding only)");
  cmd->add_flag("--decode", o->decode, "read space-separated ids and print the text they stand for");
  cmd->callback([o] { run_tokenize(*o); });
}

}  // namespace lg::apps
