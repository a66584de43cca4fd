// lazygrad preprocess: JSON lines (plain and .gz) -> a Megatron dataset with the tokenizer's ids;
// bad lines reported with file and line, skipped or fatal (--strict); empty documents skipped.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "common/user_error.h"
#include "data_paths.h"
#include "llm/indexed_dataset.h"
#include "llm/preprocess.h"
#include "tiny_tokenizer.h"

namespace lg::llm {
namespace {

namespace fs = std::filesystem;

const char* kLines =
    "{\"text\": \"ab c\", \"id\": 1}\n"
    "{\"text\": \"\"}\n"              // empty: skipped
    "not json\n"                      // bad: line 3
    "{\"txt\": \"x\"}\n"              // bad: line 4
    "\n"                              // blank: an empty document
    "{\"text\": \"<|s|>\\u00e9\"}";   // no final newline

std::vector<int32_t> document(const IndexedDataset& ds, size_t i) {
  std::vector<int32_t> out(ds.lengths()[i]);
  ds.read(i, 0, out.size(), out.data());
  return out;
}

class Preprocess : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::fresh_temp_dir("preprocess"); }
  void TearDown() override { fs::remove_all(dir_); }
  PreprocessOptions options(const std::string& input) {
    PreprocessOptions o;
    o.inputs = {input};
    o.output_prefix = (dir_ / "out").string();
    o.workers = 2;
    return o;
  }
  fs::path dir_;
  Tokenizer tok_ = Tokenizer::from_json(testing::tiny_tokenizer_json({"a b"}, false), "tiny");
};

TEST_F(Preprocess, TokenizesTextFieldsSkippingEmptyAndBadLines) {
  fs::path in = dir_ / "in.jsonl";
  std::ofstream(in, std::ios::binary) << kLines;
  PreprocessStats s = preprocess(options(in.string()), tok_);
  EXPECT_EQ(s.lines, 6u);
  EXPECT_EQ(s.documents, 2u);
  EXPECT_EQ(s.empty, 2u);
  EXPECT_EQ(s.bad, 2u);
  ASSERT_EQ(s.bad_examples.size(), 2u);
  EXPECT_EQ(s.bad_examples[0], in.string() + ":3: invalid JSON");
  EXPECT_EQ(s.bad_examples[1], in.string() + ":4: no string field \"text\"");
  IndexedDataset ds(document_prefix(options(in.string()).output_prefix));
  EXPECT_EQ(ds.dtype(), TokenDtype::U16);  // a vocabulary of 1003 ids
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(document(ds, 0), (std::vector<int32_t>{256, ' ', 'c'}));
  EXPECT_EQ(document(ds, 1), (std::vector<int32_t>{1000, 0xC3, 0xA9}));
}

TEST_F(Preprocess, AppendEodEndsEveryDocument) {
  fs::path in = dir_ / "in.jsonl";
  std::ofstream(in, std::ios::binary) << "{\"text\": \"c\"}\n{\"text\": \"\"}\n";
  PreprocessOptions o = options(in.string());
  o.append_eod = true;
  preprocess(o, tok_);
  IndexedDataset ds(document_prefix(o.output_prefix));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(document(ds, 0), (std::vector<int32_t>{'c', 1002}));
}

TEST_F(Preprocess, StrictStopsAtTheFirstBadLineAndWritesNothing) {
  fs::path in = dir_ / "in.jsonl";
  std::ofstream(in, std::ios::binary) << kLines;
  PreprocessOptions o = options(in.string());
  o.strict = true;
  try {
    preprocess(o, tok_);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(in.string() + ":3: invalid JSON"), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);  // only the input
}

TEST_F(Preprocess, ReadsGzipInputAndRejectsTruncatedGzip) {
  fs::path gz = dir_ / "in.jsonl.gz";
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "{\"text\": \"ab ab c " + std::to_string(i) + "\"}\n";
  gzFile f = gzopen(gz.string().c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  PreprocessStats s = preprocess(options(gz.string()), tok_);
  EXPECT_EQ(s.documents, 3000u);
  EXPECT_EQ(s.bytes, text.size());
  IndexedDataset ds(document_prefix(options(gz.string()).output_prefix));
  EXPECT_EQ(document(ds, 2999), tok_.encode("ab ab c 2999"));

  auto size = fs::file_size(gz);
  fs::resize_file(gz, size / 2);
  try {
    preprocess(options(gz.string()), tok_);
    FAIL() << "no error for a truncated .gz";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("in.jsonl.gz"), std::string::npos) << e.what();
  }
}

TEST_F(Preprocess, InputsWithoutDocumentsAreAnErrorAndWriteNothing) {
  fs::path empty = dir_ / "empty.jsonl", bad = dir_ / "bad.jsonl";
  std::ofstream(empty, std::ios::binary) << "";
  std::ofstream(bad, std::ios::binary) << "{\"text\": \"\"}\n{\"txt\": \"x\"}\nnope\n";
  PreprocessOptions o = options(empty.string());
  EXPECT_EQ(
      testing_util::error_of([&] { preprocess(o, tok_); }),
      "preprocess: no documents in --input " + empty.string() +
          " (0 lines: 0 empty, 0 bad); nothing written. Each line must be a JSON object with a non-empty "
          "string field \"text\"");
  o.inputs = {empty.string(), bad.string()};
  EXPECT_EQ(testing_util::error_of([&] { preprocess(o, tok_); }),
            "preprocess: no documents in --input " + empty.string() + ", " + bad.string() +
                " (3 lines: 1 empty, 2 bad, the first: " + bad.string() +
                ":2: no string field \"text\"); nothing written. Each line must be a JSON object with a "
                "non-empty string field \"text\"");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);  // only the inputs
}

TEST_F(Preprocess, CreatesTheDirectoryOfTheOutputPrefix) {
  fs::path in = dir_ / "in.jsonl";
  std::ofstream(in, std::ios::binary) << "{\"text\": \"c\"}\n";
  PreprocessOptions o = options(in.string());
  o.output_prefix = (dir_ / "a" / "b" / "c4").string();
  preprocess(o, tok_);
  EXPECT_EQ(IndexedDataset(document_prefix(o.output_prefix)).size(), 1u);
  std::ofstream(dir_ / "file") << "x";
  o.output_prefix = (dir_ / "file" / "c4").string();
  EXPECT_EQ(testing_util::error_of([&] { preprocess(o, tok_); }),
            "cannot create the directory of --output-prefix " + (dir_ / "file").string() +
                ": Not a directory; give a directory you can write");
}

TEST_F(Preprocess, WorkerCountDoesNotChangeTheOutput) {
  fs::path in = dir_ / "in.jsonl";
  {
    std::ofstream out(in, std::ios::binary);
    for (int i = 0; i < 10000; ++i) out << "{\"text\": \"doc " << i << " ab" << std::string(i % 7, ' ') << "c\"}\n";
  }
  auto run = [&](int workers, const std::string& name) {
    PreprocessOptions o = options(in.string());
    o.workers = workers;
    o.output_prefix = (dir_ / name).string();
    preprocess(o, tok_);
    std::ifstream a(bin_path(document_prefix(o.output_prefix)), std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(a)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(run(1, "one"), run(3, "three"));
}

}  // namespace
}  // namespace lg::llm
