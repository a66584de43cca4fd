#pragma once
// The hop between processes of a distributed run (one process per node, docs/distributed.md).
//
// Every process builds the same graphs over the same global device list; devices of other processes
// are named "NAME@r" (runtime/device.h). A schedule item on another process's device does not run
// here; a copy between this process and process r becomes a send or a receive through the installed
// Transport. Both processes meet their copies in the same order (the same schedule), so messages
// between a pair of processes match in posting order.
//
// The runtime defines only this interface and depends on no messaging library; src/dist/ provides
// the MPI implementation (and tests or benchmarks may install another, e.g. one that models a slow
// link).
#include <cstddef>
#include <memory>

namespace lg {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Posts a send of `bytes` to process `peer` and returns; `data` must stay unchanged until
  // wait_sends() returns.
  virtual void send(int peer, const void* data, size_t bytes) = 0;
  // Receives exactly `bytes` from process `peer` into `data`. A peer that sends nothing within the
  // transport's timeout, or a different number of bytes, is an error (never a hang).
  virtual void recv(int peer, void* data, size_t bytes) = 0;
  // Waits until every posted send completed.
  virtual void wait_sends() = 0;
};

// The process-wide transport (null outside a distributed run). Installing one fixes this process's
// rank for device names ("CPU@r" with r == rank() is this process's "CPU").
void set_transport(std::shared_ptr<Transport> t);
Transport* transport();
// This process's rank: 0 without a transport.
int process_rank();

}  // namespace lg
