#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tensor/tensor.h"

namespace lg {
namespace {

void check(const std::vector<float>& x) {
  Tensor t = Tensor::from_vector(x, {static_cast<int64_t>(x.size())});
  std::vector<float> got = (t * 1.0f).exp2().to_vector<float>();  // a multiply: not constant-folded
  for (size_t i = 0; i < x.size(); i++) {
    float want = std::exp2(x[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[i])) << x[i];
    } else if (std::isinf(want) || want == 0) {
      EXPECT_EQ(got[i], want) << x[i];
    } else if (want < std::numeric_limits<float>::min()) {  // subnormal results: absolute
      EXPECT_NEAR(got[i], want, 2e-45) << x[i];
    } else {
      EXPECT_NEAR(got[i], want, 3e-7 * want) << x[i];
    }
    if (x[i] == std::floor(x[i]) && std::isfinite(x[i])) {
      EXPECT_EQ(got[i], want) << x[i];
    }
  }
}

// The CPU device computes float32 2^x with the prelude's branch-free polynomial (vectorizable), not
// libm: within 3e-7 relative of exp2 everywhere, exact at integers, and the special values right.
TEST(Exp2, MatchesLibmAcrossTheRangeAndSpecialValues) {
  std::vector<float> x;
  for (int i = 0; i <= 40000; i++) x.push_back(-160.0f + 300.0f * static_cast<float>(i) / 40000.0f);
  for (float v : {0.0f, -0.0f, 1.0f, -1.0f, 127.0f, 128.0f, -126.0f, -149.0f, -150.0f, 0.5f, -0.5f, 1e-8f, -1e-8f})
    x.push_back(v);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  while (x.size() % 16 != 0) x.push_back(3.25f);
  check(x);                                           // 16-lane vector code
  check(std::vector<float>(x.begin(), x.end() - 1));  // scalar code
}

}  // namespace
}  // namespace lg
