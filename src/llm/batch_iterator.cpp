#include "llm/batch_iterator.h"

#include "base/error.h"

namespace lg::llm {

BatchIterator::BatchIterator(std::shared_ptr<const WindowSource> source, int64_t batch_size, uint64_t start, int prefetch)
    : source_(std::move(source)), batch_size_(batch_size), prefetch_(static_cast<size_t>(prefetch)), position_(start) {
  LG_USER_CHECK(batch_size_ >= 1 && prefetch >= 1, "batch iterator: batch size (", batch_size_,
                ") and prefetch depth (", prefetch, ") must be positive");
  uint64_t n = source_->num_samples();
  const uint64_t b = static_cast<uint64_t>(batch_size_);
  end_ = n == UINT64_MAX ? UINT64_MAX : (n < start ? start : start + (n - start) / b * b);
  thread_ = std::thread([this] { produce(); });
}

BatchIterator::~BatchIterator() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

Batch BatchIterator::make_batch(uint64_t first) const {
  Batch batch;
  const int64_t t = source_->seq_len();
  batch.first_sample = first;
  batch.batch_size = batch_size_;
  batch.seq_len = t;
  batch.inputs.resize(static_cast<size_t>(batch_size_ * t));
  batch.labels.resize(static_cast<size_t>(batch_size_ * t));
  std::vector<int32_t> window(static_cast<size_t>(t + 1));
  for (int64_t r = 0; r < batch_size_; ++r) {
    source_->read(first + static_cast<uint64_t>(r), window.data());
    std::copy(window.begin(), window.end() - 1, batch.inputs.begin() + r * t);
    std::copy(window.begin() + 1, window.end(), batch.labels.begin() + r * t);
  }
  return batch;
}

void BatchIterator::produce() {
  uint64_t next = position_;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || ready_.size() < prefetch_; });
      if (stop_) return;
      if (end_ - next < static_cast<uint64_t>(batch_size_)) {
        finished_ = true;
        changed_.notify_all();
        return;
      }
    }
    try {
      Batch batch = make_batch(next);
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.push_back(std::move(batch));
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
      finished_ = true;
      changed_.notify_all();
      return;
    }
    next += static_cast<uint64_t>(batch_size_);
    changed_.notify_all();
  }
}

std::optional<Batch> BatchIterator::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !ready_.empty() || finished_; });
  if (ready_.empty()) {
    if (error_) std::rethrow_exception(error_);
    return std::nullopt;
  }
  Batch batch = std::move(ready_.front());
  ready_.pop_front();
  position_ = batch.first_sample + static_cast<uint64_t>(batch_size_);
  changed_.notify_all();
  return batch;
}

}  // namespace lg::llm
