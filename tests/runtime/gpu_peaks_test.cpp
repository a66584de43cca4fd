// Datasheet peaks by the name the driver reports (runtime/gpu_peaks.h): each family and the
// variants its names tell apart, and names not in the table.
#include <gtest/gtest.h>

#include <string>

#include "runtime/gpu_peaks.h"

namespace lg {
namespace {

struct Case {
  const char* name;  // as cuDeviceGetName / nvidia-smi print it
  const char* model;
  double bf16_tflops, fp32_tflops, gbs;
};

TEST(GpuPeaks, DriverNamesMapToTheirDatasheetPeaks) {
  const Case cases[] = {
      {"NVIDIA H200", "H200", 989, 67, 4800},
      {"NVIDIA H200 NVL", "H200 NVL", 835, 60, 4800},
      {"NVIDIA H100 80GB HBM3", "H100 SXM", 989, 67, 3350},
      {"NVIDIA H100 PCIe", "H100 PCIe", 756, 51, 2000},
      {"NVIDIA H100 NVL", "H100 NVL", 835, 60, 3900},
      {"NVIDIA GH200 480GB", "GH200", 989, 67, 4000},
      {"NVIDIA A100-SXM4-80GB", "A100 80GB", 312, 19.5, 2039},
      {"NVIDIA A100-SXM4-40GB", "A100 40GB", 312, 19.5, 1555},
      {"NVIDIA A100-PCIE-40GB", "A100 40GB", 312, 19.5, 1555},
      {"NVIDIA A100 80GB PCIe", "A100 80GB PCIe", 312, 19.5, 1935},
      {"NVIDIA L40S", "L40S", 362, 91.6, 864},
      {"NVIDIA L4", "L4", 121, 30.3, 300},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::optional<GpuPeaks> p = gpu_peaks(c.name);
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(std::string(p->model), c.model);
    EXPECT_DOUBLE_EQ(p->bf16_flops, c.bf16_tflops * 1e12);
    EXPECT_DOUBLE_EQ(p->fp32_flops, c.fp32_tflops * 1e12);
    EXPECT_DOUBLE_EQ(p->bytes_per_s, c.gbs * 1e9);
  }
}

TEST(GpuPeaks, NamesNotInTheTableHaveNone) {
  for (const char* name :
       {"", "NVIDIA L40", "NVIDIA GeForce RTX 4090", "Tesla V100-SXM2-32GB", "AMD Instinct MI300X"})
    EXPECT_FALSE(gpu_peaks(name).has_value()) << name;
}

// tools/gpu_check.sh parses these lines (tests/tools/gpu_check_test.sh feeds it the same text).
TEST(GpuPeaks, TheDevicesLineNamesTheGpuAndItsPeaks) {
  EXPECT_EQ(describe_gpu("NVIDIA H100 80GB HBM3"),
            "gpu: NVIDIA H100 80GB HBM3, H100 SXM peaks: 989 TFLOP/s bf16, 67.0 TFLOP/s fp32, 3350 GB/s");
  EXPECT_EQ(describe_gpu("NVIDIA H100 PCIe"),
            "gpu: NVIDIA H100 PCIe, H100 PCIe peaks: 756 TFLOP/s bf16, 51.0 TFLOP/s fp32, 2000 GB/s");
  EXPECT_EQ(describe_gpu("NVIDIA Future GPU"),
            "gpu: NVIDIA Future GPU, peaks not known (MFU assumes an H200's; give train --peak-tflops)");
}

}  // namespace
}  // namespace lg
