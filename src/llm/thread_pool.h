#pragma once
// A fixed set of worker threads that run one parallel loop at a time. Threads persist across loops,
// so thread_local state (the tokenizer's piece cache) stays warm.
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace lg::llm {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // threads >= 1; the calling thread is not one of them
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Calls fn(i) for every i in [0, n), spread over the workers; returns when all are done. The first
  // exception thrown by fn is rethrown here (the remaining items still run).
  void parallel_for(size_t n, const std::function<void(size_t)>& fn);
  int size() const { return static_cast<int>(threads_.size()); }

 private:
  void work();

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  const std::function<void(size_t)>* fn_ = nullptr;
  size_t n_ = 0, next_ = 0, finished_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace lg::llm
