#include "llm/sampler.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "base/error.h"

namespace lg::llm {
namespace {

// Uniform integer in [0, bound] from a 64-bit generator, by rejection (no modulo bias).
uint64_t uniform_up_to(std::mt19937_64& rng, uint64_t bound) {
  if (bound == UINT64_MAX) return rng();
  const uint64_t range = bound + 1;
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % range + 1) % range;  // accept v <= limit
  uint64_t v;
  do v = rng();
  while (v > limit);
  return v % range;
}

void shuffle(std::vector<uint32_t>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[uniform_up_to(rng, i - 1)]);
}

// Stream start offsets of documents in the given order (size D+1).
std::vector<uint64_t> stream_starts(const IndexedDataset& data, const std::vector<uint32_t>& documents) {
  std::vector<uint64_t> starts(documents.size() + 1, 0);
  for (size_t i = 0; i < documents.size(); ++i) starts[i + 1] = starts[i] + static_cast<uint64_t>(data.lengths()[documents[i]]);
  return starts;
}

std::vector<uint32_t> identity(size_t n) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

uint64_t windows_of(uint64_t tokens, int64_t seq_len) {
  return tokens < static_cast<uint64_t>(seq_len) + 1 ? 0 : (tokens - 1) / static_cast<uint64_t>(seq_len);
}

}  // namespace

std::vector<uint32_t> seeded_permutation(uint32_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> v = identity(n);
  shuffle(v, rng);
  return v;
}

void read_stream(const IndexedDataset& data, const std::vector<uint32_t>& documents,
                 const std::vector<uint64_t>& starts, uint64_t begin, uint64_t count, int32_t* out) {
  LG_CHECK(begin + count <= starts.back(), "window past the end of the stream");
  // the last document starting at or before `begin` (empty documents share starts: skip them below)
  size_t d = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), begin) - starts.begin()) - 1;
  while (count > 0) {
    uint64_t offset = begin - starts[d];
    uint64_t take = std::min<uint64_t>(count, starts[d + 1] - starts[d] - offset);
    if (take > 0) data.read(documents[d], offset, take, out);
    out += take;
    begin += take;
    count -= take;
    ++d;
  }
}

TrainSampler::TrainSampler(std::shared_ptr<const IndexedDataset> data, int64_t seq_len, uint64_t seed)
    : data_(std::move(data)), seq_len_(seq_len), seed_(seed) {
  LG_USER_CHECK(seq_len_ >= 1, "sampler: sequence length must be positive, got ", seq_len_);
  windows_ = windows_of(data_->total_tokens(), seq_len_);
  LG_USER_CHECK(windows_ > 0, "sampler: the training data has ", data_->total_tokens(),
                " tokens, fewer than one window of seq_len+1 = ", seq_len_ + 1, "; use a shorter sequence");
  LG_USER_CHECK(data_->size() < UINT32_MAX && windows_ < UINT32_MAX, "sampler: too many documents or windows");
}

std::shared_ptr<const TrainSampler::Epoch> TrainSampler::epoch(uint64_t e) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (cached_ && cached_->number == e) return cached_;
  auto epoch = std::make_shared<Epoch>();
  epoch->number = e;
  // one generator per (seed, epoch): documents first, then windows
  std::mt19937_64 rng(seed_ ^ (0x9E3779B97F4A7C15ull * (e + 1)));
  epoch->documents = identity(data_->size());
  shuffle(epoch->documents, rng);
  epoch->starts = stream_starts(*data_, epoch->documents);
  epoch->windows = identity(windows_);
  shuffle(epoch->windows, rng);
  cached_ = epoch;
  return cached_;
}

void TrainSampler::read(uint64_t k, int32_t* out) const {
  std::shared_ptr<const Epoch> e = epoch(k / windows_);
  uint64_t window = e->windows[k % windows_];
  read_stream(*data_, e->documents, e->starts, window * seq_len_, seq_len_ + 1, out);
}

ValidationSampler::ValidationSampler(std::shared_ptr<const IndexedDataset> data, int64_t seq_len, uint64_t eval_samples)
    : data_(std::move(data)), seq_len_(seq_len) {
  LG_USER_CHECK(seq_len_ >= 1, "sampler: sequence length must be positive, got ", seq_len_);
  documents_ = identity(data_->size());
  starts_ = stream_starts(*data_, documents_);
  samples_ = std::min(eval_samples, windows_of(starts_.back(), seq_len_));
}

void ValidationSampler::read(uint64_t k, int32_t* out) const {
  LG_CHECK(k < samples_, "validation sample ", k, " of ", samples_);
  read_stream(*data_, documents_, starts_, k * seq_len_, seq_len_ + 1, out);
}

}  // namespace lg::llm
