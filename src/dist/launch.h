#pragma once
// A distributed run: one process per node, started by mpirun (or srun under Slurm), each driving
// its node's devices (docs/distributed.md). MPI carries only the bytes between processes
// (dist/mpi_transport.h); everything else is the same graph on every process.
#include <cstdint>
#include <string>
#include <vector>

namespace lg::dist {

struct Context {
  int rank = 0, size = 1;  // size 1: a single process (no MPI)
};

// Starts MPI when this process was launched by mpirun or Slurm with more than one process (rank and
// size come from MPI) and installs the MPI transport; a single process gets {0, 1} and no MPI.
// Safe to call more than once.
const Context& start();
// "CPU:0-3", "CPU:0,CPU:2" or "CPU" -> this process's devices, in order.
std::vector<std::string> local_devices(const std::string& spec);
// The run's global device list: every process's local devices (all processes list the same
// number), process r's named "NAME@r" (this process's are its plain names).
std::vector<std::string> global_devices(const std::vector<std::string>& local);
// Every process must describe the run the same way (model, steps, devices...): otherwise a user
// error on every process naming the first process that differs and both descriptions.
void check_agreement(const std::string& description);
// Waits until every process got here.
void barrier();
// MPI_Allreduce (sum, in place) of n floats over all processes: the benchmark's baseline.
void mpi_allreduce_sum(float* data, size_t n);
// The slowest process's value (the time of a collective step is the last one's).
double max_over_processes(double v);
// Rank 0's value on every process (e.g. a random seed drawn on each).
uint64_t broadcast(uint64_t value);
// Ends the run: MPI_Finalize after a success; after an error, aborts every process (so none waits
// for this one).
void finish(bool ok);

}  // namespace lg::dist
