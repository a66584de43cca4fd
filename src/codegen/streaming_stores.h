#pragma once
// Streaming (non-temporal) stores for CPU kernels whose output is far larger than the caches.
//
// An ordinary store first reads the line it writes (read for ownership): a kernel writing a
// 525 MB output (the LM head's float32 logits of 1024 tokens x 128256) reads 525 MB more from memory
// than it needs, and fills the caches with lines nothing reads before they are evicted. A streaming
// store writes whole lines to memory through write-combining buffers, without reading them.
//
// A STORE of the program streams when
//   - the program reduces (a matmul: many FLOPs per byte stored, so its memory is idle enough to
//     take the lines now) or loads nothing (a fill). An elementwise kernel that reads its inputs is
//     as bound by memory as its stores are: with ordinary stores the written lines leave the cache
//     later, during the next kernels, and the LM head's cross-entropy gradient (525 MB read, 525 MB
//     written) measured 106 ms a step that way against 142 ms streamed;
//   - it writes 16 float32 lanes (one 64-byte line, lg_store_f32x16) at an index whose known
//     divisor is a multiple of 16 (codegen/index_divisor.h): slot pointers are 64-byte aligned
//     (schedule/kernelize.h), so the line is whole. The prelude's lg_stream_f32x16 checks the
//     address again at run time and stores normally if it is not aligned: never a fault;
//   - no LOAD of the program reads its buffer (a read-modify-write has the line in cache already);
//   - every loop around it moves its address (index_stride != 0: no line is written twice by one
//     launch), and the stores of its buffer that stream write at least kStreamingStoreBytes per
//     launch together (the 16 stores of a matmul's 8 x 32 register tile, each a 16th of the output).
// The kernel then ends with a store fence (lg_stream_fence), so that the lines are in memory before
// the thread pool reports the kernel done. STREAM_STORES=0 turns it off (an A/B switch).
#include <cstdint>
#include <unordered_set>

#include "codegen/program.h"

namespace lg {

inline constexpr int64_t kStreamingStoreBytes = int64_t{32} << 20;

// The STORE nodes of prog that stream.
std::unordered_set<const Node*> streaming_stores(const LinearProgram& prog);

}  // namespace lg
