#include "runtime/thread_pool.h"

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "base/config.h"

namespace lg {
namespace {

thread_local bool in_parallel = false;

// Workers wait for a generation number to change, run their chunk of the current job, and count
// themselves done. One job runs at a time (jobs_mu).
class Pool {
 public:
  explicit Pool(int n) : n_(n) {
    for (int i = 1; i < n_; i++) workers_.emplace_back([this, i] { work(i); });
  }
  ~Pool() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
      gen_++;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  int size() const { return n_; }

  void run(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    std::lock_guard job(jobs_mu_);
    int parts = static_cast<int>(std::min<int64_t>(n, n_));
    {
      std::lock_guard lock(mu_);
      fn_ = &fn;
      total_ = n;
      parts_ = parts;
      pending_ = parts - 1;
      gen_++;
    }
    cv_.notify_all();
    chunk(0);
    std::unique_lock lock(mu_);
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    fn_ = nullptr;
  }

 private:
  int n_;
  std::vector<std::thread> workers_;
  std::mutex mu_, jobs_mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t total_ = 0;
  int parts_ = 0, pending_ = 0;
  uint64_t gen_ = 0;
  bool stop_ = false;

  void chunk(int i) {
    int64_t begin = total_ * i / parts_, end = total_ * (i + 1) / parts_;
    in_parallel = true;
    (*fn_)(begin, end);
    in_parallel = false;
  }

  void work(int i) {
    uint64_t seen = 0;
    for (;;) {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return gen_ != seen; });
      seen = gen_;
      if (stop_) return;
      if (i >= parts_) continue;
      lock.unlock();
      chunk(i);
      lock.lock();
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
};

Pool& pool() {
  static Pool p(cpu_threads());
  return p;
}

}  // namespace

int threads() { return pool().size(); }

void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (n == 1 || in_parallel || pool().size() == 1) return fn(0, n);
  pool().run(n, fn);
}

}  // namespace lg
