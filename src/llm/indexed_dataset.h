#pragma once
// Megatron's indexed dataset ("MMIDIDX" version 1): token ids of many documents in one .bin, and an
// .idx describing them. Little-endian throughout:
//
//   .idx  0   9 bytes   magic "MMIDIDX\0\0"
//         9   u64       version = 1
//         17  u8        dtype code: 1 uint8, 2 int8, 3 int16, 4 int32, 5 int64, 6 float64, 7 float32, 8 uint16
//         18  u64       N, the number of sequences
//         26  u64       D, the length of the document index (N+1 when every sequence is a document)
//         34  int32[N]  sequence lengths in tokens
//             int64[N]  byte offset of each sequence in .bin
//             int64[D]  document index: sequence numbers where documents start, 0 first, N last
//   .bin  the sequences' tokens back to back, each of dtype
//
// lazygrad writes one sequence per document (as Megatron's preprocess_data.py does for C4), so a
// "document" below is a sequence. Token files use int32 for vocabularies of 65,500 or more, else uint16.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"

namespace lg::llm {

enum class TokenDtype : uint8_t { U8 = 1, I8 = 2, I16 = 3, I32 = 4, I64 = 5, U16 = 8 };

size_t dtype_size(TokenDtype d);
TokenDtype token_dtype_for_vocab(int64_t vocab_size);  // I32 at 65,500 and above, else U16

// "P.bin" and "P.idx" of a dataset prefix P (e.g. "data/brown/brown-train_text_document").
std::string bin_path(const std::string& prefix);
std::string idx_path(const std::string& prefix);
// Checks that both files of the dataset prefix exist before any work starts; a user error
// "<who> <prefix>: no file <file> (<hint>)" otherwise (who: e.g. "train: --train-data").
void require_dataset_files(const std::string& who, const std::string& prefix,
                           const std::string& hint =
                               "a dataset is a .bin and an .idx with the same prefix; "
                               "make one with `lazygrad preprocess`");

// The .idx bytes for the given sequence lengths (offsets are the running sums; one document per
// sequence).
std::vector<uint8_t> encode_index(TokenDtype dtype, std::span<const int32_t> lengths);

// Writes a dataset into temporary files next to the prefix; finish() renames them into place (.bin
// first, then .idx), so readers never see a partial dataset. Destroying an unfinished writer removes
// the temporaries.
class IndexedDatasetWriter {
 public:
  IndexedDatasetWriter(const std::string& prefix, TokenDtype dtype);
  ~IndexedDatasetWriter();
  IndexedDatasetWriter(const IndexedDatasetWriter&) = delete;
  IndexedDatasetWriter& operator=(const IndexedDatasetWriter&) = delete;

  // Appends one document. Ids must fit the dtype (user error naming the document otherwise).
  void add_document(std::span<const int32_t> ids);
  void finish();
  size_t documents() const { return lengths_.size(); }
  uint64_t tokens() const { return tokens_; }

 private:
  std::string prefix_, bin_tmp_, idx_tmp_;
  TokenDtype dtype_;
  std::FILE* bin_ = nullptr;
  std::vector<int32_t> lengths_;
  std::vector<uint8_t> buffer_;
  uint64_t tokens_ = 0;
  bool finished_ = false;
};

// A read-only dataset: the .bin memory-mapped, the .idx's arrays copied into memory (they are not
// aligned in the file: int32 lengths start at byte 34). Opening validates the header and every length and offset
// against the file sizes; problems are user errors naming the file, the field and the fix.
class IndexedDataset {
 public:
  explicit IndexedDataset(const std::string& prefix);
  ~IndexedDataset();
  IndexedDataset(const IndexedDataset&) = delete;
  IndexedDataset& operator=(const IndexedDataset&) = delete;

  TokenDtype dtype() const { return dtype_; }
  size_t size() const { return lengths_.size(); }  // documents
  std::span<const int32_t> lengths() const { return lengths_; }
  std::span<const int64_t> offsets() const { return offsets_; }  // byte offsets into .bin
  std::span<const int64_t> document_index() const { return doc_index_; }
  uint64_t total_tokens() const { return total_tokens_; }

  // Document i as a span of T (T must match dtype(): LG_CHECK).
  template <class T>
  std::span<const T> document(size_t i) const {
    LG_CHECK(sizeof(T) == dtype_size(dtype_) && i < size(), "document<T>: wrong type or index ", i);
    return {reinterpret_cast<const T*>(bin_data_ + offsets_[i]), static_cast<size_t>(lengths_[i])};
  }
  // Tokens [begin, begin+count) of document i as int32, whatever the dtype.
  void read(size_t i, size_t begin, size_t count, int32_t* out) const;

 private:
  struct Mapping;
  void read_index(const Mapping& idx, const std::string& path);
  void validate(const std::string& path, uint64_t bin_size) const;

  std::unique_ptr<Mapping> bin_;
  TokenDtype dtype_ = TokenDtype::I32;
  const uint8_t* bin_data_ = nullptr;
  std::vector<int32_t> lengths_;
  std::vector<int64_t> offsets_, doc_index_;
  uint64_t total_tokens_ = 0;
};

}  // namespace lg::llm
