#pragma once
// The runtime's Transport (runtime/transport.h) over MPI point-to-point: non-blocking sends posted
// as soon as a copy item runs (the chunk is ready then), receives polled against a deadline so that
// a process that died or stalled makes the others fail with an error instead of hanging.
//   LAZYGRAD_DIST_TIMEOUT  seconds a receive or a pending send may wait (default 300)
//   LAZYGRAD_SIM_LINK_GBPS, LAZYGRAD_SIM_LINK_US  a slower link between processes for benchmarks:
//           a receive of b bytes takes at least latency + b / bandwidth (GB/s) (0: off)
// Messages between two processes match in posting order (one tag; MPI keeps pairs in order), which
// holds because every process runs the same schedule. Messages above 1 GiB go in 1 GiB pieces.
#include <memory>

#include "runtime/transport.h"

namespace lg::dist {

struct LinkModel {
  double gbps = 0;      // 0: the real link
  double latency_us = 0;
};

// MPI must be initialized; the transport uses MPI_COMM_WORLD.
std::shared_ptr<Transport> make_mpi_transport(double timeout_s, LinkModel link = {});

}  // namespace lg::dist
