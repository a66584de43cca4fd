#include "runtime/buffer.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "base/error.h"
#include "runtime/device.h"

namespace lg {
namespace {

struct Registry {
  std::mutex mu;
  std::unordered_map<uint64_t, BufferMemory> live;  // by BufferArg uid
  size_t bytes = 0;
  size_t peak = 0;  // the most bytes held at once since the last reset_buffer_peak()
};

Registry& registry() {
  static Registry* r = new Registry();  // outlives static destruction order: nodes may die late
  return *r;
}

void release(const Node& b) {
  Registry& r = registry();
  BufferMemory m{};
  {
    std::lock_guard lock(r.mu);
    auto it = r.live.find(b.get_arg<BufferArg>().uid);
    if (it == r.live.end()) return;
    m = it->second;
    r.bytes -= m.bytes;
    r.live.erase(it);
  }
  m.device->allocator().free(m.ptr, m.bytes);
}

}  // namespace

void buffer_release(const Node& b) {
  LG_CHECK(b.op == Op::BUFFER, "buffer_release of ", op_name(b.op));
  release(b);
}

BufferMemory buffer_memory(const Node& b) {
  LG_CHECK(b.op == Op::BUFFER, "buffer_memory of ", op_name(b.op));
  static std::once_flag hook;
  std::call_once(hook, [] { set_node_free_hook(Op::BUFFER, release); });
  Registry& r = registry();
  uint64_t uid = b.get_arg<BufferArg>().uid;
  {
    std::lock_guard lock(r.mu);
    if (auto it = r.live.find(uid); it != r.live.end()) return it->second;
  }
  Device& dev = get_device(b.device_name());
  size_t bytes = static_cast<size_t>(b.get_arg<BufferArg>().size) * itemsize(b.dtype);
  BufferMemory m{&dev, allocate(dev.allocator(), bytes), bytes};
  std::lock_guard lock(r.mu);
  auto [it, inserted] = r.live.emplace(uid, m);
  if (!inserted) {  // another thread allocated it first
    dev.allocator().free(m.ptr, bytes);
    return it->second;
  }
  r.bytes += bytes;
  r.peak = std::max(r.peak, r.bytes);
  return m;
}

void buffer_copy_in(const Node& b, const void* host, size_t bytes) {
  BufferMemory m = buffer_memory(b);
  LG_CHECK(bytes == m.bytes, "copy of ", bytes, " bytes into a buffer of ", m.bytes);
  m.device->allocator().copy_in(m.ptr, host, bytes);
}

void buffer_copy_out(const Node& b, void* host, size_t bytes) {
  BufferMemory m = buffer_memory(b);
  LG_CHECK(bytes == m.bytes, "copy of ", bytes, " bytes out of a buffer of ", m.bytes);
  m.device->allocator().copy_out(host, m.ptr, bytes);
}

size_t buffer_bytes_in_use() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.bytes;
}

size_t buffer_peak_bytes() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.peak;
}

void reset_buffer_peak() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.peak = r.bytes;
}

}  // namespace lg
