// One test per rule of pm_movement_cleanup (tensor-stage movement cleanups).
#include <gtest/gtest.h>

#include "ir/build.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/movement.h"

namespace lg {
namespace {

NodeRef buf(int64_t n) { return new_buffer(device_node("INTERP"), dtypes::float32, n); }
NodeRef mv(Op op, const NodeRef& x, Arg arg) { return make(op, x->dtype, {x}, std::move(arg)); }
NodeRef clean(const NodeRef& x) {
  return rewrite(make(Op::SINK, dtypes::void_, {x}), pm_movement_cleanup(), {.name = "test cleanup"})->src[0];
}

TEST(MovementCleanup, ReshapeToTheSameShapeIsDropped) {
  NodeRef x = mv(Op::RESHAPE, buf(6), Shape{2, 3});
  EXPECT_EQ(clean(mv(Op::RESHAPE, x, Shape{2, 3})), x);
}

TEST(MovementCleanup, ExpandToTheSameShapeIsDropped) {
  NodeRef x = mv(Op::RESHAPE, buf(6), Shape{2, 3});
  EXPECT_EQ(clean(mv(Op::EXPAND, x, Shape{2, 3})), x);
}

TEST(MovementCleanup, IdentityPermuteIsDropped) {
  NodeRef x = mv(Op::RESHAPE, buf(6), Shape{2, 3});
  EXPECT_EQ(clean(mv(Op::PERMUTE, x, Shape{0, 1})), x);
}

TEST(MovementCleanup, ZeroPadIsDropped) {
  NodeRef x = buf(6);
  EXPECT_EQ(clean(mv(Op::PAD, x, Pairs{{0, 0}})), x);
  EXPECT_NE(clean(mv(Op::PAD, x, Pairs{{0, 1}})), x);
}

TEST(MovementCleanup, FullShrinkIsDropped) {
  NodeRef x = buf(6);
  EXPECT_EQ(clean(mv(Op::SHRINK, x, Pairs{{0, 6}})), x);
  EXPECT_NE(clean(mv(Op::SHRINK, x, Pairs{{1, 6}})), x);
}

TEST(MovementCleanup, FlipOfNoAxisIsDropped) {
  NodeRef x = buf(6);
  EXPECT_EQ(clean(mv(Op::FLIP, x, Shape{0})), x);
  EXPECT_NE(clean(mv(Op::FLIP, x, Shape{1})), x);
}

TEST(MovementCleanup, ReshapeChainsMerge) {
  NodeRef x = buf(24);
  NodeRef r = mv(Op::RESHAPE, mv(Op::RESHAPE, x, Shape{2, 12}), Shape{4, 6});
  EXPECT_EQ(clean(r), mv(Op::RESHAPE, x, Shape{4, 6}));
}

TEST(MovementCleanup, ExpandChainsMerge) {
  NodeRef x = mv(Op::RESHAPE, buf(1), Shape{1, 1});
  NodeRef e = mv(Op::EXPAND, mv(Op::EXPAND, x, Shape{1, 3}), Shape{2, 3});
  EXPECT_EQ(clean(e), mv(Op::EXPAND, x, Shape{2, 3}));
}

TEST(MovementCleanup, PermuteChainsCompose) {
  NodeRef x = mv(Op::RESHAPE, buf(24), Shape{2, 3, 4});
  NodeRef p = mv(Op::PERMUTE, mv(Op::PERMUTE, x, Shape{1, 2, 0}), Shape{2, 0, 1});
  EXPECT_EQ(clean(p), x);  // the two permutations cancel
  NodeRef q = mv(Op::PERMUTE, mv(Op::PERMUTE, x, Shape{1, 0, 2}), Shape{0, 2, 1});
  EXPECT_EQ(clean(q), mv(Op::PERMUTE, x, Shape{1, 2, 0}));
  EXPECT_EQ(clean(q)->shape, (Shape{3, 4, 2}));
}

TEST(MovementCleanup, ContiguousOfAContiguousBufferViewIsTheView) {
  NodeRef x = mv(Op::RESHAPE, buf(6), Shape{2, 3});
  EXPECT_EQ(clean(make(Op::CONTIGUOUS, x->dtype, {x})), x);
  NodeRef t = mv(Op::PERMUTE, x, Shape{1, 0});
  NodeRef c = make(Op::CONTIGUOUS, x->dtype, {t});
  EXPECT_EQ(clean(c), c);  // a permuted view needs its copy
  EXPECT_EQ(clean(make(Op::CONTIGUOUS, x->dtype, {c})), c);
}

TEST(MovementCleanup, ContiguousBufferViewIsABufferOrItsReshape) {
  NodeRef b = buf(6);
  EXPECT_TRUE(is_contiguous_buffer_view(b.get()));
  EXPECT_TRUE(is_contiguous_buffer_view(mv(Op::RESHAPE, b, Shape{3, 2}).get()));
  EXPECT_FALSE(is_contiguous_buffer_view(mv(Op::SHRINK, b, Pairs{{1, 4}}).get()));
}

}  // namespace
}  // namespace lg
