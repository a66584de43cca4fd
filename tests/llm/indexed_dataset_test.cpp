// Megatron MMIDIDX v1 files: written and read back byte-exactly, checked against a hand-assembled
// file and against files from an independent Python writer; malformed files give clear errors.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "data_paths.h"
#include "llm/indexed_dataset.h"

namespace lg::llm {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

Bytes read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& p, const Bytes& b) {
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
}

template <class T>
void append(Bytes& b, T v) {
  uint8_t raw[sizeof(T)];
  std::memcpy(raw, &v, sizeof(T));
  b.insert(b.end(), raw, raw + sizeof(T));
}

// The .idx of two int32 documents of 3 and 1 tokens, assembled field by field from the spec.
Bytes hand_assembled_index() {
  Bytes b = {'M', 'M', 'I', 'D', 'I', 'D', 'X', 0, 0};
  append<uint64_t>(b, 1);   // version
  append<uint8_t>(b, 4);    // int32
  append<uint64_t>(b, 2);   // sequences
  append<uint64_t>(b, 3);   // document index entries
  append<int32_t>(b, 3);
  append<int32_t>(b, 1);    // lengths
  append<int64_t>(b, 0);
  append<int64_t>(b, 12);   // byte offsets
  append<int64_t>(b, 0);
  append<int64_t>(b, 1);
  append<int64_t>(b, 2);    // document index
  return b;
}

// Expects constructing the dataset to throw an lg::Error whose message contains each fragment.
void expect_error(const std::string& prefix, std::vector<std::string> fragments) {
  try {
    IndexedDataset ds(prefix);
    FAIL() << "no error for " << prefix;
  } catch (const Error& e) {
    for (const std::string& f : fragments) EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
  }
}

TEST(IndexedDataset, WriterMatchesHandAssembledFileAndReadsBack) {
  fs::path dir = testing::fresh_temp_dir("idx_write");
  std::string prefix = (dir / "d").string();
  IndexedDatasetWriter w(prefix, TokenDtype::I32);
  w.add_document(std::vector<int32_t>{128000, 5, 128255});
  w.add_document(std::vector<int32_t>{7});
  EXPECT_FALSE(fs::exists(idx_path(prefix)));  // nothing visible before finish
  w.finish();
  EXPECT_EQ(read_file(idx_path(prefix)), hand_assembled_index());
  Bytes bin;
  for (int32_t v : {128000, 5, 128255, 7}) append<int32_t>(bin, v);
  EXPECT_EQ(read_file(bin_path(prefix)), bin);
  EXPECT_EQ(fs::directory_iterator(dir)->path().string().find(".tmp"), std::string::npos);

  IndexedDataset ds(prefix);
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds.dtype(), TokenDtype::I32);
  EXPECT_EQ(ds.total_tokens(), 4u);
  auto d0 = ds.document<int32_t>(0);
  EXPECT_EQ(std::vector<int32_t>(d0.begin(), d0.end()), (std::vector<int32_t>{128000, 5, 128255}));
  int32_t out[2];
  ds.read(0, 1, 2, out);
  EXPECT_EQ(out[0], 5);
  EXPECT_EQ(out[1], 128255);
  fs::remove_all(dir);
}

TEST(IndexedDataset, UnfinishedWriterLeavesNoFiles) {
  fs::path dir = testing::fresh_temp_dir("idx_abandon");
  {
    IndexedDatasetWriter w((dir / "d").string(), TokenDtype::U16);
    w.add_document(std::vector<int32_t>{1, 2});
  }
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST(IndexedDataset, IdsThatDoNotFitTheDtypeAreUserErrors) {
  fs::path dir = testing::fresh_temp_dir("idx_fit");
  IndexedDatasetWriter w((dir / "d").string(), TokenDtype::U16);
  EXPECT_THROW(w.add_document(std::vector<int32_t>{70000}), Error);
  fs::remove_all(dir);
}

TEST(IndexedDataset, DtypeFollowsTheVocabularySize) {
  EXPECT_EQ(token_dtype_for_vocab(128256), TokenDtype::I32);
  EXPECT_EQ(token_dtype_for_vocab(65500), TokenDtype::I32);
  EXPECT_EQ(token_dtype_for_vocab(65499), TokenDtype::U16);
}

// Files from tests/llm/write_megatron.py (json, struct, array), an independent writer.
TEST(IndexedDataset, ReadsFilesOfAnIndependentPythonWriter) {
  if (std::system("command -v python3 >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3 is not installed";
  fs::path dir = testing::fresh_temp_dir("idx_python");
  std::string script = (testing::source_dir() / "tests" / "llm" / "write_megatron.py").string();
  for (int code : {4, 8}) {
    std::string prefix = (dir / ("p" + std::to_string(code))).string();
    std::string cmd = "python3 '" + script + "' '" + prefix + "' " + std::to_string(code) + " '[[1,2,3],[],[65535,7]]'";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    IndexedDataset ds(prefix);
    ASSERT_EQ(ds.size(), 3u);
    EXPECT_EQ(static_cast<int>(ds.dtype()), code);
    EXPECT_EQ(ds.lengths()[1], 0);
    int32_t out[2];
    ds.read(2, 0, 2, out);
    EXPECT_EQ(out[0], 65535);
    EXPECT_EQ(out[1], 7);
    // lazygrad writes the same bytes for the same documents
    std::string ours = (dir / ("ours" + std::to_string(code))).string();
    IndexedDatasetWriter w(ours, static_cast<TokenDtype>(code));
    for (auto doc : {std::vector<int32_t>{1, 2, 3}, std::vector<int32_t>{}, std::vector<int32_t>{65535, 7}}) w.add_document(doc);
    w.finish();
    EXPECT_EQ(read_file(idx_path(ours)), read_file(idx_path(prefix)));
    EXPECT_EQ(read_file(bin_path(ours)), read_file(bin_path(prefix)));
  }
  fs::remove_all(dir);
}

TEST(IndexedDataset, MalformedFilesGiveErrorsNamingTheProblem) {
  fs::path dir = testing::fresh_temp_dir("idx_bad");
  std::string p = (dir / "d").string();
  Bytes bin(16, 0);
  write_file(bin_path(p), bin);
  Bytes good = hand_assembled_index();

  expect_error((dir / "missing").string(), {"missing.idx", "preprocess"});
  write_file(idx_path(p), Bytes(good.begin(), good.begin() + 20));
  expect_error(p, {"d.idx", "shorter than the 34-byte"});
  Bytes bad_magic = good;
  bad_magic[0] = 'X';
  write_file(idx_path(p), bad_magic);
  expect_error(p, {"d.idx", "magic"});
  Bytes bad_version = good;
  bad_version[9] = 2;
  write_file(idx_path(p), bad_version);
  expect_error(p, {"version 2"});
  Bytes bad_dtype = good;
  bad_dtype[17] = 7;  // float32
  write_file(idx_path(p), bad_dtype);
  expect_error(p, {"dtype code 7"});
  write_file(idx_path(p), Bytes(good.begin(), good.end() - 8));
  expect_error(p, {"truncated or corrupt"});
  write_file(idx_path(p), good);
  write_file(bin_path(p), Bytes(12, 0));  // the second document (bytes 12..16) is cut off
  expect_error(p, {"sequence 1", "d.bin", "truncated .bin"});
  write_file(bin_path(p), bin);
  EXPECT_NO_THROW(IndexedDataset{p});
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lg::llm
