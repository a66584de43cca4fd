// Tensor operations whose reference is not a value table: random creation (ranges, statistics,
// determinism), properties, host transfer, assign casting and user errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>

#include "base/error.h"
#include "tensor/host_ref.h"
#include "runtime/realize.h"
#include "tensor/tensor.h"

namespace lg {
namespace {
const DType F32 = dtypes::float32, F16 = dtypes::float16, BF16 = dtypes::bfloat16, F64 = dtypes::float64;
const DType I8 = dtypes::int8, U8 = dtypes::uint8, I16 = dtypes::int16, I32 = dtypes::int32,
            I64 = dtypes::int64;
const DType BOOL = dtypes::boolean;
}  // namespace
}  // namespace lg

// ---- random creation: the reference is ranges, statistics and determinism ----
namespace lg {
namespace {

double mean_of(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); }
double std_of(const std::vector<double>& v) {
  double m = mean_of(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / v.size());
}
bool all_in(const std::vector<double>& v, double lo, double hi_exclusive) {
  return std::all_of(v.begin(), v.end(), [&](double x) { return x >= lo && x < hi_exclusive; });
}

TEST(RandomOps, RandIsInUnitIntervalWithMeanOneHalf) {
  Tensor::manual_seed(1);
  Tensor r = Tensor::rand({100, 100});
  EXPECT_EQ(name(r.dtype()), name(F32));
  EXPECT_EQ(r.shape(), (Shape{100, 100}));
  std::vector<double> v = r.to_doubles();
  EXPECT_TRUE(all_in(v, 0, 1));
  EXPECT_NEAR(mean_of(v), 0.5, 0.02);  // standard error 0.003
  EXPECT_NEAR(std_of(v), std::sqrt(1.0 / 12), 0.01);
  EXPECT_GT(std::set<double>(v.begin(), v.end()).size(), 9900u);  // not a repeating pattern
}

TEST(RandomOps, SixteenBitRandStaysBelowOne) {
  Tensor::manual_seed(2);
  for (DType t : {F16, BF16}) {
    Tensor r = Tensor::rand({10000}, t);
    EXPECT_EQ(name(r.dtype()), name(t));
    std::vector<double> v = r.to_doubles();
    EXPECT_TRUE(all_in(v, 0, 1)) << name(t) << " rand must not round up to 1";
    EXPECT_NEAR(mean_of(v), 0.5, 0.03) << name(t);
  }
}

TEST(RandomOps, SameSeedGivesSameValues) {
  Tensor::manual_seed(7);
  std::vector<double> a = Tensor::rand({64}).to_doubles();
  Tensor::manual_seed(7);
  EXPECT_EQ(Tensor::rand({64}).to_doubles(), a);
}

TEST(RandomOps, ConsecutiveTensorsAndSeedsDiffer) {
  Tensor::manual_seed(7);
  std::vector<double> a = Tensor::rand({64}).to_doubles();
  std::vector<double> b = Tensor::rand({64}).to_doubles();
  Tensor::manual_seed(8);
  std::vector<double> c = Tensor::rand({64}).to_doubles();
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
}

TEST(RandomOps, ElementDependsOnlyOnSeedCallAndIndex) {
  // tensor.h: element i of the k-th random tensor since manual_seed(s) depends only on (s, k, i),
  // so the shape (and the element count) of the tensor does not change element i.
  Tensor::manual_seed(5);
  std::vector<double> big = Tensor::rand({4, 8}).to_doubles();
  Tensor::manual_seed(5);
  std::vector<double> small = Tensor::rand({16}).to_doubles();
  EXPECT_EQ(small, std::vector<double>(big.begin(), big.begin() + 16));
}

// The key and offset are data, not constants: random tensors of one shape share one kernel.
TEST(RandomOps, SameShapeTensorsShareOneCompiledKernel) {
  Tensor::manual_seed(12345);
  Tensor::randn({3, 7}).realize();
  size_t built = programs_built();
  Tensor::manual_seed(777);
  Tensor a = Tensor::randn({3, 7}).realize(), b = Tensor::randn({3, 7}).realize();
  EXPECT_EQ(programs_built(), built);
  EXPECT_NE(a.to_vector<float>(), b.to_vector<float>());
}

TEST(RandomOps, UniformIsInRangeWithMidpointMean) {
  Tensor::manual_seed(11);
  Tensor u = Tensor::uniform({100, 100}, -3, 5);
  EXPECT_EQ(name(u.dtype()), name(F32));
  std::vector<double> v = u.to_doubles();
  EXPECT_TRUE(all_in(v, -3, 5));
  EXPECT_NEAR(mean_of(v), 1.0, 0.1);  // standard error 0.023
  EXPECT_NEAR(std_of(v), 8 / std::sqrt(12.0), 0.05);
}

TEST(RandomOps, RandnHasMeanZeroAndStdOne) {
  Tensor::manual_seed(13);
  Tensor n = Tensor::randn({100, 100});
  EXPECT_EQ(name(n.dtype()), name(F32));
  std::vector<double> v = n.to_doubles();
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); }));
  EXPECT_NEAR(mean_of(v), 0, 0.05);  // standard error 0.01
  EXPECT_NEAR(std_of(v), 1, 0.05);
  double within_one = std::count_if(v.begin(), v.end(), [](double x) { return std::abs(x) < 1; }) / 1e4;
  EXPECT_NEAR(within_one, 0.6827, 0.03);  // normal, not uniform
}

TEST(RandomOps, RandintIsInRangeAndCoversIt) {
  Tensor::manual_seed(17);
  Tensor r = Tensor::randint({10000}, -3, 4);
  EXPECT_EQ(name(r.dtype()), name(I32));
  std::vector<double> v = r.to_doubles();
  EXPECT_TRUE(all_in(v, -3, 4));
  for (int64_t k = -3; k < 4; k++) {
    auto count = std::count(v.begin(), v.end(), static_cast<double>(k));
    EXPECT_NEAR(count, 10000 / 7.0, 200) << "value " << k;  // standard deviation ~35
  }
}

TEST(RandomOps, RandintTakesIntegerDtype) {
  Tensor::manual_seed(19);
  Tensor r = Tensor::randint({500}, 100, 103, I64);
  EXPECT_EQ(name(r.dtype()), name(I64));
  std::vector<double> v = r.to_doubles();
  EXPECT_TRUE(all_in(v, 100, 103));
  EXPECT_EQ(std::set<double>(v.begin(), v.end()).size(), 3u);
}

// ---- creation, properties, host transfer, assign (tensor_semantics_test.cpp covers realize and devices)
// ----

TEST(Creation, EmptyHasOnlyShapeAndDtype) {
  Tensor e = Tensor::empty({2, 3}, F16);
  EXPECT_EQ(e.shape(), (Shape{2, 3}));
  EXPECT_EQ(name(e.dtype()), name(F16));
  EXPECT_EQ(e.numel(), 6);
}

TEST(Properties, ShapeSizeRankAndCount) {
  Tensor t = Tensor::zeros({2, 3, 4});
  EXPECT_TRUE(t.defined());
  EXPECT_FALSE(Tensor().defined());
  EXPECT_EQ(t.ndim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.size(0), 2);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(Tensor::zeros({}).ndim(), 0);
  EXPECT_EQ(Tensor::zeros({}).numel(), 1);
  EXPECT_FALSE(t.device().empty());
}

TEST(Movement, SplitGivesChunksInOrder) {
  Tensor x = Tensor::arange(10).reshape({5, 2});
  std::vector<Tensor> parts = x.split(2);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(parts[2].shape(), (Shape{1, 2}));
  EXPECT_EQ(parts[2].to_doubles(), (std::vector<double>{8, 9}));
  std::vector<Tensor> sized = x.split(std::vector<int64_t>{1, 4}, 0);
  ASSERT_EQ(sized.size(), 2u);
  EXPECT_EQ(sized[1].shape(), (Shape{4, 2}));
  EXPECT_EQ(Tensor::cat(parts).to_doubles(), x.to_doubles());
}

TEST(HostTransfer, ToVectorAndToBytesReturnTheElements) {
  Tensor t = Tensor::from_vector<float>({1.5f, -2.f, 3.25f}, {3});
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1.5f, -2.f, 3.25f}));
  std::vector<uint8_t> bytes = t.to_host();
  ASSERT_EQ(bytes.size(), 3 * sizeof(float));
  float second = 0;
  std::memcpy(&second, bytes.data() + sizeof(float), sizeof second);
  EXPECT_EQ(second, -2.f);
  EXPECT_EQ((t * 2).to_vector<float>(), (std::vector<float>{3.f, -4.f, 6.5f}));
  EXPECT_THROW(t.to_vector<int32_t>(), Error);
}

TEST(Assign, CastsToTheTargetDtype) {
  Tensor w = Tensor::from_doubles({0, 0}, {2}, I32);
  w.assign(Tensor::from_doubles({1.7, -2.7}, {2}, F32));
  EXPECT_EQ(name(w.dtype()), name(I32));
  EXPECT_EQ(w.to_doubles(), (std::vector<double>{1, -2}));
}

// ---- user mistakes throw lg::Error naming the operation ----

void expect_user_error(const std::function<void()>& f, const std::string& op) {
  try {
    f();
    ADD_FAILURE() << op << ": no lg::Error thrown";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(op), std::string::npos)
        << "message does not name " << op << ": " << e.what();
  }
}

TEST(UserErrors, ThrowAndNameTheOperation) {
  Tensor a = Tensor::zeros({3, 4}), b = Tensor::zeros({5, 6});
  expect_user_error([&] { a.matmul(b); }, "matmul");
  expect_user_error([&] { a.reshape({5, 5}); }, "reshape");
  expect_user_error([&] { a.permute({0, 0}); }, "permute");
  expect_user_error([&] { a.sum(2); }, "sum");
  expect_user_error([&] { a.squeeze(0); }, "squeeze");
  expect_user_error([&] { Tensor::cat({a, b}, 0); }, "cat");
}

TEST(UserErrors, IncompatibleBroadcastThrows) {
  EXPECT_THROW(Tensor::zeros({3}) + Tensor::zeros({4}), Error);
  EXPECT_THROW(Tensor::zeros({2, 3}).expand({4, 3}), Error);
}

}  // namespace
}  // namespace lg
