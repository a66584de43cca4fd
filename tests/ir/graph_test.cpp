// Graph walks: topological order, printing, user maps. All deterministic: they depend on the graph's
// structure only, never on addresses or construction order.
#include <gtest/gtest.h>

#include <algorithm>
#include <unordered_map>

#include "ir/build.h"
#include "ir/graph.h"

namespace lg {
namespace {

NodeRef var(const std::string& name, int64_t lo, int64_t hi) {
  return make(Op::DEFINE_VAR, dtypes::index, {}, VarArg{name, lo, hi});
}

// w = x*2 + (x+3): a diamond on x.
struct Diamond {
  NodeRef x = var("x", 0, 9);
  NodeRef two = index_const(2), three = index_const(3);
  NodeRef y = x * two;
  NodeRef z = x + three;
  NodeRef w = y + z;
};

TEST(Toposort, IsDepthFirstPostOrderWithSourcesLeftToRight) {
  Diamond d;
  std::vector<const Node*> order = toposort(d.w);
  std::vector<const Node*> want = {d.x.get(), d.two.get(), d.y.get(), d.three.get(), d.z.get(), d.w.get()};
  EXPECT_EQ(order, want);
}

TEST(Toposort, PutsSourcesBeforeUsersAndEachNodeOnce) {
  NodeRef a = var("a", 0, 9), b = var("b", 0, 9);
  NodeRef e = (a * b + a) * (a * b + b) + a % 3;
  std::vector<const Node*> order = toposort(e);
  std::unordered_map<const Node*, size_t> pos;
  for (size_t i = 0; i < order.size(); i++)
    EXPECT_TRUE(pos.emplace(order[i], i).second) << "node listed twice";
  for (const Node* n : order)
    for (const NodeRef& s : n->src) {
      ASSERT_TRUE(pos.count(s.get()));
      EXPECT_LT(pos[s.get()], pos[n]);
    }
  EXPECT_EQ(order.size(), 9u);  // a, b, a*b, a*b+a, a*b+b, their product, 3, a%3, the sum
  EXPECT_EQ(order.back(), e.get());
}

TEST(Toposort, OfAnEmptyRefIsEmpty) {
  const NodeRef none;
  EXPECT_TRUE(toposort(none).empty());
}

TEST(Toposort, HandlesA200000DeepChain) {
  NodeRef leaf = var("deep", 0, 9);
  NodeRef x = leaf;
  for (int i = 0; i < 200'000; i++) x = alu(Op::NEG, x);
  std::vector<const Node*> order = toposort(x);
  ASSERT_EQ(order.size(), 200'001u);
  EXPECT_EQ(order.front(), leaf.get());
  EXPECT_EQ(order.back(), x.get());
  for (size_t i = 1; i < order.size(); i++) ASSERT_EQ(order[i]->src[0].get(), order[i - 1]);
}

// ---- printing ----

TEST(ToString, PrintsOneNumberedLinePerNodeInTopologicalOrder) {
  NodeRef n = var("n", 1, 8);
  EXPECT_EQ(to_string(n * 2 + 3),
            "%0 = DEFINE_VAR i64 {n,1..8}\n"
            "%1 = CONST i64 2\n"
            "%2 = MUL i64 (%0, %1)\n"
            "%3 = CONST i64 3\n"
            "%4 = ADD i64 (%2, %3)\n");
}

TEST(ToString, PrintsArgsAndShapesOfTensorStageNodes) {
  NodeRef dev = make(Op::DEVICE, dtypes::void_, {}, std::string("CPU"));
  NodeRef buf = make(Op::BUFFER, dtypes::float32, {dev}, BufferArg{7, 6});
  NodeRef x = make(Op::RESHAPE, dtypes::float32, {buf}, Shape{2, 3});
  NodeRef c = make(Op::RESHAPE, dtypes::float32, {cnst(dtypes::float32, 0.1, dev)}, Shape{1, 1});
  NodeRef e = make(Op::EXPAND, dtypes::float32, {c}, Shape{2, 3});
  NodeRef r = make(Op::REDUCE_AXIS, dtypes::float32, {x * e}, ReduceArg{Op::ADD, {1}});
  EXPECT_EQ(to_string(r),
            "%0 = DEVICE void \"CPU\"\n"
            "%1 = BUFFER f32 (%0) {uid=7,size=6} shape=(6,)\n"
            "%2 = RESHAPE f32 (%1) (2,3) shape=(2,3)\n"
            "%3 = CONST f32 (%0) 0.10000000149011612\n"
            "%4 = RESHAPE f32 (%3) (1,1) shape=(1,1)\n"
            "%5 = EXPAND f32 (%4) (2,3) shape=(2,3)\n"
            "%6 = MUL f32 (%2, %5) shape=(2,3)\n"
            "%7 = REDUCE_AXIS f32 (%6) {ADD,axes=(1)} shape=(2,1)\n");
}

TEST(ToString, PrintsKernelArgs) {
  NodeRef r = range(4, 2, AxisType::REDUCE);
  NodeRef red = make(Op::REDUCE, dtypes::index, {r * 3, r}, Op::MAX);
  EXPECT_EQ(to_string(red),
            "%0 = CONST i64 4\n"
            "%1 = RANGE i64 (%0) {2,REDUCE}\n"
            "%2 = CONST i64 3\n"
            "%3 = MUL i64 (%1, %2)\n"
            "%4 = REDUCE i64 (%3, %1) MAX\n");
}

// Builds (a*b + c*d) * (a*b) with the leaves created in the given order, allocating unrelated nodes
// in between so the graph's nodes land at different addresses.
std::pair<std::string, uint64_t> build_and_print(bool reverse) {
  std::vector<NodeRef> noise;
  std::vector<NodeRef> leaves(4);
  const char* names[] = {"a", "b", "c", "d"};
  for (int k = 0; k < 4; k++) {
    int i = reverse ? 3 - k : k;
    for (int j = 0; j < 1 + 3 * i; j++) noise.push_back(index_const(1000 + 10 * i + j));
    leaves[i] = var(names[i], 0, 10 + i);
  }
  NodeRef ab = leaves[0] * leaves[1];
  NodeRef root =
      reverse ? (ab + leaves[2] * leaves[3]) * ab : (leaves[0] * leaves[1] + leaves[2] * leaves[3]) * ab;
  return {to_string(root), root->hash};
}

TEST(ToString, IsTheSameWhicheverOrderTheGraphWasBuiltIn) {
  size_t before = live_node_count();
  auto [first, first_hash] = build_and_print(false);
  ASSERT_EQ(live_node_count(), before);  // the first graph is gone: the second gets fresh addresses
  auto [second, second_hash] = build_and_print(true);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first_hash, second_hash);
  EXPECT_EQ(first,
            "%0 = DEFINE_VAR i64 {a,0..10}\n"
            "%1 = DEFINE_VAR i64 {b,0..11}\n"
            "%2 = MUL i64 (%0, %1)\n"
            "%3 = DEFINE_VAR i64 {c,0..12}\n"
            "%4 = DEFINE_VAR i64 {d,0..13}\n"
            "%5 = MUL i64 (%3, %4)\n"
            "%6 = ADD i64 (%2, %5)\n"
            "%7 = MUL i64 (%6, %2)\n");
}

TEST(NodeLine, NamesUnnumberedSourcesByTheirOp) {
  NodeRef x = var("x", 0, 3);
  EXPECT_EQ(node_line(*(x * 2 + 1), {}), "ADD i64 (MUL, CONST)");
}

// ---- users ----

TEST(UserMap, ListsTheUsersOfEveryNodeInTopologicalOrder) {
  Diamond d;
  UserMap m = user_map(d.w);
  ASSERT_EQ(m.order, toposort(d.w));
  auto users_of = [&](const NodeRef& n) {
    std::vector<const Node*> out;
    for (int i : m.users[m.index_of(n.get())]) out.push_back(m.order[i]);
    return out;
  };
  EXPECT_EQ(users_of(d.x), (std::vector<const Node*>{d.y.get(), d.z.get()}));
  EXPECT_EQ(users_of(d.two), (std::vector<const Node*>{d.y.get()}));
  EXPECT_EQ(users_of(d.y), (std::vector<const Node*>{d.w.get()}));
  EXPECT_TRUE(users_of(d.w).empty());
}

TEST(UserMap, CountsAUserOnceThoughItUsesTheNodeTwice) {
  NodeRef x = var("x", 0, 9);
  NodeRef sum = x + x;
  UserMap m = user_map(sum);
  EXPECT_EQ(m.users[m.index_of(x.get())], std::vector<int>{1});
}

TEST(UserMap, IndexOfIsThePositionInOrder) {
  Diamond d;
  UserMap m = user_map(d.w);
  for (size_t i = 0; i < m.order.size(); i++) EXPECT_EQ(m.index_of(m.order[i]), static_cast<int>(i));
}

using UserMapDeathTest = ::testing::Test;
TEST_F(UserMapDeathTest, IndexOfANodeOutsideTheGraphAborts) {
  Diamond d;
  UserMap m = user_map(d.y);
  EXPECT_DEATH(m.index_of(d.w.get()), "node not in graph");
}

}  // namespace
}  // namespace lg
