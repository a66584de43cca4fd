#pragma once
// `lazygrad bench allreduce` (docs/performance.md, docs/distributed.md): bus bandwidth of each
// allreduce algorithm over the run's devices (this process's, and every process's under mpirun),
// for buffer sizes of 1 MiB and up, with MPI_Allreduce of the same bytes per process measured in the
// same run (under mpirun) and the ratio.
#include <string>
#include <vector>

namespace lg::bench {

struct AllreduceBenchOptions {
  std::string devices;                           // this process's devices, e.g. CPU:0-1
  std::vector<double> mib = {1, 4, 16, 64, 256};  // float32 buffer sizes per device
  std::vector<std::string> algos = {"naive", "ring", "all-to-all", "hierarchical"};
  int warmup = 1, repeats = 5;
};

void run_allreduce_bench(const AllreduceBenchOptions& o);

}  // namespace lg::bench
