#include "runtime/transport.h"

#include <mutex>

namespace lg {

namespace {
std::mutex mu;
std::shared_ptr<Transport> current;
}  // namespace

void set_transport(std::shared_ptr<Transport> t) {
  std::lock_guard lock(mu);
  current = std::move(t);
}

Transport* transport() {
  std::lock_guard lock(mu);
  return current.get();
}

int process_rank() {
  Transport* t = transport();
  return t ? t->rank() : 0;
}

}  // namespace lg
