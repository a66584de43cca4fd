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

TEST(Exp2, VectorAndScalarCodeGiveTheSameBits) {
  std::vector<float> x;
  for (int i = 0; i < 4000; i++) x.push_back(-140.0f + 270.0f * static_cast<float>(i) / 4000.0f + 1e-3f * static_cast<float>(i % 7));
  auto exp2_of = [](const std::vector<float>& v) {
    return (Tensor::from_vector(v, {static_cast<int64_t>(v.size())}) * 1.0f).exp2().to_vector<float>();
  };
  std::vector<float> vec = exp2_of(x);            // 4000 = 250 x 16: vector code
  x.push_back(0.0f);
  std::vector<float> scalar = exp2_of(x);         // 4001 = 4001 x 1: scalar code
  for (size_t i = 0; i < vec.size(); i++) ASSERT_EQ(vec[i], scalar[i]) << x[i];
}

}  // namespace
}  // namespace lg
