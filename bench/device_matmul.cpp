#include "bench/device_matmul.h"

#include <chrono>
#include <cstdio>

#include "base/error.h"
#include "codegen/opt.h"
#include "runtime/device.h"
#include "schedule/schedule.h"
#include "tensor/tensor.h"

namespace lg::bench {

// Whether the device's heuristic puts some kernel of t on tensor cores (Opt TC: CUDA, bf16/fp16,
// TC=1; codegen/tensor_core.h).
static bool uses_tensor_cores(const Tensor& t) {
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {t.node()}));
  for (const ScheduleItem& item : s.items)
    if (item.kind == ScheduleItem::Kind::Kernel)
      for (const Opt& opt : get_device(t.device()).heuristic_opts(item.ast))
        if (opt.kind == OptKind::TC) return true;
  return false;
}

void run_device_matmul(const DeviceMatmulOptions& o) {
  DType t = o.dtype == "bf16"   ? dtypes::bfloat16
            : o.dtype == "fp16" ? dtypes::float16
            : o.dtype == "fp32" ? dtypes::float32
                                : (user_error("bench matmul: --dtype must be bf16, fp16 or fp32, got ", o.dtype), dtypes::float32);
  LG_USER_CHECK(o.repeats >= 1, "bench matmul: --repeats must be at least 1");
  for (int64_t n : o.sizes) {
    LG_USER_CHECK(n >= 1, "bench matmul: sizes must be positive, got ", n);
    Tensor a = Tensor::randn({n, n}, t, o.device).realize(), b = Tensor::randn({n, n}, t, o.device).realize();
    auto wait = [](const Tensor& x) { x.shrink({{0, 1}, {0, 1}}).to_doubles(); };
    bool tc = uses_tensor_cores(a.matmul(b));
    Tensor out = a.matmul(b).realize();  // compiles
    wait(out);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < o.repeats; i++) out = a.matmul(b).realize();
    wait(out);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / o.repeats;
    std::printf("matmul %s %s N=%lld ms=%.3f tflops=%.2f tensor_cores=%s\n", o.device.c_str(), o.dtype.c_str(),
                static_cast<long long>(n), s * 1e3, 2.0 * n * n * n / s / 1e12, tc ? "yes" : "no");
    std::fflush(stdout);
  }
}

}  // namespace lg::bench
