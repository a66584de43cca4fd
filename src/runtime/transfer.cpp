#include "runtime/transfer.h"

#include <cstring>
#include <vector>

#include "base/error.h"
#include "runtime/device.h"
#include "runtime/transport.h"

namespace lg {

void transfer(Device& dst_dev, void* dst, Device& src_dev, const void* src, size_t bytes) {
  int to = dst_dev.remote_rank(), from = src_dev.remote_rank();
  if (bytes == 0 || (to >= 0 && from >= 0)) return;
  if (to >= 0 || from >= 0) {
    Transport* t = transport();
    LG_CHECK(t != nullptr, "copy between ", src_dev.name(), " and ", dst_dev.name(), " without a transport");
    if (to >= 0)
      t->send(to, src, bytes);
    else
      t->recv(from, dst, bytes);
    return;
  }
  if (dst_dev.allocator().host_memory() && src_dev.allocator().host_memory()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  std::vector<uint8_t> host(bytes);
  src_dev.allocator().copy_out(host.data(), src, bytes);
  dst_dev.allocator().copy_in(dst, host.data(), bytes);
}

void finish_transfers() {
  if (Transport* t = transport()) t->wait_sends();
}

}  // namespace lg
