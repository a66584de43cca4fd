// The node: interning, lifetime, thread safety, and what make() derives (shape, device, integer
// bounds) or refuses (malformed nodes abort).
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <bit>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "ir/build.h"

namespace lg {
namespace {

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

NodeRef device(const std::string& name) { return make(Op::DEVICE, dtypes::void_, {}, name); }
NodeRef buffer(const NodeRef& dev, int64_t size, uint64_t uid = 1) {
  return make(Op::BUFFER, dtypes::float32, {dev}, BufferArg{uid, size});
}
NodeRef var(const std::string& name, int64_t lo, int64_t hi) {
  return make(Op::DEFINE_VAR, dtypes::index, {}, VarArg{name, lo, hi});
}
NodeRef movement(Op op, const NodeRef& x, Arg arg) { return make(op, x->dtype, {x}, std::move(arg)); }
std::pair<int64_t, int64_t> bounds(const NodeRef& n) { return {n->vmin, n->vmax}; }
using Bounds = std::pair<int64_t, int64_t>;

// ---- interning ----

TEST(NodeIntern, StructurallyEqualNodesAreTheSameObject) {
  NodeRef a = index_const(3) + index_const(4);
  NodeRef b = index_const(3) + index_const(4);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a->src[0].get(), index_const(3).get());
}

TEST(NodeIntern, DifferentArgDtypeOpOrSourcesAreDifferentObjects) {
  NodeRef x = var("x", 0, 9), y = var("y", 0, 9);
  EXPECT_NE(index_const(3).get(), index_const(4).get());                          // arg
  EXPECT_NE(cnst_int(dtypes::int32, 3).get(), cnst_int(dtypes::int64, 3).get());  // dtype
  EXPECT_NE((x + y).get(), (x * y).get());                                        // op
  EXPECT_NE((x + y).get(), (y + x).get());                                        // source order
  EXPECT_NE((x + y).get(), (x + x).get());                                        // sources
  EXPECT_NE(var("x", 0, 9).get(), var("x", 0, 10).get());                         // struct arg
}

TEST(NodeIntern, EqualNodesHaveEqualHashes) {
  NodeRef x = var("x", 0, 9);
  EXPECT_EQ((x * 2 + 1)->hash, (x * 2 + 1)->hash);
  EXPECT_NE((x * 2 + 1)->hash, (x * 2 + 2)->hash);
}

TEST(NodeIntern, NegativeZeroAndZeroAreDifferentConstants) {
  NodeRef pos = make(Op::CONST, dtypes::float32, {}, 0.0);
  NodeRef neg = make(Op::CONST, dtypes::float32, {}, -0.0);
  EXPECT_NE(pos.get(), neg.get());
  EXPECT_EQ(neg.get(), make(Op::CONST, dtypes::float32, {}, -0.0).get());
  EXPECT_TRUE(std::signbit(neg->get_arg<double>()));
}

TEST(NodeIntern, NaNConstantsInternByTheirBits) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  double other_nan = std::bit_cast<double>(std::bit_cast<uint64_t>(nan) | 1);
  NodeRef a = make(Op::CONST, dtypes::float64, {}, nan);
  NodeRef b = make(Op::CONST, dtypes::float64, {}, nan);
  EXPECT_EQ(a.get(), b.get());  // NaN != NaN as numbers, but the same bits are the same node
  EXPECT_NE(a.get(), make(Op::CONST, dtypes::float64, {}, other_nan).get());
}

TEST(NodeReplaceSrc, IdenticalSourcesReturnTheSameNode) {
  NodeRef x = var("x", 0, 9), y = var("y", 0, 9);
  NodeRef n = x + y;
  EXPECT_EQ(replace_src(n, {x, y}).get(), n.get());
}

TEST(NodeReplaceSrc, NewSourcesGiveTheInternedNodeWithThem) {
  NodeRef x = var("x", 0, 9), y = var("y", 0, 9);
  NodeRef n = replace_src(x + y, {y, y});
  EXPECT_EQ(n.get(), (y + y).get());
  EXPECT_EQ(n->op, Op::ADD);
}

// ---- lifetime ----

TEST(NodeLifetime, NodesAreFreedWhenTheLastReferenceDrops) {
  size_t before = live_node_count();
  {
    NodeRef e = var("lifetime_x", 0, 9) * 7 + 12345;
    EXPECT_EQ(live_node_count(), before + 5);  // var, 7, MUL, 12345, ADD
  }
  EXPECT_EQ(live_node_count(), before);
}

TEST(NodeLifetime, AUserKeepsItsSourcesAlive) {
  size_t before = live_node_count();
  NodeRef user;
  {
    NodeRef x = var("lifetime_y", 0, 9);
    user = alu(Op::NEG, x);
  }
  EXPECT_EQ(live_node_count(), before + 2);
  EXPECT_EQ(user->src[0]->get_arg<VarArg>().name, "lifetime_y");
  user = NodeRef();
  EXPECT_EQ(live_node_count(), before);
}

TEST(NodeLifetime, ALongChainIsFreedWithoutRecursion) {
  size_t before = live_node_count();
  {
    NodeRef x = var("chain", 0, 9);
    for (int i = 0; i < 200'000; i++) x = alu(Op::NEG, x);
    EXPECT_EQ(live_node_count(), before + 200'001);
  }
  EXPECT_EQ(live_node_count(), before);
}

int freed_buffers = 0;
TEST(NodeLifetime, FreeHookSeesTheDyingNode) {
  freed_buffers = 0;
  set_node_free_hook(Op::BUFFER,
                     [](const Node& n) { freed_buffers += static_cast<int>(n.get_arg<BufferArg>().size); });
  {
    NodeRef b = buffer(device("HOOK"), 17, 99);
    EXPECT_EQ(freed_buffers, 0);
  }
  set_node_free_hook(Op::BUFFER, nullptr);
  EXPECT_EQ(freed_buffers, 17);
}

// ---- thread safety ----

// Threads that build the same expressions at the same moment all get the same node.
TEST(NodeConcurrency, ThreadsBuildingTheSameExpressionGetTheSameNode) {
  constexpr int kThreads = 4, kRounds = 500;
  size_t before = live_node_count();
  {
    std::vector<std::vector<NodeRef>> got(kThreads);
    std::barrier sync(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++)
      threads.emplace_back([&, t] {
        for (int r = 0; r < kRounds; r++) {
          sync.arrive_and_wait();
          got[t].push_back(var("conc", 0, r) * (r + 1) + r % 7);
        }
      });
    for (auto& th : threads) th.join();
    for (int r = 0; r < kRounds; r++)
      for (int t = 1; t < kThreads; t++) ASSERT_EQ(got[t][r].get(), got[0][r].get()) << "round " << r;
  }
  EXPECT_EQ(live_node_count(), before);
}

// Building and dropping the same nodes from many threads races creation against destruction; every
// node built while another reference is held is that node, and nothing leaks.
TEST(NodeConcurrency, RacingCreationAndDestructionKeepsInterningAndCounts) {
  constexpr int kThreads = 4, kIters = 5000;
  size_t before = live_node_count();
  NodeRef held = var("race", 0, 3) + 1;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kThreads; t++)
    threads.emplace_back([&] {
      for (int i = 0; i < kIters; i++) {
        NodeRef transient = var("race", 0, 3) * (i % 5);  // dies at the end of the iteration
        if ((var("race", 0, 3) + 1).get() != held.get()) wrong++;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  held = NodeRef();
  EXPECT_EQ(live_node_count(), before);
}

// ---- shapes ----

TEST(NodeShape, BufferIsFlatAndConstIsAScalar) {
  NodeRef dev = device("SHAPES");
  EXPECT_EQ(buffer(dev, 24)->shape, (Shape{24}));
  EXPECT_EQ(cnst(dtypes::float32, 1.0, dev)->shape, Shape{});
  EXPECT_EQ(make(Op::IOTA, dtypes::int32, {dev}, int64_t{5})->shape, (Shape{5}));
  EXPECT_EQ(buffer(dev, 24)->numel(), 24);
}

TEST(NodeShape, MovementOps) {
  NodeRef x = movement(Op::RESHAPE, buffer(device("SHAPES"), 24), Shape{2, 3, 4});
  EXPECT_EQ(x->shape, (Shape{2, 3, 4}));
  EXPECT_EQ(movement(Op::PERMUTE, x, Shape{2, 0, 1})->shape, (Shape{4, 2, 3}));
  EXPECT_EQ(movement(Op::PAD, x, Pairs{{1, 2}, {0, 0}, {3, 0}})->shape, (Shape{5, 3, 7}));
  EXPECT_EQ(movement(Op::SHRINK, x, Pairs{{0, 1}, {1, 3}, {0, 4}})->shape, (Shape{1, 2, 4}));
  EXPECT_EQ(movement(Op::FLIP, x, Shape{1, 0, 1})->shape, (Shape{2, 3, 4}));
  NodeRef ones = movement(Op::RESHAPE, x, Shape{2, 1, 12});
  EXPECT_EQ(movement(Op::EXPAND, ones, Shape{2, 5, 12})->shape, (Shape{2, 5, 12}));
  EXPECT_EQ(movement(Op::RESHAPE, x, Shape{24})->numel(), 24);
}

TEST(NodeShape, ReduceAxisKeepsReducedAxesAsOne) {
  NodeRef x = movement(Op::RESHAPE, buffer(device("SHAPES"), 24), Shape{2, 3, 4});
  NodeRef r = make(Op::REDUCE_AXIS, dtypes::float32, {x}, ReduceArg{Op::ADD, {0, 2}});
  EXPECT_EQ(r->shape, (Shape{1, 3, 1}));
  EXPECT_EQ(r->numel(), 3);
}

TEST(NodeShape, ElementwiseAndCastKeepTheirSourcesShape) {
  NodeRef x = movement(Op::RESHAPE, buffer(device("SHAPES"), 6), Shape{2, 3});
  EXPECT_EQ((x + x)->shape, (Shape{2, 3}));
  EXPECT_EQ(cast(x, dtypes::float16)->shape, (Shape{2, 3}));
  EXPECT_EQ(lt(x, x)->shape, (Shape{2, 3}));
}

TEST(NodeShape, KernelNodesAreScalars) {
  EXPECT_EQ(range(10, 0, AxisType::LOOP)->shape, Shape{});
  EXPECT_EQ((var("k", 0, 3) * 4)->shape, Shape{});
}

// ---- devices ----

TEST(NodeDevice, DataLivesOnItsDeviceAndViewsInheritIt) {
  NodeRef dev = device("CPU:0");
  NodeRef b = buffer(dev, 6);
  NodeRef view = movement(Op::RESHAPE, b, Shape{2, 3});
  EXPECT_EQ(b->device, dev.get());
  EXPECT_EQ(view->device, dev.get());
  EXPECT_EQ((view + view)->device, dev.get());
  EXPECT_EQ(view->device_name(), "CPU:0");
}

TEST(NodeDevice, CopyLivesOnItsTargetDevice) {
  NodeRef d0 = device("CPU:0"), d1 = device("CPU:1");
  NodeRef c = make(Op::COPY, dtypes::float32, {buffer(d0, 6), d1});
  EXPECT_EQ(c->device, d1.get());
  EXPECT_EQ(c->device_name(), "CPU:1");
}

TEST(NodeDevice, KernelNodesAndDevicesHaveNoDevice) {
  EXPECT_EQ(index_const(3)->device, nullptr);
  EXPECT_EQ(range(4, 0, AxisType::LOOP)->device, nullptr);
  EXPECT_EQ(device("CPU:0")->device, nullptr);
  EXPECT_EQ(index_const(3)->device_name(), "");
}

// ---- integer bounds ----

TEST(NodeBounds, ConstAndVariable) {
  EXPECT_EQ(bounds(index_const(-4)), (Bounds{-4, -4}));
  EXPECT_EQ(bounds(var("n", 1, 8)), (Bounds{1, 8}));
  EXPECT_EQ(bounds(bool_const(true)), (Bounds{1, 1}));
}

TEST(NodeBounds, RangeIsZeroToEndMinusOne) {
  EXPECT_EQ(bounds(range(10, 0, AxisType::LOOP)), (Bounds{0, 9}));
  NodeRef r = make(Op::RANGE, dtypes::index, {var("n", 1, 8)}, RangeArg{0, AxisType::LOOP});
  EXPECT_EQ(bounds(r), (Bounds{0, 7}));
}

TEST(NodeBounds, AddAndMul) {
  NodeRef r = range(10, 0, AxisType::LOOP);
  EXPECT_EQ(bounds(r + 5), (Bounds{5, 14}));
  EXPECT_EQ(bounds(r * -3), (Bounds{-27, 0}));
  EXPECT_EQ(bounds(var("a", -2, 3) * var("b", -5, 4)), (Bounds{-15, 12}));
  EXPECT_EQ(bounds(r + var("a", -2, 3)), (Bounds{-2, 12}));
}

TEST(NodeBounds, OverflowingArithmeticHasTheDtypesFullRange) {
  NodeRef big = cnst_int(dtypes::int8, 100);
  EXPECT_EQ(bounds(big + big), (Bounds{-128, 127}));  // 200 wraps
  EXPECT_EQ(bounds(var("huge", 0, kI64Max) + 1), (Bounds{kI64Min, kI64Max}));
  NodeRef u = cnst_int(dtypes::uint8, 3);
  EXPECT_EQ(bounds(alu(Op::NEG, u)), (Bounds{0, 255}));
}

TEST(NodeBounds, IdivTruncatesAtTheCorners) {
  NodeRef r = range(10, 0, AxisType::LOOP);
  EXPECT_EQ(bounds(r / 4), (Bounds{0, 2}));
  EXPECT_EQ(bounds(var("a", -7, 7) / 2), (Bounds{-3, 3}));
  EXPECT_EQ(bounds(var("a", -7, 7) / var("d", -3, -1)), (Bounds{-7, 7}));
  EXPECT_EQ(bounds(var("a", 5, 9) / var("d", 2, 3)), (Bounds{1, 4}));
}

TEST(NodeBounds, IdivByARangeContainingZeroIsUnknown) {
  EXPECT_EQ(bounds(var("a", 0, 7) / var("d", -1, 1)), (Bounds{kI64Min, kI64Max}));
}

TEST(NodeBounds, ModIsBelowTheDivisorWithTheDividendsSign) {
  NodeRef r = range(10, 0, AxisType::LOOP);
  EXPECT_EQ(bounds(r % 4), (Bounds{0, 3}));
  EXPECT_EQ(bounds(r % 100), (Bounds{0, 9}));
  EXPECT_EQ(bounds(var("a", -7, -1) % 4), (Bounds{-3, 0}));
  EXPECT_EQ(bounds(var("a", -5, 5) % 4), (Bounds{-3, 3}));
  EXPECT_EQ(bounds(r % var("d", -2, 2)), (Bounds{kI64Min, kI64Max}));
}

TEST(NodeBounds, CmpltIsDecidedWhenTheRangesDoNotOverlap) {
  NodeRef r = range(10, 0, AxisType::LOOP);
  EXPECT_EQ(bounds(lt(r, 10)), (Bounds{1, 1}));
  EXPECT_EQ(bounds(lt(r, 0)), (Bounds{0, 0}));
  EXPECT_EQ(bounds(lt(r, 5)), (Bounds{0, 1}));
  NodeRef f = cnst(dtypes::float32, 1.0);
  EXPECT_EQ(bounds(lt(f, f)), (Bounds{0, 1}));  // floats: never decided from bounds
}

TEST(NodeBounds, WhereUnionsItsBranchesUnlessTheConditionIsKnown) {
  NodeRef r = range(10, 0, AxisType::LOOP);
  EXPECT_EQ(bounds(where(lt(r, 5), r, index_const(20))), (Bounds{0, 20}));
  EXPECT_EQ(bounds(where(lt(r, 10), r, index_const(20))), (Bounds{0, 9}));
  EXPECT_EQ(bounds(where(lt(r, 0), r, index_const(20))), (Bounds{20, 20}));
}

// uint64 bounds are held as int64 and saturate at INT64_MAX, so a uint64 node at the top of its
// range may be any value above it; bounds derived from it must still contain the true value.
TEST(NodeBounds, AreSoundForUInt64ValuesAboveInt64Max) {
  NodeRef big = cnst_int(dtypes::uint64, -1);   // 2^64 - 1
  NodeRef as_int64 = cast(big, dtypes::int64);  // -1
  EXPECT_LE(as_int64->vmin, -1);
  EXPECT_GE(as_int64->vmax, -1);
  NodeRef half = big / cnst_int(dtypes::uint64, 2);  // 2^63 - 1
  EXPECT_EQ(half->vmax, kI64Max);
  NodeRef is_less = lt(half, cnst_int(dtypes::uint64, (int64_t{1} << 62) + 1));  // false
  EXPECT_EQ(is_less->vmin, 0);
}

TEST(NodeBounds, NonIntegerValuesHaveNoBounds) {
  NodeRef f = cnst(dtypes::float32, 2.0);
  EXPECT_EQ(bounds(f + f), (Bounds{kI64Min, kI64Max}));
}

// ---- malformed nodes abort ----

using NodeDeathTest = ::testing::Test;

TEST_F(NodeDeathTest, WrongArityAborts) {
  NodeRef x = var("x", 0, 9);
  EXPECT_DEATH(make(Op::NEG, dtypes::index, {x, x}), "NEG with 2 sources");
  EXPECT_DEATH(make(Op::ADD, dtypes::index, {x}), "ADD with 1 sources");
  EXPECT_DEATH(make(Op::WHERE, dtypes::index, {}), "WHERE with 0 sources");
}

TEST_F(NodeDeathTest, AddOfDifferentDtypesAborts) {
  NodeRef a = cnst(dtypes::float32, 1.0), b = cnst_int(dtypes::int32, 1);
  EXPECT_DEATH(make(Op::ADD, dtypes::float32, {a, b}), "ADD of f32 and i32");
}

TEST_F(NodeDeathTest, ResultDtypeDifferentFromSourcesAborts) {
  NodeRef a = cnst(dtypes::float32, 1.0);
  EXPECT_DEATH(make(Op::MUL, dtypes::float16, {a, a}), "MUL dtype f16 differs");
  EXPECT_DEATH(make(Op::CMPLT, dtypes::float32, {a, a}), "CMPLT must be bool");
}

TEST_F(NodeDeathTest, ReshapeChangingTheElementCountAborts) {
  NodeRef b = buffer(device("DEATH"), 24);
  EXPECT_DEATH(movement(Op::RESHAPE, b, Shape{5, 5}), "RESHAPE changes the element count");
}

TEST_F(NodeDeathTest, WrongArgKindAborts) {
  NodeRef x = var("x", 0, 9);
  EXPECT_DEATH(make(Op::ADD, dtypes::index, {x, x}, int64_t{3}), "ADD with arg 3");
  EXPECT_DEATH(make(Op::CONST, dtypes::float32, {}, int64_t{1}), "CONST f32 holds 1");
}

TEST_F(NodeDeathTest, MalformedMovementAborts) {
  NodeRef x = movement(Op::RESHAPE, buffer(device("DEATH"), 6), Shape{2, 3});
  EXPECT_DEATH(movement(Op::PERMUTE, x, Shape{0, 0}), "PERMUTE is not a permutation");
  EXPECT_DEATH(movement(Op::EXPAND, x, Shape{4, 3}), "EXPAND of a non-1 axis");
  EXPECT_DEATH(movement(Op::SHRINK, x, Pairs{{0, 3}, {0, 3}}), "SHRINK out of range");
}

TEST_F(NodeDeathTest, WhereWithANonBoolConditionAborts) {
  NodeRef x = var("x", 0, 9);
  EXPECT_DEATH(make(Op::WHERE, dtypes::index, {x, x, x}), "WHERE condition is i64");
}

TEST_F(NodeDeathTest, MixingDevicesAborts) {
  NodeRef a = buffer(device("CPU:0"), 6), b = buffer(device("CPU:1"), 6);
  EXPECT_DEATH(a + b, "ADD mixes devices CPU:0 and CPU:1");
}

}  // namespace
}  // namespace lg
