#pragma once
// `lazygrad bench optimizer`: one AdamW update of n float32 parameters on a device, with the 16-bit
// compute copy llm::TrainStep recasts in the same schedule: m, v, the parameters and the copy. Each
// size runs twice in one process, as one kernel of four outputs (schedule/multi_output.h) and as one
// kernel per output (MULTI_OUTPUT=0), each a Jit replay like the trainer's:
//   optimizer <device> params=<n> outputs=<fused|apart> kernels=<k> ms=<median> gbs=<GB/s>
//   ratio apart/fused params=<n> <x>  [fused/triad <x> (triad <GB/s>)]
// gbs counts the 30 bytes per parameter one pass must move (p, m, v and g read as float32; p, m
// and v written as float32 and the copy as bfloat16), whatever a way moves itself. The triad (the
// CPU's bandwidth loop of `bench kernels`, same threads) is measured on the CPU only. The two ways
// must leave the same parameters after three updates (else the command exits 1): the sums of their
// bit patterns as integers, computed on the device, must be equal.
#include <cstdint>
#include <string>
#include <vector>

namespace lg::bench {

struct OptimizerBenchOptions {
  std::string device = "CPU";
  std::vector<int64_t> params = {16 << 20, 64 << 20};
  int repeats = 5;
  double budget_s = 20;  // seconds of timed runs per line before stopping early
};

void run_optimizer_bench(const OptimizerBenchOptions& o);

}  // namespace lg::bench
