// MFU's default peak per device (llm/metrics.h): the host's from its cores, a CUDA device's from
// its GPU's name (runtime/gpu_peaks.h), the compile checks an H200's.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "base/error.h"
#include "llm/metrics.h"
#include "runtime/device.h"

namespace lg::llm {
namespace {

TEST(MetricsPeak, TheHostsPeakIsItsCoresAtTheMeasuredCeiling) {
  double cores = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_DOUBLE_EQ(default_peak_flops("CPU", dtypes::float32), cores * 4.2e9 * 64);
  EXPECT_DOUBLE_EQ(default_peak_flops("CPU", dtypes::bfloat16), cores * 4.2e9 * 128);
}

TEST(MetricsPeak, ACompileCheckDeviceModelsAnH200) {
  try {
    get_device("CUDANULL");
  } catch (const Error& e) {
    GTEST_SKIP() << "no CUDANULL device here: " << e.what();
  }
  EXPECT_EQ(get_device("CUDANULL").hardware(), "");
  EXPECT_DOUBLE_EQ(default_peak_flops("CUDANULL", dtypes::bfloat16), 989e12);
  EXPECT_DOUBLE_EQ(default_peak_flops("CUDANULL", dtypes::float16), 989e12);
  EXPECT_DOUBLE_EQ(default_peak_flops("CUDANULL", dtypes::float32), 67e12);
}

}  // namespace
}  // namespace lg::llm
