#include "llm/indexed_dataset.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/error.h"

namespace lg::llm {
namespace {

constexpr char kMagic[9] = {'M', 'M', 'I', 'D', 'I', 'D', 'X', 0, 0};
constexpr size_t kHeaderSize = 34;

template <class T>
void put(std::vector<uint8_t>& out, T v) {  // little-endian hosts only (x86-64, aarch64)
  // resize + memcpy: GCC 12 at -O3 misreads an insert of the value's bytes as out of bounds
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

template <class T>
T get(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

bool is_token_dtype(uint8_t code) { return code == 1 || code == 2 || code == 3 || code == 4 || code == 5 || code == 8; }

// Range of ids each dtype holds.
bool fits(TokenDtype d, int32_t id) {
  switch (d) {
    case TokenDtype::U8: return id >= 0 && id <= 255;
    case TokenDtype::I8: return id >= -128 && id <= 127;
    case TokenDtype::I16: return id >= -32768 && id <= 32767;
    case TokenDtype::U16: return id >= 0 && id <= 65535;
    case TokenDtype::I32:
    case TokenDtype::I64: return true;
  }
  return false;
}

}  // namespace

size_t dtype_size(TokenDtype d) {
  switch (d) {
    case TokenDtype::U8:
    case TokenDtype::I8: return 1;
    case TokenDtype::I16:
    case TokenDtype::U16: return 2;
    case TokenDtype::I32: return 4;
    case TokenDtype::I64: return 8;
  }
  LG_CHECK(false, "unknown dtype");
}

TokenDtype token_dtype_for_vocab(int64_t vocab_size) { return vocab_size >= 65500 ? TokenDtype::I32 : TokenDtype::U16; }

std::string bin_path(const std::string& prefix) { return prefix + ".bin"; }
std::string idx_path(const std::string& prefix) { return prefix + ".idx"; }

void require_dataset_files(const std::string& who, const std::string& prefix, const std::string& hint) {
  for (const std::string& file : {idx_path(prefix), bin_path(prefix)})
    LG_USER_CHECK(std::filesystem::is_regular_file(file), who, " ", prefix, ": no file ", file, " (", hint,
                  ")");
}

std::vector<uint8_t> encode_index(TokenDtype dtype, std::span<const int32_t> lengths) {
  std::vector<uint8_t> out(kMagic, kMagic + sizeof(kMagic));
  const uint64_t n = lengths.size();
  put<uint64_t>(out, 1);
  put<uint8_t>(out, static_cast<uint8_t>(dtype));
  put<uint64_t>(out, n);
  put<uint64_t>(out, n + 1);
  out.reserve(kHeaderSize + 20 * n + 8);
  for (int32_t len : lengths) put<int32_t>(out, len);
  int64_t offset = 0;
  for (int32_t len : lengths) {
    put<int64_t>(out, offset);
    offset += static_cast<int64_t>(len) * static_cast<int64_t>(dtype_size(dtype));
  }
  for (uint64_t i = 0; i <= n; ++i) put<int64_t>(out, static_cast<int64_t>(i));
  return out;
}

// ---- writer ----

IndexedDatasetWriter::IndexedDatasetWriter(const std::string& prefix, TokenDtype dtype)
    : prefix_(prefix), dtype_(dtype) {
  std::string suffix = ".tmp." + std::to_string(getpid());
  bin_tmp_ = bin_path(prefix) + suffix;
  idx_tmp_ = idx_path(prefix) + suffix;
  bin_ = std::fopen(bin_tmp_.c_str(), "wb");
  LG_USER_CHECK(bin_ != nullptr, "cannot create ", bin_tmp_, ": ", std::strerror(errno),
                " (does the directory of the output prefix exist and is it writable?)");
}

IndexedDatasetWriter::~IndexedDatasetWriter() {
  if (bin_ != nullptr) std::fclose(bin_);
  if (!finished_) {
    std::remove(bin_tmp_.c_str());
    std::remove(idx_tmp_.c_str());
  }
}

void IndexedDatasetWriter::add_document(std::span<const int32_t> ids) {
  LG_CHECK(!finished_, "add_document after finish");
  LG_USER_CHECK(ids.size() <= INT32_MAX, prefix_, ": document ", lengths_.size(), " has ", ids.size(),
                " tokens, more than an int32 length holds");
  const size_t item = dtype_size(dtype_);
  buffer_.resize(ids.size() * item);
  for (size_t i = 0; i < ids.size(); ++i) {
    LG_USER_CHECK(fits(dtype_, ids[i]), prefix_, ": document ", lengths_.size(), " has id ", ids[i],
                  " which does not fit the dataset's dtype code ", int(dtype_), " (use int32 for this vocabulary)");
    int64_t v = ids[i];
    std::memcpy(buffer_.data() + i * item, &v, item);  // little-endian: the low bytes come first
  }
  LG_USER_CHECK(std::fwrite(buffer_.data(), 1, buffer_.size(), bin_) == buffer_.size(), "writing ", bin_tmp_,
                " failed: ", std::strerror(errno), " (disk full?)");
  lengths_.push_back(static_cast<int32_t>(ids.size()));
  tokens_ += ids.size();
}

void IndexedDatasetWriter::finish() {
  LG_CHECK(!finished_, "finish twice");
  LG_USER_CHECK(std::fclose(bin_) == 0, "closing ", bin_tmp_, " failed: ", std::strerror(errno));
  bin_ = nullptr;
  std::vector<uint8_t> index = encode_index(dtype_, lengths_);
  {
    std::ofstream out(idx_tmp_, std::ios::binary);
    out.write(reinterpret_cast<const char*>(index.data()), static_cast<std::streamsize>(index.size()));
    LG_USER_CHECK(out.good(), "writing ", idx_tmp_, " failed (disk full?)");
  }
  std::filesystem::rename(bin_tmp_, bin_path(prefix_));
  std::filesystem::rename(idx_tmp_, idx_path(prefix_));
  finished_ = true;
}

// ---- reader ----

struct IndexedDataset::Mapping {
  void* data = nullptr;
  size_t size = 0;
  // Maps path read-only (an empty file maps to nothing); hint ends the error when it cannot.
  Mapping(const std::string& path, const char* hint) {
    int fd = open(path.c_str(), O_RDONLY);
    LG_USER_CHECK(fd >= 0, "cannot open ", path, ": ", std::strerror(errno), hint);
    struct stat st;
    fstat(fd, &st);
    size = static_cast<size_t>(st.st_size);
    if (size > 0) {
      data = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
      if (data == MAP_FAILED) data = nullptr;
    }
    close(fd);
    LG_USER_CHECK(size == 0 || data != nullptr, "cannot map ", path, ": ", std::strerror(errno));
  }
  ~Mapping() {
    if (data != nullptr) munmap(data, size);
  }
  const uint8_t* bytes() const { return static_cast<const uint8_t*>(data); }
};

IndexedDataset::IndexedDataset(const std::string& prefix) {
  constexpr const char* hint =
      " (a dataset is a .bin and an .idx with the same prefix; make one with `lazygrad preprocess`)";
  read_index(Mapping(idx_path(prefix), hint), idx_path(prefix));
  bin_ = std::make_unique<Mapping>(bin_path(prefix), hint);
  bin_data_ = bin_->bytes();
  validate(prefix, bin_->size);
}

IndexedDataset::~IndexedDataset() = default;

// Copies the .idx arrays out of the mapping (they are unaligned in the file).
void IndexedDataset::read_index(const Mapping& idx, const std::string& path) {
  const uint8_t* b = idx.bytes();
  const uint64_t size = idx.size;
  LG_USER_CHECK(size >= kHeaderSize, path, ": ", size, " bytes, shorter than the 34-byte MMIDIDX header (truncated?)");
  LG_USER_CHECK(std::memcmp(b, kMagic, sizeof(kMagic)) == 0, path,
                ": bad magic (want \"MMIDIDX\\0\\0\"): not a Megatron indexed dataset index");
  uint64_t version = get<uint64_t>(&b[9]);
  LG_USER_CHECK(version == 1, path, ": version ", version, ", lazygrad reads version 1");
  uint8_t code = b[17];
  LG_USER_CHECK(is_token_dtype(code), path, ": dtype code ", int(code),
                " is not an integer token type (1 uint8, 2 int8, 3 int16, 4 int32, 5 int64, 8 uint16)");
  dtype_ = static_cast<TokenDtype>(code);
  uint64_t n = get<uint64_t>(&b[18]), d = get<uint64_t>(&b[26]);
  LG_USER_CHECK(n < (uint64_t{1} << 40) && d < (uint64_t{1} << 40) && size == kHeaderSize + 12 * n + 8 * d,
                path, ": ", size, " bytes, but the header's counts (", n, " sequences, ", d,
                " document index entries) need ", kHeaderSize + 12 * n + 8 * d, " (truncated or corrupt)");
  lengths_.resize(n);
  offsets_.resize(n);
  doc_index_.resize(d);
  std::memcpy(lengths_.data(), &b[kHeaderSize], 4 * n);
  std::memcpy(offsets_.data(), &b[kHeaderSize + 4 * n], 8 * n);
  std::memcpy(doc_index_.data(), &b[kHeaderSize + 12 * n], 8 * d);
  total_tokens_ = 0;
  for (int32_t len : lengths_) total_tokens_ += static_cast<uint64_t>(std::max(len, 0));
}

void IndexedDataset::validate(const std::string& prefix, uint64_t bin_size) const {
  const std::string idx = idx_path(prefix);
  const uint64_t item = dtype_size(dtype_);
  for (size_t i = 0; i < lengths_.size(); ++i) {
    LG_USER_CHECK(lengths_[i] >= 0, idx, ": sequence ", i, " has negative length ", lengths_[i]);
    LG_USER_CHECK(offsets_[i] >= 0 && offsets_[i] % item == 0 &&
                      uint64_t(offsets_[i]) + uint64_t(lengths_[i]) * item <= bin_size,
                  idx, ": sequence ", i, " (offset ", offsets_[i], ", ", lengths_[i], " tokens of ", item,
                  " bytes) lies outside ", bin_path(prefix), " (", bin_size, " bytes): truncated .bin or a mismatched pair");
  }
  LG_USER_CHECK(!doc_index_.empty() && doc_index_.front() == 0 &&
                    doc_index_.back() == static_cast<int64_t>(lengths_.size()),
                idx, ": the document index must start at 0 and end at the sequence count ", lengths_.size());
  for (size_t i = 1; i < doc_index_.size(); ++i)
    LG_USER_CHECK(doc_index_[i] >= doc_index_[i - 1], idx, ": document index decreases at entry ", i);
}

void IndexedDataset::read(size_t i, size_t begin, size_t count, int32_t* out) const {
  LG_CHECK(i < size() && begin + count <= static_cast<size_t>(lengths_[i]), "read past document ", i);
  const uint8_t* p = bin_data_ + offsets_[i];
  switch (dtype_) {
    case TokenDtype::I32: std::memcpy(out, p + 4 * begin, 4 * count); return;
    case TokenDtype::U16: for (size_t k = 0; k < count; ++k) out[k] = get<uint16_t>(p + 2 * (begin + k)); return;
    case TokenDtype::I16: for (size_t k = 0; k < count; ++k) out[k] = get<int16_t>(p + 2 * (begin + k)); return;
    case TokenDtype::U8: for (size_t k = 0; k < count; ++k) out[k] = p[begin + k]; return;
    case TokenDtype::I8: for (size_t k = 0; k < count; ++k) out[k] = static_cast<int8_t>(p[begin + k]); return;
    case TokenDtype::I64:
      for (size_t k = 0; k < count; ++k) out[k] = static_cast<int32_t>(get<int64_t>(p + 8 * (begin + k)));
      return;
  }
}

}  // namespace lg::llm
