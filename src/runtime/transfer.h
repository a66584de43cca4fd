#pragma once
// Moving bytes between two buffers' memory on any two devices: the one place copies go through
// (realize's copy items and the JIT's replayed copies).
//   both in this process        memcpy between host memories, else staged through the host
//   this process -> process r   a send posted through the transport (runtime/transport.h)
//   process r -> this process   a receive through the transport (returns once the bytes arrived)
//   between other processes     nothing happens here
// Sends complete by finish_transfers(), which realize and replay call at their end.
#include <cstddef>

namespace lg {

class Device;

void transfer(Device& dst_dev, void* dst, Device& src_dev, const void* src, size_t bytes);
void finish_transfers();

}  // namespace lg
