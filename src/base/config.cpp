#include "base/config.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>

#include "base/error.h"

namespace lg {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  long x = std::strtol(v, &end, 10);
  LG_USER_CHECK(end != v && *end == '\0', "environment variable ", name, "=\"", v,
                "\" is not an integer; set it to a whole number such as ", name, "=1");
  LG_USER_CHECK(
      errno != ERANGE && x >= std::numeric_limits<int>::min() && x <= std::numeric_limits<int>::max(),
      "environment variable ", name, "=\"", v, "\" is too large a number");
  return static_cast<int>(x);
}

int env_int_in(const char* name, int fallback, int lo, int hi, const char* meaning) {
  int x = env_int(name, fallback);
  LG_USER_CHECK(x >= lo && x <= hi, "environment variable ", name, "=", x, " is out of range: ", name, " is ",
                meaning, ", from ", lo,
                hi == std::numeric_limits<int>::max() ? std::string(" up") : " to " + std::to_string(hi));
  return x;
}

bool env_flag(const char* name, bool fallback, const char* meaning) {
  int x = env_int(name, fallback ? 1 : 0);
  LG_USER_CHECK(x == 0 || x == 1, "environment variable ", name, "=", x, " is not 0 or 1 (", name, "=1 ",
                meaning, "; unset, it is ", fallback ? 1 : 0, ")");
  return x == 1;
}

double env_double_at_least(const char* name, double fallback, double lo, const char* meaning) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  double x = std::strtod(v, &end);
  LG_USER_CHECK(end != v && *end == '\0' && std::isfinite(x) && x >= lo, "environment variable ", name, "=\"",
                v, "\" is not a number of at least ", lo, " (", name, " is ", meaning, ")");
  return x;
}

static Config read_config() {
  Config c;
  constexpr int kAny = std::numeric_limits<int>::max();
  c.debug =
      env_int_in("DEBUG", 0, 0, kAny, "the debug output level (0 none, 1 kernels and timings ... 5 IR)");
  c.spec =
      env_int_in("SPEC", 0, 0, 2, "the graph checks (0 none, 1 at stage boundaries, 2 after every rewrite)");
  c.beam = env_int_in("BEAM", 0, 0, kAny, "the BEAM search width (0: the heuristic's Opts)");
  c.profile = env_int_in("PROFILE", 0, 0, kAny, "how many of the longest kernels to print (0: no profile)");
  c.noopt = env_flag("NOOPT", false, "runs kernels without Opts");
  c.threads =
      env_int_in("THREADS", 0, 0, kMaxThreads, "the CPU device's threads (0: one per hardware thread)");
  if (const char* d = std::getenv("DEVICE"); d != nullptr && *d != '\0') c.device = d;
  c.cache = env_flag("CACHE", true, "caches compiled kernels and BEAM results on disk");
  if (const char* d = std::getenv("LAZYGRAD_CACHE_DIR"); d != nullptr && *d != '\0') c.cache_dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') c.cache_dir = std::string(x) + "/lazygrad";
  else if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') c.cache_dir = std::string(h) + "/.cache/lazygrad";
  else c.cache_dir = "/tmp/lazygrad-cache";
  if (const char* cc = std::getenv("CC"); cc != nullptr && *cc != '\0') c.cc = cc;
  if (const char* a = std::getenv("CUDA_ARCH"); a != nullptr && *a != '\0') c.cuda_arch = a;
  if (const char* p = std::getenv("CUDA_PATH"); p != nullptr && *p != '\0') c.cuda_path = p;
  if (const char* p = std::getenv("PROFILE_CSV"); p != nullptr && *p != '\0') c.profile_csv = p;
  c.tc = env_flag("TC", true, "maps bf16/fp16 matmuls onto tensor cores on CUDA devices");
  c.block_mma = env_flag("BLOCK_MMA", true, "uses block-tiled tensor-core matmuls where they fit");
  c.block_mma_tile = env_int("BLOCK_MMA_TILE", -1);  // range checked by TcTiling::from_config
  c.mbarrier_watchdog_ms =
      env_int_in("MBARRIER_WATCHDOG_MS", kDefaultMbarrierWatchdogMs, 0, kAny,
                 "how long a CUDA kernel's mbarrier wait may last before it traps, in ms "
                 "(0: no limit)");
  c.smem = env_flag("SMEM", false, "stages tensor-core matmul tiles in shared memory");
  c.atomic_scatter = env_flag("ATOMIC_SCATTER", true,
                              "runs GPU scatter-adds over their positions in parallel with atomic adds");
  c.flash_attention = env_flag("FLASH_ATTENTION", false, "makes the Llama model's attention one fused op");
  c.multi_output = env_flag("MULTI_OUTPUT", true, "fuses kernels of several outputs");
  c.kblock = env_flag("KBLOCK", true, "lets the CPU heuristic block reductions");
  c.pack = env_flag("PACK", true, "lets the CPU heuristic pack matmul operands");
  c.poison = env_flag("POISON", false, "fills new device memory with 0xFF bytes (NaN) before use");
  c.ptxas = env_flag("PTXAS", false, "prints what ptxas says of each CUDA kernel (registers, spills, wgmma)");
  c.recycle_pages = env_flag("RECYCLE_PAGES", true, "moves pooled pages into new CPU buffers");
  c.stream_stores = env_flag("STREAM_STORES", true, "writes large CPU kernel outputs with streaming stores");
  c.tc_run = env_int("TC_RUN", 16);
  LG_USER_CHECK(c.tc_run == 0 || c.tc_run == 8 || c.tc_run == 16 || c.tc_run == 32, "environment variable TC_RUN=", c.tc_run,
                " is not 0 (the PTX fragment order), 8, 16 or 32 (bytes each lane reads in one piece)");
  auto pair = [](const char* name, int& m, int& n) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return;
    int a = 0, b = 0;
    char x = 0, rest = 0;
    bool ok = std::sscanf(v, "%d%c%d%c", &a, &x, &b, &rest) == 3 && x == 'x';
    auto pow2 = [](int k) { return k >= 1 && k <= 16 && (k & (k - 1)) == 0; };
    LG_USER_CHECK(ok && pow2(a) && pow2(b), "environment variable ", name, "=\"", v,
                  "\" is not MxN with M and N powers of two from 1 to 16, e.g. ", name, "=2x4");
    m = a, n = b;
  };
  pair("TC_WARP", c.tc_warp_m, c.tc_warp_n);
  pair("TC_BLOCK", c.tc_block_m, c.tc_block_n);
  c.ring = env_int_in("RING", 1, 0, 2, "when the ring allreduce runs (0 never, 1 when large, 2 always)");
  c.all2all =
      env_int_in("ALL2ALL", 0, 0, 2, "when the all-to-all allreduce runs (0 never, 1 when large, 2 always)");
  c.allreduce_node_ndevs = env_int_in("ALLREDUCE_NODE_NDEVS", 0, 0, kAny,
                                      "the devices per node of the hierarchical allreduce (0: off)");
  c.allreduce_cast = env_flag("ALLREDUCE_CAST", false, "makes float32 allreduces move bfloat16");
  return c;
}

Config& config() {
  static Config c = read_config();
  return c;
}

void config_reload() { config() = read_config(); }

int cpu_threads() {
  return config().threads > 0 ? config().threads
                              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace lg
