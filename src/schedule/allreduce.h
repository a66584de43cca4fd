#pragma once
// Lowering of ALLREDUCE into copies and add kernels: the scheduler's first rewrite, so the
// collective lands in the same schedule (and the same captured JIT step) as the compute around it.
//
// ALLREDUCE(DEVICE_i, x_0, ..., x_{n-1}) is the sum of the x_j (x_j on device j), wanted on device
// i. The n nodes of one allreduce (same x list, one per output device) are rewritten one by one into
// that device's view of ONE construction; hash-consing makes the parts they share (chunk sums, the
// copies that pass them on) single nodes, so each chunk is summed once and copied, not recomputed.
//
// x is flattened to N elements and cut into k chunks of ceil(N/k) elements rounded up to 16 (the
// last ones may be short or empty). Sums fold left in the order given. Algorithms:
//   naive         every device copies every x_j and adds them in order j = 0..n-1
//   ring          k = n; chunk c starts on device c+1 and travels the ring, each device adding its
//                 own part (x_{c+1} + x_{c+2} + ... + x_c: n-1 hops), ending on device c; then it is
//                 passed on around the ring (n-1 hops) so every device has it
//   all-to-all    k = n; chunk c of every x_j is copied to device c and summed in order j = 0..n-1,
//                 then copied from device c to every other device
//   hierarchical  ALLREDUCE_NODE_NDEVS=m, n = nodes*m, device j is local device j%m of node j/m; k = m.
//                 Device (a, l) sums chunk l of its node's m devices (order 0..m-1: intra-node
//                 reduce-scatter), then sums those node partials of chunk l from the same-index
//                 device of every node in node order 0..nodes-1 (the only traffic between nodes:
//                 (nodes-1)/m of the buffer per device), then every device of node a copies chunk l
//                 from (a, l) (intra-node all-gather)
// Every output is bitwise the same: each chunk sum is computed once (ring, all-to-all) or by the same
// kernel in the same order on every device (naive; hierarchical's node sums). With ALLREDUCE_CAST=1,
// float32 values travel as bfloat16 (rounded before every hop, including a device's own chunk, so
// the replicas still agree) and are added in float32.
// Choice (DEBUG=2 prints it): one device: no work; ALLREDUCE_NODE_NDEVS=m (must divide n):
// hierarchical; ALL2ALL=2, or ALL2ALL=1 with n > 2 and N > 2^18: all-to-all; RING=2, or RING=1
// (default) with n > 2 and N > 2^18: ring; else naive.
#include <string>

#include "rewrite/matcher.h"

namespace lg {

enum class AllreduceAlgo { Naive, Ring, AllToAll, Hierarchical };
const char* allreduce_algo_name(AllreduceAlgo a);
// The algorithm the knobs choose for n devices and N elements (n > 1).
AllreduceAlgo choose_allreduce(int64_t n, int64_t N);

const PatternMatcher& pm_allreduce();

}  // namespace lg
