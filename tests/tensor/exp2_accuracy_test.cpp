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

// Also around the underflow to 0, where the vector code sets the lanes with x <= -150 to 0 without
// scaling (an underflowing scale costs Intel cores a microcode assist) and the scalar code scales.
TEST(Exp2, VectorAndScalarCodeGiveTheSameBits) {
  std::vector<float> x;
  for (int i = 0; i < 3968; i++)
    x.push_back(-140.0f + 270.0f * static_cast<float>(i) / 4000.0f + 1e-3f * static_cast<float>(i % 7));
  for (int i = 0; i < 16; i++) x.push_back(-155.0f + 10.0f * static_cast<float>(i) / 16.0f);
  for (float v : {-150.0f, std::nextafter(-150.0f, 0.0f), std::nextafter(-150.0f, -200.0f), -149.5f, -150.5f,
                  -149.0f, -151.0f, -126.0f, -std::numeric_limits<float>::infinity(), -1e30f, -149.99f,
                  -150.01f, std::numeric_limits<float>::quiet_NaN(), -148.3f, -152.7f, -0.0f})
    x.push_back(v);
  auto exp2_of = [](const std::vector<float>& v) {
    return (Tensor::from_vector(v, {static_cast<int64_t>(v.size())}) * 1.0f).exp2().to_vector<float>();
  };
  ASSERT_EQ(x.size(), 4000u);
  std::vector<float> vec = exp2_of(x);            // 4000 = 250 x 16: vector code
  x.push_back(0.0f);
  std::vector<float> scalar = exp2_of(x);         // 4001 = 4001 x 1: scalar code
  for (size_t i = 0; i < vec.size(); i++) {
    if (std::isnan(x[i])) {
      ASSERT_TRUE(std::isnan(vec[i]) && std::isnan(scalar[i]));
      continue;
    }
    ASSERT_EQ(vec[i], scalar[i]) << x[i];
    if (x[i] <= -150.0f) {
      ASSERT_EQ(vec[i], 0.0f) << x[i];
    } else {
      ASSERT_GT(vec[i], 0.0f) << x[i];
    }
  }
}

}  // namespace
}  // namespace lg
