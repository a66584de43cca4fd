#include "bench/baselines.h"

#include <cblas.h>  // signatures only: the library itself is loaded with dlopen
#include <dlfcn.h>
#include <strings.h>

#include <cstdlib>
#include <cstring>

#include "base/error.h"
#include "runtime/thread_pool.h"

namespace lg::bench {
namespace {

using SgemmFn = decltype(&cblas_sgemm);
using CorenameFn = decltype(&openblas_get_corename);
using ConfigFn = decltype(&openblas_get_config);
using SetThreadsFn = decltype(&openblas_set_num_threads);

SgemmFn sgemm_fn = nullptr;

template <class Fn>
Fn symbol(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  LG_USER_CHECK(p, "bench: libopenblas.so.0 has no symbol ", name, " (", dlerror(), ")");
  return reinterpret_cast<Fn>(p);
}

// The OPENBLAS_CORETYPE value for a --blas-core choice ("" = leave it unset); see baselines.h.
std::string coretype_for(const std::string& core) {
  if (core == "detect") return "";
  if (core == "auto") return __builtin_cpu_supports("avx512f") ? "SkylakeX" : "";
  return core;
}

}  // namespace

OpenBlas load_openblas(const std::string& core) {
  LG_CHECK(sgemm_fn == nullptr, "OpenBLAS is configured once per process");
  std::string coretype = coretype_for(core);
  unsetenv("OPENBLAS_L2_SIZE");  // before the dlopen: OpenBLAS reads these while loading
  if (coretype.empty())
    unsetenv("OPENBLAS_CORETYPE");
  else
    setenv("OPENBLAS_CORETYPE", coretype.c_str(), 1);
  std::string n = std::to_string(threads());
  setenv("OPENBLAS_NUM_THREADS", n.c_str(), 1);  // the same thread count as lazygrad's kernels
  void* lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  LG_USER_CHECK(lib, "bench: cannot load OpenBLAS (", dlerror(),
                "); install it with `apt-get install libopenblas-dev` (scripts/setup.sh does)");
  symbol<SetThreadsFn>(lib, "openblas_set_num_threads")(threads());
  sgemm_fn = symbol<SgemmFn>(lib, "cblas_sgemm");
  OpenBlas b;
  b.requested = coretype;
  b.corename = symbol<CorenameFn>(lib, "openblas_get_corename")();
  b.config = symbol<ConfigFn>(lib, "openblas_get_config")();
  // OpenBLAS takes a core name it does not have for detection, silently: the baseline would be
  // another core's than the one asked for
  LG_USER_CHECK(
      coretype.empty() || strcasecmp(coretype.c_str(), b.corename.c_str()) == 0, "bench: --blas-core ", core,
      ": this OpenBLAS (", b.config, ") has no core of that name and chose ", b.corename,
      "; give one it has (as OPENBLAS_CORETYPE spells them: Haswell, SkylakeX, Cooperlake, Zen, ...), "
      "auto or detect");
  b.threads = threads();
  return b;
}

void OpenBlas::sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) const {
  sgemm_fn(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
           static_cast<int>(k), 1.0f, a, static_cast<int>(k), b, static_cast<int>(n), 0.0f, c,
           static_cast<int>(n));
}

void triad(float* a, const float* b, const float* c, float s, int64_t n) {
  parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; i++) a[i] = b[i] + s * c[i];
  });
}

void parallel_memcpy(void* dst, const void* src, int64_t nbytes) {
  parallel_for(nbytes, [&](int64_t begin, int64_t end) {
    std::memcpy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin, end - begin);
  });
}

}  // namespace lg::bench
