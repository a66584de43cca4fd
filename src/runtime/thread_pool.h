#pragma once
// A fixed pool of worker threads for kernels that split their outer loop. THREADS=n sets the
// number of threads (the caller counts as one); the default is one per core.
#include <cstdint>
#include <functional>

namespace lg {

// Runs fn(begin, end) over contiguous chunks covering [0, n), on up to threads() threads at once
// (the calling thread included), and returns when all chunks are done. Calls from inside a running
// parallel_for run serially on the caller.
void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn);
int threads();

}  // namespace lg
