#include "dist/launch.h"

#include <mpi.h>

#include <cstdlib>
#include <limits>

#include "base/config.h"
#include "base/error.h"
#include "dist/mpi_transport.h"
#include "runtime/device.h"

namespace lg::dist {
namespace {

Context ctx;
bool started = false, mpi_on = false;

// Launched by mpirun (Open MPI, PMIx) or srun (Slurm) as one of several processes?
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"}) {
    const char* s = std::getenv(v);
    if (s && std::atoi(s) > 1) return true;
  }
  return false;
}

}  // namespace

const Context& start() {
  if (started) return ctx;
  started = true;
  if (!launched_by_mpi()) return ctx;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  mpi_on = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ctx.size);
  if (ctx.size > 1) {
    LinkModel link;
    link.gbps = env_double_at_least("LAZYGRAD_SIM_LINK_GBPS", link.gbps, 0,
                                    "the simulated link's GB/s (0: unlimited)");
    link.latency_us = env_int_in("LAZYGRAD_SIM_LINK_US", 0, 0, std::numeric_limits<int>::max(),
                                 "the simulated link's latency in microseconds");
    set_transport(
        make_mpi_transport(env_int_in("LAZYGRAD_DIST_TIMEOUT", 300, 1, std::numeric_limits<int>::max(),
                                      "the seconds a process waits for the others"),
                           link));
  }
  return ctx;
}

std::vector<std::string> local_devices(const std::string& spec) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= spec.size()) {
    size_t comma = spec.find(',', at);
    std::string item = spec.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    at = comma == std::string::npos ? spec.size() + 1 : comma + 1;
    LG_USER_CHECK(!item.empty(), "--devices \"", spec, "\": empty entry; use e.g. CPU:0-3 or CPU:0,CPU:1");
    size_t colon = item.find(':'), dash = item.find('-');
    if (colon != std::string::npos && dash != std::string::npos && dash > colon) {
      std::string kind = item.substr(0, colon);
      int lo = -1, hi = -1;
      try {
        lo = std::stoi(item.substr(colon + 1, dash - colon - 1));
        hi = std::stoi(item.substr(dash + 1));
      } catch (...) {
      }
      LG_USER_CHECK(lo >= 0 && hi >= lo, "--devices \"", item, "\": a range is KIND:first-last, e.g. CPU:0-3");
      for (int i = lo; i <= hi; i++) out.push_back(kind + ":" + std::to_string(i));
    } else {
      out.push_back(item);
    }
  }
  for (std::string& d : out) get_device(d);  // unknown names are user errors here
  return out;
}

std::vector<std::string> global_devices(const std::vector<std::string>& local) {
  const Context& c = start();
  check_agreement("devices per process: " + std::to_string(local.size()));
  std::vector<std::string> out;
  for (int r = 0; r < c.size; r++)
    for (const std::string& d : local) out.push_back(r == c.rank ? d : canonical_device(d) + "@" + std::to_string(r));
  return out;
}

void check_agreement(const std::string& description) {
  const Context& c = start();
  if (c.size == 1) return;
  int len = static_cast<int>(description.size());
  std::vector<int> lens(c.size);
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> offsets(c.size, 0);
  for (int r = 1; r < c.size; r++) offsets[r] = offsets[r - 1] + lens[r - 1];
  std::string all(static_cast<size_t>(offsets.back() + lens.back()), '\0');
  MPI_Allgatherv(description.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 0; r < c.size; r++) {
    std::string theirs = all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lens[r]));
    LG_USER_CHECK(theirs == description, "distributed: process ", r, " and process ", c.rank,
                  " disagree about the run; process ", r, ": \"", theirs, "\"; process ", c.rank, ": \"", description,
                  "\" (start every process with the same command)");
  }
}

void barrier() {
  if (start().size > 1) MPI_Barrier(MPI_COMM_WORLD);
}

void mpi_allreduce_sum(float* data, size_t n) {
  if (start().size == 1) return;
  LG_USER_CHECK(n <= static_cast<size_t>(INT32_MAX), "MPI_Allreduce of more than 2^31 floats");
  MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

double max_over_processes(double v) {
  if (start().size == 1) return v;
  double out = v;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

uint64_t broadcast(uint64_t value) {
  if (start().size == 1) return value;
  unsigned long long v = value;
  MPI_Bcast(&v, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  return v;
}

void finish(bool ok) {
  if (!mpi_on) return;
  set_transport(nullptr);
  if (ok)
    MPI_Finalize();
  else
    MPI_Abort(MPI_COMM_WORLD, 1);
  mpi_on = false;
}

}  // namespace lg::dist
