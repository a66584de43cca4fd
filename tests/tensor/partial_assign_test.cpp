// Tensor::assign into a run of a buffer's elements (a slice of a realized 1-D tensor): the write
// lands in that part of the buffer, assigns to disjoint parts share one schedule, readers see old
// or new values as documented, and captured steps replay it.
#include <gtest/gtest.h>

#include "base/config.h"
#include "base/error.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"

namespace lg {
namespace {

Tensor flat10() { return Tensor::zeros({10}, dtypes::float32).contiguous().realize(); }

std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

TEST(PartialAssign, DisjointRangesInOneSchedule) {
  Tensor flat = flat10();
  Tensor a = flat.slice(0, 2, 5);
  Tensor b = flat.slice(0, 5, 10).reshape({5, 1});
  a.assign(Tensor::full({3}, 7.0));
  b.assign(Tensor::arange(0, 5, 1, dtypes::float32).reshape({5, 1}));
  Tensor::realize({a, b});
  EXPECT_EQ(values(flat), (std::vector<float>{0, 0, 7, 7, 7, 0, 1, 2, 3, 4}));
  EXPECT_EQ(values(a), (std::vector<float>{7, 7, 7}));
  EXPECT_EQ(b.shape(), (Shape{5, 1}));
}

TEST(PartialAssign, EachRangeUpdatesFromItsOwnOldValue) {
  Tensor flat = Tensor::arange(0, 10, 1, dtypes::float32).contiguous().realize();
  Tensor a = flat.slice(0, 0, 4), b = flat.slice(0, 4, 10);
  a.assign(a * 2);
  b.assign(b + 100);
  Tensor::realize({a, b});
  EXPECT_EQ(values(flat), (std::vector<float>{0, 2, 4, 6, 104, 105, 106, 107, 108, 109}));
}

TEST(PartialAssign, ReadersOfTheAssignedValueSeeTheNewOne) {
  Tensor flat = flat10();
  Tensor a = flat.slice(0, 3, 6);
  a.assign(Tensor::full({3}, 2.0));
  Tensor y = a * 10 + 1;       // reads the ASSIGN: new values
  Tensor old = flat.sum();     // reads the buffer itself in the same schedule: the old values
  Tensor::realize({y, old, a});
  EXPECT_EQ(values(y), (std::vector<float>{21, 21, 21}));
  EXPECT_EQ(values(old)[0], 0.0f);
  EXPECT_EQ(values(flat.sum())[0], 6.0f);
}

TEST(PartialAssign, CrossedRangesAreAUserError) {
  Tensor flat = Tensor::arange(0, 8, 1, dtypes::float32).contiguous().realize();
  Tensor a = flat.slice(0, 0, 4), b = flat.slice(0, 4, 8);
  Tensor new_a = b * 2, new_b = a + 1;  // each reads the range the other overwrites
  a.assign(new_a);
  b.assign(new_b);
  EXPECT_THROW(Tensor::realize({a, b}), Error);
}

TEST(PartialAssign, CopiedToAnotherDeviceAfterTheWrite) {
  std::string other = config().device + ":1";
  Tensor flat = flat10();
  Tensor a = flat.slice(0, 6, 9);
  a.assign(Tensor::full({3}, 5.0));
  Tensor there = a.to(other);
  Tensor::realize({a, there});
  EXPECT_EQ(values(there), (std::vector<float>{5, 5, 5}));
}

TEST(PartialAssign, ReplaysInsideAJit) {
  Tensor flat = flat10();
  Tensor a = flat.slice(0, 1, 3), b = flat.slice(0, 7, 9);
  Jit step([&](const std::vector<Tensor>& in) {
    a.assign(a + in[0]);
    b.assign(b - in[0]);
    Tensor::realize({a, b});
    return std::vector<Tensor>{};
  });
  for (int call = 1; call <= 4; call++) step({Tensor::full({2}, static_cast<double>(call)).contiguous().realize()});
  EXPECT_EQ(values(flat), (std::vector<float>{0, 10, 10, 0, 0, 0, 0, -10, -10, 0}));
}

}  // namespace
}  // namespace lg
