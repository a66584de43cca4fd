// FlatLayout: entries as aligned runs of one flat buffer, grouped, with zero padding.
#include <gtest/gtest.h>

#include "base/error.h"
#include "nn/flat_layout.h"

namespace lg::nn {
namespace {

TEST(FlatLayout, GroupsAreRunsOfAlignedEntries) {
  // entries: (2,3) group 0, (70) group 1, (4) group 0 -> group 0: offsets 0, 64; group 1 at 128
  FlatLayout l({{2, 3}, {70}, {4}}, {0, 1, 0});
  EXPECT_EQ(l.offset(0), 0);
  EXPECT_EQ(l.offset(2), 64);
  EXPECT_EQ(l.offset(1), 128);
  EXPECT_EQ(l.padded_numel(1), 128);
  EXPECT_EQ(l.numel(), 256);
  EXPECT_EQ(l.groups(), 2);
  EXPECT_EQ(l.group_begin(0), 0);
  EXPECT_EQ(l.group_end(0), 128);
  EXPECT_EQ(l.group_begin(1), 128);
  EXPECT_EQ(l.group_end(1), 256);
}

// A large buffer holds a multiple of 1024 elements (64 chunks of whole 16-lane vectors for a sum
// over it): the last group's padding grows; a small one keeps entry-aligned padding only.
TEST(FlatLayout, ALargeBufferIsAMultipleOf1024Elements) {
  FlatLayout l({{300, 130}, {70}, {1000}}, {0, 1, 0});  // entries padded: 39040 + 1024 + 128
  EXPECT_EQ(l.offset(0), 0);
  EXPECT_EQ(l.offset(2), 39040);
  EXPECT_EQ(l.offset(1), 40064);
  EXPECT_EQ(l.group_end(0), 40064);
  EXPECT_EQ(l.numel(), 40960);  // 40192 rounded up to 40 * 1024
  EXPECT_EQ(l.group_end(1), 40960);
  Tensor flat = l.pack({Tensor::full({300, 130}, 1.0), Tensor::full({70}, 2.0), Tensor::full({1000}, 3.0)},
                       dtypes::float32, Tensor::full({1}, 0.0).device());
  EXPECT_DOUBLE_EQ(flat.sum().to_doubles()[0], 300 * 130 + 2 * 70 + 3 * 1000);  // zero padding
  EXPECT_EQ(FlatLayout({{2, 3}, {70}}, {0, 1}).numel(), 192);
}

// Past 64 chunks of 2^20 elements the gradient norm's sum splits into up to 4096 chunks
// (schedule/split_reduce.h), so the buffer holds a multiple of 4096 * 1024 elements: each chunk
// whole vectors. The llama3.1-8b step cut to 2 layers: 1,486,901,248 elements, a multiple of 4096
// only, rounded up to 355 * 2^22. Layouts only: nothing is allocated.
TEST(FlatLayout, AHugeBufferIsAMultipleOf4096Times1024Elements) {
  EXPECT_EQ(FlatLayout({{1486901248}}, {0}).numel(), int64_t{355} << 22);
  EXPECT_EQ(FlatLayout({{int64_t{1} << 26}}, {0}).numel(), int64_t{1} << 26);  // 64 chunks: 1024 suffices
  EXPECT_EQ(FlatLayout({{(int64_t{1} << 26) + 64}}, {0}).numel(), int64_t{17} << 22);
  EXPECT_EQ(FlatLayout({{(int64_t{1} << 26) - 1000}}, {0}).numel(), int64_t{1} << 26);
}

TEST(FlatLayout, PackPutsEachTensorInItsRunAndZeroesThePadding) {
  FlatLayout l({{2, 2}, {3}}, {0, 0});
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2}), b = Tensor::from_vector<float>({5, 6, 7}, {3});
  Tensor flat = l.pack({a, b}, dtypes::float32, a.device());
  std::vector<float> v = flat.to_vector<float>();
  ASSERT_EQ(v.size(), 128u);
  std::vector<float> want(128, 0.0f);
  want[0] = 1, want[1] = 2, want[2] = 3, want[3] = 4, want[64] = 5, want[65] = 6, want[66] = 7;
  EXPECT_EQ(v, want);
  EXPECT_EQ(l.view(flat, 0).shape(), (Shape{2, 2}));
  EXPECT_EQ(l.view(flat, 1).to_vector<float>(), (std::vector<float>{5, 6, 7}));
}

TEST(FlatLayout, ReplacedHandlesReadAndWriteTheFlatBuffer) {
  FlatLayout l({{3}}, {0});
  Tensor p = Tensor::from_vector<float>({1, 2, 3}, {3}).contiguous().realize().requires_grad(true);
  Tensor alias = p;  // another handle of the same tensor (a model holding it)
  Tensor flat = l.pack({p}, dtypes::float32, p.device());
  p.replace(l.view(flat, 0));
  EXPECT_TRUE(alias.requires_grad());
  alias.assign(alias * 10).realize();  // a write through the model's handle lands in the flat buffer
  EXPECT_EQ(flat.slice(0, 0, 3).to_vector<float>(), (std::vector<float>{10, 20, 30}));
  EXPECT_THROW(p.replace(Tensor::zeros({4})), Error);
}

}  // namespace
}  // namespace lg::nn
