#pragma once
// Every debug and tuning knob, read from the environment in one place (house style rule 17).
//   DEBUG   1 kernels and timings, 2 schedule, 3 opts, 4 source, 5 IR after each named rewrite
//   SPEC    1 verify the graph at stage boundaries, 2 also after every rewrite
//   BEAM    beam width for kernel optimization search (0: heuristics)
//   PROFILE n > 0: every kernel launch timed alone, a table of the n longest kernels (1: 25) with
//           GFLOP/s and GB/s printed at exit (runtime/profile.h)
//   PROFILE_CSV  path: record as PROFILE does and write every kernel's row there at exit (CSV:
//           device, kernel, launches, seconds, and FLOPs and bytes per launch; tools/roofline.py)
//   NOOPT   1 disables kernel optimizations
//   DEVICE  default device for new tensors (CPU; INTERP is the reference interpreter)
//   THREADS worker threads for devices that run kernels in parallel (0: one per core; at most 1024)
//   CACHE   0 disables the disk cache of compiled kernels (default 1)
//   LAZYGRAD_CACHE_DIR  where compiled kernels are cached (default $XDG_CACHE_HOME/lazygrad or
//           ~/.cache/lazygrad)
//   CC      the C compiler for the CPU device (default clang, else gcc)
//   CUDA_ARCH  NVRTC's target when no GPU says which (default sm_90a, an H100/H200 with wgmma; e.g.
//           sm_90, sm_80, compute_90 for PTX)
//   TC      1 tensor cores (mma.sync) for bf16/fp16 matmuls on CUDA devices of sm_80 and later
//           (default), 0 off (codegen/tensor_core.h)
//   TC_WARP, TC_BLOCK  tensor-core tiling: most mma tiles per warp and warps per block, MxN
//           (defaults 4x8 and 2x2, the fastest of a sweep on an H200; codegen/heuristic_tc.cpp)
//   TC_RUN  bytes each lane of a tensor-core matmul reads in one piece: 16 (default), 8, 32, or 0
//           for the PTX fragment order (codegen/heuristic_tc.h)
//   BLOCK_MMA  1 block-tiled tensor-core matmuls (shared-memory tiles through cp.async and
//           ldmatrix, a hand-written main loop) where a matmul's shape and layout allow (default),
//           0 off: Opt TC alone (codegen/block_mma.h)
//   BLOCK_MMA_TILE  n >= 0: every block matmul uses tiling n of block_mma_tilings() where its
//           shape, layout and the target allow, the others the heuristic's (4..16 need more than
//           48 KiB of shared memory; 10..16 are wgmma main loops, sm_90a, 12 warp-specialized, 13
//           that with TMA, 14 that persistent, 15 that in clusters of 2, 16 those persistent), -1
//           the heuristic's (default)
//   MBARRIER_WATCHDOG_MS  how long an mbarrier wait of a CUDA kernel may last before the kernel
//           traps (a deadlock in a warp-specialized matmul's hand-over; default 2000, 0: no limit,
//           e.g. under cuda-gdb) (codegen/render_cuda.cpp)
//   SMEM    1 shared-memory staging of tensor-core matmul tiles, 0 off (default: slower than
//           unstaged on an H200 as it stands, docs/gpu.md) (codegen/smem.h)
//   FLASH_ATTENTION  1: the Llama model's attention is one fused op (Tensor::flash_attention: no
//           S x S scores stored, recomputed in the backward pass), 0: matmul and softmax (default)
//           (docs/llama.md)
//   MULTI_OUTPUT  1: elementwise ASSIGNs of one shape that read each other or the same inputs,
//           and row reductions of which one reads the other, are one kernel of several outputs
//           (default; an optimizer step is one pass, so is a cross-entropy's max and sum of
//           exponentials), 0: a kernel each (schedule/multi_output.h)
//   KBLOCK  1: the CPU heuristic blocks the reduction of an output-vector kernel whose reused
//           operand outruns L2 (default), 0: never (codegen/heuristic.cpp; BEAM may still pick it)
//   PACK    1: the CPU heuristic packs a matmul's vector operand whose panel rows are not adjacent
//           into a thread's own array (default), 0: never (codegen/pack.h; BEAM may still pick it)
//   POISON  1: every new buffer, Jit arena and BEAM output is filled with 0xFF bytes (NaN in every
//           float dtype) before its first kernel, so a kernel that reads memory nothing wrote
//           shows it; 0: memory as the allocator hands it back (default; runtime/device.h)
//   PTXAS   1: a line per CUDA kernel loaded (sm_XY targets, the NULL and CHECK devices too) with what
//           ptxas says of it: registers, spills, static shared memory, and a WARNING where it spills
//           or serialized its wgmmas (runtime/ptxas_report.h; the report is cached beside the kernel)
//   CUDA_PATH  the CUDA toolkit (NVRTC and its headers; default: next to libnvrtc, /usr/local/cuda)
//   RING, ALL2ALL  allreduce algorithm choice: 0 never, 1 when large (default RING=1, ALL2ALL=0),
//           2 always (schedule/allreduce.h)
//   ALLREDUCE_NODE_NDEVS  k > 0: hierarchical allreduce with k devices per node
//   ALLREDUCE_CAST  1: allreduces of float32 move bfloat16
#include <string>

namespace lg {

// The mbarrier watchdog's default limit (the CUDA prelude's LG_MBARRIER_WATCHDOG_NS, in ms).
inline constexpr int kDefaultMbarrierWatchdogMs = 2000;

struct Config {
  int debug = 0;
  int spec = 0;
  int beam = 0;
  int profile = 0;  // PROFILE=n: time every kernel launch, print the n longest at exit (runtime/profile.h)
  std::string profile_csv;  // PROFILE_CSV=path: also every row of that table, as CSV, at exit
  bool noopt = false;
  std::string device = "CPU";
  int threads = 0;
  bool cache = true;
  std::string cache_dir;  // resolved: never empty after reading the environment
  std::string cc;         // "" = find clang, then gcc
  std::string cuda_arch;  // "" = the GPU's own (sm_90a on compute capability 9.0), or sm_90a where there is none
  std::string cuda_path;  // "" = search
  bool tc = true;
  bool block_mma = true;  // BLOCK_MMA=0: no block-tiled matmuls (codegen/block_mma.h)
  int block_mma_tile = -1;  // BLOCK_MMA_TILE: a fixed tiling (-1: the heuristic's)
  // MBARRIER_WATCHDOG_MS: how long a CUDA kernel's mbarrier wait may last before it traps (0: no
  // limit; codegen/render_cuda.cpp, docs/gpu.md "The mbarrier watchdog")
  int mbarrier_watchdog_ms = kDefaultMbarrierWatchdogMs;
  bool smem = false;  // SMEM=1: shared-memory staging of matmul tiles (codegen/smem.h)
  // ATOMIC_SCATTER=0: GPU scatter-adds walk their positions in order (codegen/atomic_scatter.h)
  bool atomic_scatter = true;
  bool flash_attention = false;  // FLASH_ATTENTION=1: fused attention in the Llama model
  bool multi_output = true;  // MULTI_OUTPUT=0: no kernels of several outputs (schedule/multi_output.h)
  bool kblock = true;        // KBLOCK=0: the CPU heuristic picks no K blocking (codegen/heuristic.cpp)
  bool pack = true;          // PACK=0: the CPU heuristic packs no matmul operand (codegen/pack.h)
  // RECYCLE_PAGES=0: a new host mapping takes no pooled pages (runtime/host_allocator.h)
  bool recycle_pages = true;
  // POISON=1: new device memory is filled with 0xFF (NaNs) before use (runtime/device.h allocate)
  bool poison = false;
  // PTXAS=1: each CUDA kernel's ptxas report, a line as it is loaded (runtime/ptxas_report.h)
  bool ptxas = false;
  // STREAM_STORES=0: CPU kernels store large outputs as ordinary stores (codegen/streaming_stores.h)
  bool stream_stores = true;
  // Tensor-core tiling (codegen/heuristic_tc.cpp), at most: mma tiles per warp along m and n, warps
  // per block along m and n. TC_WARP=MxN, TC_BLOCK=MxN, powers of two.
  int tc_warp_m = 4, tc_warp_n = 8, tc_block_m = 2, tc_block_n = 2;
  int tc_run = 16;  // TC_RUN: 0, 8, 16 or 32 bytes per lane run
  int ring = 1, all2all = 0;
  int allreduce_node_ndevs = 0;
  bool allreduce_cast = false;
};

// The process-wide configuration, read from the environment on first use.
Config& config();

// Re-reads the environment (tests that set variables call this).
void config_reload();

// The CPU threads kernels run on: THREADS, else the machine's hardware threads (at least 1).
int cpu_threads();

// The most THREADS may ask for: beyond it a pool's wakeups dwarf any kernel (100,000 threads hang).
constexpr int kMaxThreads = 1024;

// Integer environment variable with a default; a malformed value (not a whole number, or beyond int)
// is a user error naming the variable.
int env_int(const char* name, int fallback);

// env_int within [lo, hi]; out of range is a user error that says what the variable is (meaning)
// and its range (hi = INT_MAX: no upper bound).
int env_int_in(const char* name, int fallback, int lo, int hi, const char* meaning);

// A 0/1 switch; anything else is a user error. meaning completes "NAME=1 ...".
bool env_flag(const char* name, bool fallback, const char* meaning);

// A finite number of at least lo (strtod syntax); anything else is a user error.
double env_double_at_least(const char* name, double fallback, double lo, const char* meaning);

}  // namespace lg
