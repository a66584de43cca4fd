#include "base/config.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "base/error.h"

namespace lg {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  LG_USER_CHECK(end != v && *end == '\0', "environment variable ", name, "=\"", v,
                "\" is not an integer; set it to a whole number such as ", name, "=1");
  return static_cast<int>(x);
}

static Config read_config() {
  Config c;
  c.debug = env_int("DEBUG", 0);
  c.spec = env_int("SPEC", 0);
  c.beam = env_int("BEAM", 0);
  c.profile = env_int("PROFILE", 0);
  c.noopt = env_int("NOOPT", 0) != 0;
  c.threads = env_int("THREADS", 0);
  if (const char* d = std::getenv("DEVICE"); d != nullptr && *d != '\0') c.device = d;
  c.cache = env_int("CACHE", 1) != 0;
  if (const char* d = std::getenv("LAZYGRAD_CACHE_DIR"); d != nullptr && *d != '\0') c.cache_dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') c.cache_dir = std::string(x) + "/lazygrad";
  else if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') c.cache_dir = std::string(h) + "/.cache/lazygrad";
  else c.cache_dir = "/tmp/lazygrad-cache";
  if (const char* cc = std::getenv("CC"); cc != nullptr && *cc != '\0') c.cc = cc;
  if (const char* a = std::getenv("CUDA_ARCH"); a != nullptr && *a != '\0') c.cuda_arch = a;
  if (const char* p = std::getenv("CUDA_PATH"); p != nullptr && *p != '\0') c.cuda_path = p;
  if (const char* p = std::getenv("PROFILE_CSV"); p != nullptr && *p != '\0') c.profile_csv = p;
  c.tc = env_int("TC", 1) != 0;
  c.block_mma = env_int("BLOCK_MMA", 1) != 0;
  c.block_mma_tile = env_int("BLOCK_MMA_TILE", -1);  // range checked by TcTiling::from_config
  c.smem = env_int("SMEM", 0) != 0;
  c.flash_attention = env_int("FLASH_ATTENTION", 0) != 0;
  c.multi_output = env_int("MULTI_OUTPUT", 1) != 0;
  c.kblock = env_int("KBLOCK", 1) != 0;
  c.pack = env_int("PACK", 1) != 0;
  c.recycle_pages = env_int("RECYCLE_PAGES", 1) != 0;
  c.stream_stores = env_int("STREAM_STORES", 1) != 0;
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
  c.ring = env_int("RING", 1);
  c.all2all = env_int("ALL2ALL", 0);
  c.allreduce_node_ndevs = env_int("ALLREDUCE_NODE_NDEVS", 0);
  LG_USER_CHECK(c.allreduce_node_ndevs >= 0, "ALLREDUCE_NODE_NDEVS=", c.allreduce_node_ndevs,
                " must be 0 (off) or the number of devices per node");
  c.allreduce_cast = env_int("ALLREDUCE_CAST", 0) != 0;
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
