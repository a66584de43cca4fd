#include "llm/thread_pool.h"

#include "base/error.h"

namespace lg::llm {

ThreadPool::ThreadPool(int threads) {
  LG_USER_CHECK(threads >= 1, "thread pool: need at least one worker, got ", threads);
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::parallel_for(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  std::unique_lock<std::mutex> lock(mutex_);
  fn_ = &fn;
  n_ = n;
  next_ = 0;
  finished_ = 0;
  error_ = nullptr;
  ++generation_;
  start_.notify_all();
  done_.wait(lock, [&] { return finished_ == n_; });
  fn_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

// Each worker takes the next item under the lock (items are coarse: whole documents).
void ThreadPool::work() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    start_.wait(lock, [&] { return stop_ || (generation_ != seen && fn_ != nullptr && next_ < n_); });
    if (stop_) return;
    while (fn_ != nullptr && next_ < n_) {
      size_t i = next_++;
      const auto* fn = fn_;
      lock.unlock();
      std::exception_ptr error;
      try {
        (*fn)(i);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (error && !error_) error_ = error;
      if (++finished_ == n_) done_.notify_all();
    }
    seen = generation_;
  }
}

}  // namespace lg::llm
