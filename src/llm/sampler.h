#pragma once
// The MLPerf llama31_8b samples (Megatron GPTDataset semantics) over an indexed dataset.
//
// A window is seq_len+1 consecutive tokens of a document stream; window w covers stream tokens
// [w*seq_len, w*seq_len + seq_len + 1), so consecutive windows overlap by one token, and windows
// cross document boundaries. Inputs are a window's first seq_len tokens, labels its last seq_len.
//
// Training (TrainSampler): epoch e concatenates the documents in a shuffled order and cuts its
// W = (tokens - 1) / seq_len windows; the windows are then visited in a shuffled order. Both
// permutations come from one generator seeded by (seed, e), so sample k (of an unbounded sequence)
// is window perm_e[k mod W] of epoch e = k / W: every window once per epoch, as many epochs as asked.
// Validation (ValidationSampler): the documents in file order, windows in order, the first
// eval_samples of them.
//
// Permutations use mt19937_64 and our own Fisher-Yates with rejection sampling, so orders are the
// same with every compiler and standard library (std::shuffle's are not).
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "llm/indexed_dataset.h"

namespace lg::llm {

// A random permutation of 0..n-1, a pure function of (n, seed).
std::vector<uint32_t> seeded_permutation(uint32_t n, uint64_t seed);

// Something that yields numbered windows of seq_len+1 tokens.
class WindowSource {
 public:
  virtual ~WindowSource() = default;
  virtual int64_t seq_len() const = 0;
  virtual uint64_t num_samples() const = 0;  // UINT64_MAX: unbounded (training epochs)
  // out: (seq_len + 1) tokens of sample k. Thread-safe.
  virtual void read(uint64_t k, int32_t* out) const = 0;
};

class TrainSampler : public WindowSource {
 public:
  // The dataset must hold at least seq_len+1 tokens (user error otherwise).
  TrainSampler(std::shared_ptr<const IndexedDataset> data, int64_t seq_len, uint64_t seed);

  int64_t seq_len() const override { return seq_len_; }
  uint64_t num_samples() const override { return UINT64_MAX; }
  uint64_t windows_per_epoch() const { return windows_; }
  void read(uint64_t k, int32_t* out) const override;

  // Epoch e's order: documents, and stream offsets of its windows in visiting order.
  struct Epoch {
    uint64_t number;
    std::vector<uint32_t> documents;  // document ids in stream order
    std::vector<uint64_t> starts;     // (D+1) stream offset where each document starts; last = tokens
    std::vector<uint32_t> windows;    // (W) window ids in visiting order
  };
  std::shared_ptr<const Epoch> epoch(uint64_t e) const;

 private:
  std::shared_ptr<const IndexedDataset> data_;
  int64_t seq_len_;
  uint64_t seed_, windows_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const Epoch> cached_;  // the last epoch built
};

class ValidationSampler : public WindowSource {
 public:
  // At most eval_samples windows; fewer when the data is short (num_samples says how many).
  ValidationSampler(std::shared_ptr<const IndexedDataset> data, int64_t seq_len, uint64_t eval_samples);

  int64_t seq_len() const override { return seq_len_; }
  uint64_t num_samples() const override { return samples_; }
  void read(uint64_t k, int32_t* out) const override;

 private:
  std::shared_ptr<const IndexedDataset> data_;
  int64_t seq_len_;
  uint64_t samples_;
  std::vector<uint32_t> documents_;  // file order
  std::vector<uint64_t> starts_;
};

// Copies stream tokens [begin, begin+count) of the stream documents[0], documents[1], ... (whose
// start offsets are starts) into out.
void read_stream(const IndexedDataset& data, const std::vector<uint32_t>& documents,
                 const std::vector<uint64_t>& starts, uint64_t begin, uint64_t count, int32_t* out);

}  // namespace lg::llm
