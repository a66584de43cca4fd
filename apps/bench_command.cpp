// lazygrad bench kernels: lazygrad's CPU kernels against OpenBLAS and memory bandwidth; lazygrad bench
// allreduce: the allreduce algorithms against MPI_Allreduce (bench/).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/commands.h"
#include "bench/allreduce_bench.h"
#include "bench/device_attention.h"
#include "bench/device_matmul.h"
#include "bench/kernel_bench.h"
#include "bench/optimizer_bench.h"
#include "dist/launch.h"

namespace lg::apps {
namespace {

// Flags given on the command line; absent ones keep the default of the chosen mode (full or --quick).
struct BenchKernelsArgs {
  bool quick = false;
  std::vector<std::string> sizes;
  std::optional<int> warmup, repeats;
  std::optional<double> budget_s, mib;
  std::string only;
  std::string blas_core = "auto";
};

void run_bench_kernels(const BenchKernelsArgs& a) {
  bench::KernelBenchOptions o = bench::default_kernel_bench(a.quick);
  if (!a.sizes.empty()) {
    o.matmuls.clear();
    for (const std::string& s : a.sizes) o.matmuls.push_back(bench::parse_matmul_shape(s));
  }
  o.warmup = a.warmup.value_or(o.warmup);
  o.repeats = a.repeats.value_or(o.repeats);
  o.budget_s = a.budget_s.value_or(o.budget_s);
  o.mib = a.mib.value_or(o.mib);
  o.only = a.only;
  o.blas_core = a.blas_core;
  bench::run_kernel_bench(o);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* bench =
      app.add_subcommand("bench", "benchmarks of lazygrad against baselines measured in the same run");
  bench->require_subcommand(1);
  auto a = std::make_shared<BenchKernelsArgs>();
  auto* cmd = bench->add_subcommand(
      "kernels", "CPU kernels: fp32 matmul GFLOP/s vs OpenBLAS sgemm; add and row-softmax GB/s vs a triad");
  cmd->add_option("--sizes", a->sizes,
                  "matmul sizes, N (square) or MxKxN (default 1024,2048,4096,8192x512x1536,2048x512x32000)")
      ->delimiter(',');
  cmd->add_option("--repeats", a->repeats, "timed runs per line, the median is printed (default 5)");
  cmd->add_option("--warmup", a->warmup, "untimed runs first; the first one compiles (default 2)");
  cmd->add_option("--budget", a->budget_s,
                  "seconds of timed runs per line before stopping early (default 20)");
  cmd->add_option("--mib", a->mib, "MiB per array for add, softmax, triad and memcpy (default 64)");
  cmd->add_option("--only", a->only, "one benchmark: matmul, add or softmax");
  cmd->add_option("--blas-core", a->blas_core,
                  "OpenBLAS kernels: auto (SkylakeX on AVX-512 CPUs, else detect), detect (CPUID), or a "
                  "name such as Haswell (default auto)");
  cmd->add_flag("--quick", a->quick, "tiny sizes, 1 MiB arrays, 3 runs: a smoke test that takes seconds");
  cmd->callback([a] { run_bench_kernels(*a); });
  auto m = std::make_shared<bench::DeviceMatmulOptions>();
  auto* mm = bench->add_subcommand("matmul", "square matmuls on a device (CUDA bf16 by default): ms and TFLOP/s");
  mm->add_option("--device", m->device, "device to run on")->capture_default_str();
  mm->add_option("--dtype", m->dtype, "bf16, fp16 or fp32")->capture_default_str();
  mm->add_option("--sizes", m->sizes, "matrix sizes N (N x N @ N x N)")->delimiter(',');
  mm->add_option("--repeats", m->repeats, "products per timed run")->capture_default_str();
  mm->add_flag("--bt", m->b_transposed, "b is a transposed N x N matrix (x @ W^T, as a Linear layer multiplies)");
  mm->add_flag("--at", m->a_transposed, "a is a transposed N x N matrix (dY^T @ X, as a weight gradient multiplies)");
  mm->add_flag("--probe", m->probe,
               "no timing: five structured products whose entries say where each came from, a line each "
               "(how a wrong kernel is wrong: bench/matmul_probe.h)");
  mm->callback([m] { bench::run_device_matmul(*m); });
  auto at = std::make_shared<bench::DeviceAttentionOptions>();
  auto* atc = bench->add_subcommand(
      "attention", "fused attention vs matmul + softmax on a device (CUDA bf16, llama3.1-8b's heads by default): ms and TFLOP/s");
  atc->add_option("--device", at->device, "device to run on")->capture_default_str();
  atc->add_option("--dtype", at->dtype, "bf16, fp16 or fp32")->capture_default_str();
  atc->add_option("--batch", at->batch, "batch size")->capture_default_str();
  atc->add_option("--heads", at->heads, "query heads")->capture_default_str();
  atc->add_option("--kv-heads", at->kv_heads, "key/value heads (dividing --heads)")->capture_default_str();
  atc->add_option("--head-dim", at->head_dim, "head dim")->capture_default_str();
  atc->add_option("--seq", at->seqs, "sequence lengths (default 2048,8192)")->delimiter(',');
  atc->add_option("--repeats", at->repeats, "runs per timed run")->capture_default_str();
  atc->add_flag("!--no-causal", at->causal, "attend to every key (default: causal)");
  atc->add_flag("!--fused-only", at->matmul, "skip the matmul + softmax path (it stores S x S scores)");
  atc->callback([at] { bench::run_device_attention(*at); });

  auto op = std::make_shared<bench::OptimizerBenchOptions>();
  auto* opc = bench->add_subcommand("optimizer",
                                    "one AdamW update (m, v, parameters, bf16 copy) as one kernel of four "
                                    "outputs vs one kernel each: ms and GB/s");
  opc->add_option("--device", op->device, "device to run on")->capture_default_str();
  opc->add_option("--params", op->params, "parameter counts (default 16777216,67108864)")->delimiter(',');
  opc->add_option("--repeats", op->repeats, "timed updates per line, the median is printed")
      ->capture_default_str();
  opc->add_option("--budget", op->budget_s, "seconds of timed updates per line before stopping early")
      ->capture_default_str();
  opc->callback([op] { bench::run_optimizer_bench(*op); });

  auto ar = std::make_shared<bench::AllreduceBenchOptions>();
  auto* arc = bench->add_subcommand(
      "allreduce", "bus bandwidth of each allreduce algorithm; MPI_Allreduce of the same bytes under mpirun");
  arc->add_option("--devices", ar->devices, "this process's devices (default CPU:0-1 without mpirun, CPU under it)");
  arc->add_option("--mib", ar->mib, "buffer sizes in MiB per device (default 1,4,16,64,256)")->delimiter(',');
  arc->add_option("--algos", ar->algos, "naive, ring, all-to-all, hierarchical (default all)")->delimiter(',');
  arc->add_option("--repeats", ar->repeats, "timed runs per line, the median is printed")->capture_default_str();
  arc->callback([ar] {
    if (ar->devices.empty() && dist::start().size == 1) ar->devices = "CPU:0-1";
    bench::run_allreduce_bench(*ar);
  });
}

}  // namespace lg::apps
