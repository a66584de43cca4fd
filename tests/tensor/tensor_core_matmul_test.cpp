// Tensor::matmul in bf16/fp16 on a CUDA device gets tensor cores (Opt TC, codegen/tensor_core.h),
// checked on CUDACHECK (NVRTC, then the same program on the CPU): the kernels `lazygrad bench matmul`
// runs (a square matmul, whose b is packed into column panels) and an x @ W^T read in place.
#include <gtest/gtest.h>

#include <cmath>

#include "codegen/opt.h"
#include "runtime/device.h"
#include "runtime/nvrtc.h"
#include "schedule/schedule.h"
#include "tensor/tensor.h"

namespace lg {
namespace {

// Kernels of t's schedule (with a reduction) on its device, and how many of them the device's
// heuristic puts on tensor cores.
std::pair<int, int> tensor_core_kernels(const Tensor& t) {
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {t.node()}));
  int reductions = 0, tc = 0;
  for (const ScheduleItem& item : s.items) {
    if (item.kind != ScheduleItem::Kind::Kernel || item.name.rfind("r_", 0) != 0) continue;
    reductions++;
    for (const Opt& o : get_device(t.device()).heuristic_opts(item.ast)) tc += o.kind == OptKind::TC;
  }
  return {reductions, tc};
}

TEST(TensorCoreMatmul, HalfPrecisionMatmulsOnCudaUseTensorCoresAndMatchFloat32) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  for (DType t : {dtypes::bfloat16, dtypes::float16})
    for (int64_t n : {256, 200}) {  // b packed into column panels (256 columns); x @ W^T read in place
      Tensor a = Tensor::randn({128, 96}, t, "CUDACHECK").realize();
      Tensor b = n == 256 ? Tensor::randn({96, n}, t, "CUDACHECK").realize()
                          : Tensor::randn({n, 96}, t, "CUDACHECK").realize().transpose();
      Tensor out = a.matmul(b);
      EXPECT_EQ(tensor_core_kernels(out), std::make_pair(1, 1)) << name(t) << " n=" << n;
      std::vector<double> got = out.cast(dtypes::float32).to_doubles();
      std::vector<double> want = a.to("CPU").cast(dtypes::float32).matmul(b.to("CPU").cast(dtypes::float32)).to_doubles();
      ASSERT_EQ(got.size(), want.size());
      double tol = t == dtypes::bfloat16 ? 1.0 / 128 : 1.0 / 1024;  // the result is rounded to t
      for (size_t i = 0; i < got.size(); i++) ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << i;
    }
}

}  // namespace
}  // namespace lg
