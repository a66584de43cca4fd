// The worker pool of preprocess: every item runs exactly once per loop, loops can repeat, and the
// first exception of an item reaches the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>

#include "llm/thread_pool.h"

namespace lg::llm {
namespace {

TEST(ThreadPool, RunsEveryItemOnceInRepeatedLoops) {
  ThreadPool pool(3);
  for (size_t n : {0u, 1u, 7u, 1000u}) {
    std::vector<std::atomic<int>> hits(n);
    pool.parallel_for(n, [&](size_t i) { hits[i]++; });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << "item " << i << " of " << n;
  }
}

TEST(ThreadPool, ItemsRunOnTheWorkersNotTheCaller) {
  ThreadPool pool(2);
  std::mutex m;
  std::set<std::thread::id> ids;
  pool.parallel_for(200, [&](size_t) {
    std::lock_guard<std::mutex> lock(m);
    ids.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 0u);
  EXPECT_LE(ids.size(), 2u);
}

TEST(ThreadPool, TheFirstExceptionIsRethrownAfterAllItems) {
  ThreadPool pool(2);
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.parallel_for(50, [&](size_t i) {
    ran++;
    if (i == 10) throw std::runtime_error("item 10");
  }), std::runtime_error);
  EXPECT_EQ(ran.load(), 50);
  pool.parallel_for(5, [&](size_t) { ran++; });  // the pool still works
  EXPECT_EQ(ran.load(), 55);
}

}  // namespace
}  // namespace lg::llm
