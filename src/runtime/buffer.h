#pragma once
// Device memory behind BUFFER nodes. A BUFFER node is the identity of a buffer; its memory is
// allocated on first use and freed when the node dies (a free hook on BUFFER). Everything that needs
// a buffer's memory to stay alive holds its node.
#include <cstddef>
#include <vector>

#include "ir/node.h"

namespace lg {

class Device;

struct BufferMemory {
  Device* device;
  void* ptr;
  size_t bytes;
};

// The memory of BUFFER node b, allocated on first use (contents unspecified until written).
BufferMemory buffer_memory(const Node& b);
// Frees b's memory now, before its node dies (nothing if it has none). A later buffer_memory(b)
// allocates anew, contents unspecified: for buffers nothing reads again (realize() releases a
// schedule's intermediate buffers after their last kernel this way).
void buffer_release(const Node& b);
void buffer_copy_in(const Node& b, const void* host, size_t bytes);
void buffer_copy_out(const Node& b, void* host, size_t bytes);
// Bytes currently allocated for buffers, over all devices (tests check that memory is returned).
size_t buffer_bytes_in_use();
// The most bytes buffers held at once since the last reset_buffer_peak() (or the start). Memory
// planned into Jit arenas is not included (Jit::planned_bytes() reports it).
size_t buffer_peak_bytes();
void reset_buffer_peak();

}  // namespace lg
