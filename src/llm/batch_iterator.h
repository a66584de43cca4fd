#pragma once
// Batches of samples from a WindowSource, prefetched on a background thread.
//
// Batch b holds samples [first, first + batch_size) where first = start + b*batch_size:
//   inputs: (batch_size, seq_len) int32, row r = window's tokens [0, seq_len)
//   labels: (batch_size, seq_len) int32, row r = window's tokens [1, seq_len + 1)
// position() is the number of the next sample to be handed out: store it in a checkpoint and pass it
// back as `start` to resume exactly there. A finite source ends after its last whole batch.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "llm/sampler.h"

namespace lg::llm {

struct Batch {
  uint64_t first_sample = 0;
  int64_t batch_size = 0, seq_len = 0;
  std::vector<int32_t> inputs;  // (batch_size, seq_len)
  std::vector<int32_t> labels;  // (batch_size, seq_len)
};

class BatchIterator {
 public:
  // prefetch: batches made ahead of the consumer (>= 1).
  BatchIterator(std::shared_ptr<const WindowSource> source, int64_t batch_size, uint64_t start = 0, int prefetch = 2);
  ~BatchIterator();
  BatchIterator(const BatchIterator&) = delete;
  BatchIterator& operator=(const BatchIterator&) = delete;

  // The next batch; nullopt when a finite source has no whole batch left. Rethrows an error of the
  // background thread.
  std::optional<Batch> next();
  uint64_t position() const { return position_; }

 private:
  void produce();
  Batch make_batch(uint64_t first) const;

  std::shared_ptr<const WindowSource> source_;
  int64_t batch_size_;
  size_t prefetch_;
  uint64_t position_;  // next sample handed to the consumer
  uint64_t end_;       // one past the last sample of the last whole batch
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> ready_;
  bool stop_ = false, finished_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace lg::llm
