// Tensor::matmul in bf16/fp16 on a CUDA device gets tensor cores (Opt TC, codegen/tensor_core.h),
// checked on CUDACHECK (NVRTC, then the same program on the CPU): the kernels `lazygrad bench matmul`
// runs (a square matmul) and an x @ W^T read in place. On GPU devices the weight is read in place:
// no column panels (tensor/reduce.cpp packs them for the CPU only).
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
// heuristic puts on tensor cores (Opt TC, or BLOCK_MMA where the shape allows: 128 x 96 @ 96 x 256).
std::pair<int, int> tensor_core_kernels(const Tensor& t) {
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {t.node()}));
  int reductions = 0, tc = 0;
  for (const ScheduleItem& item : s.items) {
    if (item.kind != ScheduleItem::Kind::Kernel || item.name.rfind("r_", 0) != 0) continue;
    reductions++;
    for (const Opt& o : get_device(t.device()).heuristic_opts(item.ast)) tc += o.kind == OptKind::TC || o.kind == OptKind::BLOCK_MMA;
  }
  return {reductions, tc};
}

TEST(TensorCoreMatmul, HalfPrecisionMatmulsOnCudaUseTensorCoresAndMatchFloat32) {
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  for (DType t : {dtypes::bfloat16, dtypes::float16})
    for (int64_t n : {256, 200}) {  // b (256 columns) and x @ W^T
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

// Kernels (not copies) t's schedule has.
int kernels(const Tensor& t) {
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {t.node()}));
  int n = 0;
  for (const ScheduleItem& item : s.items) n += item.kind == ScheduleItem::Kind::Kernel;
  return n;
}

TEST(TensorCoreMatmul, GpuDevicesReadTheWeightInPlaceTheCpuPacksIt) {
  EXPECT_TRUE(is_gpu_device("CUDA:3") && is_gpu_device("CUDACHECK") && is_gpu_device("CUDANULL@1") &&
              is_gpu_device("HIPCHECK"));
  EXPECT_FALSE(is_gpu_device("CPU") || is_gpu_device("CPU:1@0") || is_gpu_device("INTERP") || is_gpu_device(""));
  Tensor a = Tensor::randn({128, 96}, dtypes::bfloat16, "CPU").realize();
  Tensor b = Tensor::randn({96, 256}, dtypes::bfloat16, "CPU").realize();
  EXPECT_EQ(kernels(a.matmul(b)), 2) << "CPU: the panel copy, then the product";
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  Tensor ga = a.to("CUDACHECK").realize(), gb = b.to("CUDACHECK").realize();
  EXPECT_EQ(kernels(ga.matmul(gb)), 1) << "GPU: the product reads b in place";
  std::vector<double> got = ga.matmul(gb).to_doubles(), want = a.matmul(b).to_doubles();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) ASSERT_NEAR(got[i], want[i], (1 + std::abs(want[i])) / 128) << i;
}

}  // namespace
}  // namespace lg
