#include "bench/device_matmul.h"

#include <chrono>
#include <cstdio>

#include "base/error.h"
#include "tensor/tensor.h"

namespace lg::bench {

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
    Tensor out = a.matmul(b).realize();  // compiles
    wait(out);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < o.repeats; i++) out = a.matmul(b).realize();
    wait(out);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / o.repeats;
    std::printf("matmul %s %s N=%lld ms=%.3f tflops=%.2f\n", o.device.c_str(), o.dtype.c_str(), static_cast<long long>(n),
                s * 1e3, 2.0 * n * n * n / s / 1e12);
    std::fflush(stdout);
  }
}

}  // namespace lg::bench
