// Which scalar accesses the GPU renderers merge into vector accesses (codegen/gpu_vector_access.h),
// on small linear programs written by hand: 16-byte groups, then halves down to pairs, and when a
// group may move past other accesses of its buffer (another element: yes; the same element, or one
// it cannot tell apart: no).
#include <gtest/gtest.h>

#include "codegen/gpu_vector_access.h"
#include "ir/build.h"

namespace lg {
namespace {

// A program over one buffer of dtype t (slot 0): x = r * 16 for a LOOP range r, and accesses at
// x + offset in the order given (a store writes a constant).
struct Access {
  bool store;
  int64_t offset;
  bool other_base = false;  // index r * 16 + 1 + offset: a different x
};

struct Program {
  LinearProgram prog;
  std::vector<const Node*> accesses;  // in the order given
};

Program program_of(DType t, const std::vector<Access>& order) {
  Program p;
  NodeRef buf = make(Op::DEFINE_GLOBAL, t.as_ptr(), {}, int64_t{0});
  NodeRef r = range(64, 0, AxisType::LOOP);
  NodeRef x = r * 16;
  NodeRef y = r * 16 + 1;
  p.prog.name = "k";
  p.prog.globals = {t};
  p.prog.ops = {buf, r};
  for (const Access& a : order) {
    NodeRef idx = make(Op::INDEX, t.as_ptr(), {buf, (a.other_base ? y : x) + a.offset});
    NodeRef n = a.store ? make(Op::STORE, dtypes::void_, {idx, cnst(t, 1.0)}) : make(Op::LOAD, t, {idx});
    p.prog.ops.push_back(n);
    p.accesses.push_back(n.get());
  }
  p.prog.ops.push_back(make(Op::END, dtypes::void_, {r}));
  return p;
}

std::vector<size_t> group_sizes(const Program& p) {
  std::vector<size_t> out;
  for (const VectorAccess& g : plan_vector_accesses(p.prog).groups) out.push_back(g.members.size());
  return out;
}

std::vector<Access> run(bool store, int64_t from, int64_t count) {
  std::vector<Access> out;
  for (int64_t i = 0; i < count; i++) out.push_back({store, from + i});
  return out;
}

TEST(GpuVectorAccess, RunsFormSixteenByteGroupsThenHalvesDownToPairs) {
  EXPECT_EQ(group_sizes(program_of(dtypes::bfloat16, run(false, 0, 8))), (std::vector<size_t>{8}));
  EXPECT_EQ(group_sizes(program_of(dtypes::bfloat16, run(false, 0, 4))), (std::vector<size_t>{4}));
  // 14 elements: one 16-byte group, one 8-byte group, one 32-bit word
  EXPECT_EQ(group_sizes(program_of(dtypes::float16, run(false, 0, 14))), (std::vector<size_t>{8, 4, 2}));
  EXPECT_EQ(group_sizes(program_of(dtypes::bfloat16, run(true, 0, 2))), (std::vector<size_t>{2}));
  // float32: 16-byte groups, then 8-byte pairs
  EXPECT_EQ(group_sizes(program_of(dtypes::float32, run(false, 0, 2))), (std::vector<size_t>{2}));
  EXPECT_EQ(group_sizes(program_of(dtypes::float32, run(true, 0, 6))), (std::vector<size_t>{4, 2}));
  // a run of 4 that starts off a multiple of 4: not one group, but two aligned pairs
  EXPECT_EQ(group_sizes(program_of(dtypes::bfloat16, run(false, 2, 4))), (std::vector<size_t>{2, 2}));
  // a pair that starts at an odd element: not aligned, scalar
  EXPECT_TRUE(group_sizes(program_of(dtypes::bfloat16, run(false, 1, 2))).empty());
  EXPECT_TRUE(group_sizes(program_of(dtypes::float32, run(true, 3, 2))).empty());
}

TEST(GpuVectorAccess, AStoreGroupPassesStoresToOtherElementsOnly) {
  // stores of elements 0..3 interleaved with stores of 4..7 (a lane's outputs, tile by tile)
  std::vector<Access> interleaved;
  for (int64_t i = 0; i < 4; i++) {
    interleaved.push_back({true, i});
    interleaved.push_back({true, 4 + i});
  }
  EXPECT_EQ(group_sizes(program_of(dtypes::float32, interleaved)), (std::vector<size_t>{4, 4}));
  // a store of element 1 between the members: writing the group at its last member would reorder
  // the two writes of element 1; the pairs that do not span it still form
  std::vector<Access> twice = run(true, 0, 4);
  twice.insert(twice.begin() + 2, Access{true, 1});
  EXPECT_EQ(group_sizes(program_of(dtypes::float32, twice)), (std::vector<size_t>{2, 2}));
  std::vector<Access> pair_twice = {
      {true, 0}, {true, 0}, {true, 1}};  // (0, 0, 1): the pair is the second 0 and 1
  EXPECT_EQ(group_sizes(program_of(dtypes::bfloat16, pair_twice)), (std::vector<size_t>{2}));
  // a store through another index expression (it might be any element): no group spans it
  std::vector<Access> other = run(true, 0, 4);
  other.insert(other.begin() + 2, Access{true, 4, true});
  EXPECT_EQ(group_sizes(program_of(dtypes::float32, other)), (std::vector<size_t>{2, 2}));
  EXPECT_TRUE(group_sizes(program_of(dtypes::bfloat16, {{true, 0}, {true, 4, true}, {true, 1}})).empty());
  // a load of a member's element between the stores: no group spans it
  std::vector<Access> read = run(true, 0, 4);
  read.insert(read.begin() + 2, Access{false, 0});
  EXPECT_EQ(group_sizes(program_of(dtypes::float32, read)), (std::vector<size_t>{2, 2}));
  EXPECT_TRUE(group_sizes(program_of(dtypes::float32, {{true, 0}, {false, 0}, {true, 1}})).empty());
}

TEST(GpuVectorAccess, ALoadGroupPassesStoresToOtherElementsOnly) {
  std::vector<Access> loads = run(false, 0, 4);
  loads.insert(loads.begin() + 2, Access{true, 8});  // another element: the loads may move before it
  EXPECT_EQ(group_sizes(program_of(dtypes::float32, loads)), (std::vector<size_t>{4}));
  std::vector<Access> in_place = run(false, 0, 4);
  in_place.insert(in_place.begin() + 2, Access{true, 3});  // the last member reads what it writes
  EXPECT_EQ(group_sizes(program_of(dtypes::float32, in_place)), (std::vector<size_t>{2, 2}));
  EXPECT_TRUE(group_sizes(program_of(dtypes::bfloat16, {{false, 0}, {true, 1}, {false, 1}})).empty());
}

// An in-place update loads each element and then stores it, element after element: all the loads
// may move to the first and all the stores to the last (each element's load stays before its
// store). Stores that each element's reload must see keep everything scalar. A load group and a
// store group that are each fine alone may not both form when together they would swap a store
// and a load of one element: the first placed constrains the second.
TEST(GpuVectorAccess, InPlaceUpdatesGroupTheirLoadsAndTheirStores) {
  std::vector<Access> in_place;
  for (int64_t i = 0; i < 4; i++) {
    in_place.push_back({false, i});
    in_place.push_back({true, i});
  }
  Program p = program_of(dtypes::float32, in_place);
  VectorAccessPlan plan = plan_vector_accesses(p.prog);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].first, p.accesses[0]) << "the loads are read at the first load";
  EXPECT_EQ(plan.groups[1].last, p.accesses[7]) << "the stores are written at the last store";
  EXPECT_EQ(group_sizes(program_of(dtypes::bfloat16, in_place)), (std::vector<size_t>{4, 4}));
  // store, then reload, element after element: no load may move before an earlier element's store,
  // no store after a later element's... own reload
  std::vector<Access> reload;
  for (int64_t i = 0; i < 4; i++) {
    reload.push_back({true, i});
    reload.push_back({false, i});
  }
  EXPECT_TRUE(group_sizes(program_of(dtypes::float32, reload)).empty());
  // store 0, load 1, store 1, load 0: the stores may go to the second store (load 1 still reads 1
  // before it is stored) or the loads to the first load (load 0 still after store 0), not both
  // (load 0 would then read element 0 before it is stored)
  EXPECT_EQ(group_sizes(program_of(dtypes::float32, {{true, 0}, {false, 1}, {true, 1}, {false, 0}})),
            (std::vector<size_t>{2}));
}

}  // namespace
}  // namespace lg
