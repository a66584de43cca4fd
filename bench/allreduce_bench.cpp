#include "bench/allreduce_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "base/config.h"
#include "base/error.h"
#include "dist/launch.h"
#include "runtime/device.h"
#include "tensor/jit.h"
#include "tensor/multi.h"

namespace lg::bench {
namespace {

// Selects an algorithm through the same knobs a user sets (schedule/allreduce.h).
void select(const std::string& algo, int per_node) {
  Config& c = config();
  c.ring = 0, c.all2all = 0, c.allreduce_node_ndevs = 0;
  if (algo == "ring") c.ring = 2;
  else if (algo == "all-to-all") c.all2all = 2;
  else if (algo == "hierarchical") c.allreduce_node_ndevs = per_node;
  else LG_USER_CHECK(algo == "naive", "bench allreduce: unknown algorithm ", algo, "; use naive, ring, all-to-all, hierarchical");
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

void run_allreduce_bench(const AllreduceBenchOptions& o) {
  const dist::Context& ctx = dist::start();
  if (ctx.rank != 0)  // rank 0 reports; errors still reach stderr
    LG_USER_CHECK(std::freopen("/dev/null", "w", stdout) != nullptr, "cannot silence stdout of rank ", ctx.rank);
  std::vector<std::string> local = dist::local_devices(o.devices.empty() ? config().device : o.devices);
  std::vector<std::string> global = dist::global_devices(local);
  size_t n = global.size();
  LG_USER_CHECK(n > 1, "bench allreduce: needs at least 2 devices (--devices CPU:0-1, or mpirun -np 2)");
  // every option checked before the table starts
  LG_USER_CHECK(o.repeats >= 1, "bench allreduce: --repeats must be at least 1, got ", o.repeats);
  for (double mib : o.mib)
    LG_USER_CHECK(std::isfinite(mib) && static_cast<int64_t>(mib * (1 << 20) / 4) >= static_cast<int64_t>(n),
                  "bench allreduce: --mib ", mib, " must hold at least one float32 per device (", n,
                  " devices)");
  for (const std::string& algo : o.algos)
    LG_USER_CHECK(algo == "naive" || algo == "ring" || algo == "all-to-all" || algo == "hierarchical",
                  "bench allreduce: unknown algorithm ", algo, "; use naive, ring, all-to-all, hierarchical");
  Config saved = config();
  std::printf("allreduce over %zu devices (%d process%s x %zu), float32; bus bandwidth = 2(n-1)/n x bytes / time\n",
              n, ctx.size, ctx.size == 1 ? "" : "es", local.size());
  std::printf("%-13s %9s %10s %10s %12s %12s %7s\n", "algorithm", "MiB", "ms", "busbw GB/s", "MPI ms",
              "MPI busbw", "ratio");
  for (double mib : o.mib) {
    int64_t N = static_cast<int64_t>(mib * (1 << 20) / 4);
    size_t bytes = static_cast<size_t>(N) * 4;
    double bus = 2.0 * static_cast<double>(n - 1) / static_cast<double>(n) * static_cast<double>(bytes);
    // Baseline: MPI_Allreduce of the same bytes per process (only meaningful across processes).
    double mpi_s = 0;
    if (ctx.size > 1) {
      std::vector<float> host(static_cast<size_t>(N), 1.0f);
      std::vector<double> t;
      for (int r = 0; r < o.warmup + o.repeats; r++) {
        dist::barrier();
        auto t0 = std::chrono::steady_clock::now();
        dist::mpi_allreduce_sum(host.data(), host.size());
        double s = dist::max_over_processes(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (r >= o.warmup) t.push_back(s);
      }
      mpi_s = median(t);
    }
    for (const std::string& algo : o.algos) {
      select(algo, static_cast<int>(local.size()));
      // Inputs: this process's buffers, stand-ins for the others' (no memory here).
      std::vector<Tensor> in;
      for (const std::string& d : global)
        in.push_back(get_device(d).remote_rank() >= 0 ? Tensor::empty({N}, dtypes::float32, d)
                                                      : Tensor::full({N}, 1.0, dtypes::float32, d).contiguous().realize());
      std::vector<Tensor> mine;
      for (const Tensor& t : in)
        if (get_device(t.device()).remote_rank() < 0) mine.push_back(t);
      // The captured step takes this process's buffers; the stand-ins are part of the function.
      Jit step([&in](const std::vector<Tensor>& xs) {
        std::vector<Tensor> all = in;
        size_t next = 0;
        for (Tensor& t : all)
          if (get_device(t.device()).remote_rank() < 0) t = xs[next++];
        std::vector<Tensor> out = allreduce(all);
        Tensor::realize(out);
        std::vector<Tensor> local;
        for (const Tensor& t : out)
          if (get_device(t.device()).remote_rank() < 0) local.push_back(t);
        return local;
      });
      std::vector<double> t;
      std::vector<Tensor> out;
      for (int r = 0; r < o.warmup + 1 + o.repeats; r++) {  // the first call captures
        dist::barrier();
        auto t0 = std::chrono::steady_clock::now();
        out = step(mine);
        double s = dist::max_over_processes(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (r > o.warmup) t.push_back(s);
      }
      float expect = static_cast<float>(n);
      std::vector<float> got = out[0].slice(0, N - 1, N).to_vector<float>();
      LG_USER_CHECK(got[0] == expect, "bench allreduce: ", algo, " gave ", got[0], " where ", expect, " was expected");
      double s = median(t);
      if (ctx.size > 1)
        std::printf("%-13s %9g %10.2f %10.2f %12.2f %12.2f %6.2fx\n", algo.c_str(), mib, s * 1e3,
                    bus / s / 1e9, mpi_s * 1e3, bus / mpi_s / 1e9, mpi_s / s);
      else
        std::printf("%-13s %9g %10.2f %10.2f %12s %12s %7s\n", algo.c_str(), mib, s * 1e3, bus / s / 1e9, "-",
                    "-", "-");
      std::fflush(stdout);
    }
  }
  config() = saved;
}

}  // namespace lg::bench
