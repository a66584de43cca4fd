// Whether a run's lasting state fits in host memory, checked before the model is built
// (llm/host_memory.h): bytes per parameter by optimizer and dtype, the error's numbers and advice.
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "llm/host_memory.h"
#include "runtime/device.h"

namespace lg::llm {
namespace {

TrainStepOptions step_with(const std::string& optimizer, DType compute) {
  TrainStepOptions s;
  s.optimizer = optimizer;
  s.compute = compute;
  return s;
}

TEST(HostMemory, BytesPerParameterByOptimizerAndComputeDtype) {
  EXPECT_EQ(state_bytes_per_param(step_with("adamw", dtypes::bfloat16)),
            18);  // master, grad, m, v, bf16 copy
  EXPECT_EQ(state_bytes_per_param(step_with("adamw", dtypes::float32)), 16);
  EXPECT_EQ(state_bytes_per_param(step_with("sgd", dtypes::bfloat16)), 10);
  EXPECT_EQ(state_bytes_per_param(step_with("none", dtypes::float32)), 4);
}

TEST(HostMemory, AModelTooLargeForTheHostIsAUserErrorWithItsNumbers) {
  LlamaConfig c = load_llama_config("llama3.1-8b");  // 8030261248 parameters
  const int64_t gib = int64_t{1} << 30;
  try {
    check_fits_host_memory(c, step_with("adamw", dtypes::bfloat16), 1, "CPU", 24 * gib);
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("model llama3.1-8b (8.03 B parameters) needs at least 134.6 GiB of host memory on CPU"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("AdamW's two moments, and the bf16 compute copy (18 bytes a parameter"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("this machine has 24.0 GiB available"), std::string::npos) << m;
    EXPECT_NE(m.find("--set layers=N"), std::string::npos) << m;
  }
  // two replicas on one host need twice as much
  try {
    check_fits_host_memory(c, step_with("none", dtypes::float32), 2, "CPU", 24 * gib);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs at least 59.8 GiB of host memory on CPU (2 replicas)"),
              std::string::npos)
        << e.what();
  }
  // exactly enough passes
  const int64_t need = c.num_params() * 18;
  EXPECT_NO_THROW(check_fits_host_memory(c, step_with("adamw", dtypes::bfloat16), 1, "CPU", need));
  EXPECT_THROW(check_fits_host_memory(c, step_with("adamw", dtypes::bfloat16), 1, "CPU", need - 1), Error);
}

TEST(HostMemory, TheHostReportsItsAvailableMemory) {
  std::optional<int64_t> available = host_available_bytes();
  ASSERT_TRUE(available.has_value());
  EXPECT_GT(*available, 0);
}

TEST(HostMemory, DevicesThatRunNothingAreNotChecked) {
  try {
    get_device("CUDANULL");
  } catch (const Error& e) {
    GTEST_SKIP() << "no CUDANULL device here: " << e.what();
  }
  LlamaConfig c = load_llama_config("llama3.1-405b");  // far beyond any host
  EXPECT_NO_THROW(check_host_memory_for(c, step_with("adamw", dtypes::bfloat16), "CUDANULL"));
  EXPECT_THROW(check_host_memory_for(c, step_with("adamw", dtypes::bfloat16), "CPU"), Error);
}

}  // namespace
}  // namespace lg::llm
