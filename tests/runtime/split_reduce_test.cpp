// Large reductions become two kernels before fusion (schedule/split_reduce.h): full sums of many
// elements, long matmuls (split-K) and long column sums. These tests pin which reductions split,
// into how many chunks, and that the split computes what one kernel computes.
#include <gtest/gtest.h>

#include <vector>

#include "codegen/heuristic.h"
#include "ir/build.h"
#include "runtime/kernel_graph_util.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

using namespace graph_testing;

TEST(SplitReduce, AFullSumOfManyElementsIsTwoKernelsWithTheSameValue) {
  auto sum = [](const std::string& dev) {
    return make(Op::REDUCE_AXIS, dtypes::float32, {input(dev, {256, 512}, 0.5f)}, ReduceArg{Op::ADD, {0, 1}});
  };
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {sum("INTERP")}));
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(s.items[0].buffers[0]->get_arg<BufferArg>().size, 64);  // 64 partial sums
  expect_close(run(sum("CPU")), run(sum("INTERP")));
  // every element is 0.5 * ((i * 7) % 11 - 5): the exact sum, computed on the host
  double want = 0;
  for (int64_t i = 0; i < 256 * 512; i++) want += 0.5 * ((i * 7) % 11 - 5);
  EXPECT_NEAR(run(sum("CPU"))[0], want, 1e-3);
}

// Past 64 chunks of 2^20 elements a full sum splits into more chunks (on a GPU each partial is one
// block; 64 cannot keep its memory busy): the smallest power of two from 128 to 4096 dividing the
// axis whose chunks hold at most 2^20 elements, else the largest dividing one, else 64, 32 or 16.
// Schedules only: the buffers are never allocated.
TEST(SplitReduce, AHugeFullSumSplitsIntoChunksOfAtMostAMillionElements) {
  auto partials = [](int64_t n) {
    NodeRef x = new_buffer(device_node("INTERP"), dtypes::float32, n);
    Schedule s = create_schedule(make(
        Op::SINK, dtypes::void_, {make(Op::REDUCE_AXIS, dtypes::float32, {x}, ReduceArg{Op::ADD, {0}})}));
    EXPECT_EQ(s.items.size(), 2u) << n;
    return s.items.size() == 2 ? s.items[0].buffers[0]->get_arg<BufferArg>().size : int64_t{0};
  };
  EXPECT_EQ(partials(int64_t{1} << 26), 64);           // 64 chunks of 2^20: as before
  EXPECT_EQ(partials(int64_t{1} << 27), 128);          // 128 of 2^20
  EXPECT_EQ(partials(int64_t{3} << 26), 256);          // 128 would be 1.5 * 2^20
  EXPECT_EQ(partials(int64_t{355} << 22), 2048);       // the 8B step's gradient norm: 727,040 each
  EXPECT_EQ(partials(int64_t{1} << 33), 4096);         // 2^21 each: none within 2^20, the largest
  EXPECT_EQ(partials(int64_t{64} * 1048583), 64);      // no power of two past 64 divides it
  EXPECT_EQ(partials(int64_t{1024} * 1000003), 1024);  // 512 would leave 2,000,006
}

TEST(SplitReduce, SmallReductionsStayOneKernel) {
  NodeRef s =
      make(Op::REDUCE_AXIS, dtypes::float32, {input("INTERP", {64, 64}, 1)}, ReduceArg{Op::ADD, {0, 1}});
  EXPECT_EQ(create_schedule(make(Op::SINK, dtypes::void_, {s})).items.size(), 1u);
}

// The size of the buffer kernel i of s writes.
int64_t output_size(const Schedule& s, size_t i) { return s.items[i].buffers[0]->get_arg<BufferArg>().size; }

// A sum over many rows of each column (the norm weights' gradients: 8192 tokens x 4096 columns)
// splits into chunks of rows, so a GPU has 131,072 partial sums to give threads instead of 4096:
// (P, columns) partials, then their sum. Row sums, short columns, many columns and matmuls stay
// one kernel.
TEST(SplitReduce, AColumnSumOverManyRowsSplitsIntoChunksOfRows) {
  auto column_sum = [](const NodeRef& x) {
    return make(Op::REDUCE_AXIS, dtypes::float32, {x}, ReduceArg{Op::ADD, {0}});
  };
  auto schedule = [](const NodeRef& r) { return create_schedule(make(Op::SINK, dtypes::void_, {r})); };
  auto unallocated = [](int64_t rows, int64_t cols) {
    return make(Op::RESHAPE, dtypes::float32,
                {new_buffer(device_node("INTERP"), dtypes::float32, rows * cols)}, Shape{rows, cols});
  };
  Schedule s = schedule(column_sum(unallocated(8192, 4096)));
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(output_size(s, 0), 32 * 4096);  // 32 chunks of 256 rows: 2^17 partials
  // 64 columns would want 2048 chunks: 16 keep 256 rows each
  s = schedule(column_sum(input("INTERP", {4096, 64}, 0.25f)));
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(output_size(s, 0), 16 * 64);
  std::vector<double> want(64, 0.0);  // input element i is 0.25 * ((i * 7) % 11 - 5)
  for (int64_t i = 0; i < 4096 * 64; i++) want[i % 64] += 0.25 * ((i * 7) % 11 - 5);
  std::vector<float> got = run(column_sum(input("CPU", {4096, 64}, 0.25f)));
  ASSERT_EQ(got.size(), 64u);
  for (int c = 0; c < 64; c++) EXPECT_NEAR(got[c], want[c], 1e-3) << c;
  expect_close(got, run(column_sum(input("INTERP", {4096, 64}, 0.25f))));
  EXPECT_EQ(schedule(column_sum(unallocated(2048, 4096))).items.size(), 1u);   // 2048 rows: short
  EXPECT_EQ(schedule(column_sum(unallocated(8192, 65536))).items.size(), 1u);  // enough columns
  NodeRef rows = make(Op::REDUCE_AXIS, dtypes::float32, {unallocated(64, 8192)}, ReduceArg{Op::ADD, {1}});
  EXPECT_EQ(schedule(rows).items.size(), 1u);  // each row contiguous
  // a weight gradient dW = dY^T X over 8192 tokens: a product of broadcasts, a matmul's to tile
  NodeRef dy = unallocated(8192, 64), x = unallocated(8192, 32);
  auto bcast = [](const NodeRef& v, const Shape& r, const Shape& e) {
    return make(Op::EXPAND, dtypes::float32, {make(Op::RESHAPE, dtypes::float32, {v}, r)}, e);
  };
  NodeRef dw = make(Op::REDUCE_AXIS, dtypes::float32,
                    {bcast(dy, {8192, 64, 1}, {8192, 64, 32}) * bcast(x, {8192, 1, 32}, {8192, 64, 32})},
                    ReduceArg{Op::ADD, {0}});
  EXPECT_EQ(schedule(dw).items.size(), 1u);
}

TEST(SplitReduce, ALongMatmulSumsChunksOfKIntoPartialsLaidOutChunkFirst) {
  // out (16, 32) over k = 32768: 16 chunks of 2048, the partials (16, 16, 32) with the chunk axis
  // outermost (the parallel loop: one chunk's operands stay in cache for every tile of it).
  auto mm = [](const std::string& dev) { return matmul(dev, Layout::NT, 16, 32768, 32); };
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {mm("INTERP")}));
  ASSERT_EQ(s.items.size(), 2u);
  EXPECT_EQ(output_size(s, 0), 16 * 16 * 32);
  EXPECT_EQ(s.items[0].name.rfind("r_16_16_32_", 0), 0u) << s.items[0].name;
  EXPECT_EQ(cpu_heuristic_opts(s.items[0].ast).size(), 3u);  // 16 lanes along k x 4 x 4 outputs, no THREAD
  // every product and partial sum is a multiple of 1/8 below 2^20: exact in any order
  std::vector<float> got = run(mm("CPU"));
  ASSERT_EQ(got.size(), 16u * 32u);
  for (int64_t i = 0; i < 16; i++)
    for (int64_t j = 0; j < 32; j++) {
      double want = 0;
      for (int64_t k = 0; k < 32768; k++)
        want += 0.5 * ((i * 32768 + k) * 7 % 11 - 5) * 0.25 * ((j * 32768 + k) * 7 % 11 - 5);
      ASSERT_EQ(got[i * 32 + j], want) << i << ", " << j;
    }
}

TEST(SplitReduce, ALongRowReductionIsNotSplitForKOnlyWhenEachOperandIsReused) {
  // sum over k of x(n, k) * w(n) broadcast along k: nothing is reused across outputs, one pass
  auto scaled = [](const std::string& dev) {
    NodeRef w =
        make(Op::EXPAND, dtypes::float32,
             {make(Op::RESHAPE, dtypes::float32, {input(dev, {64}, 1)}, Shape{64, 1})}, Shape{64, 32768});
    return make(Op::REDUCE_AXIS, dtypes::float32, {input(dev, {64, 32768}, 0.5f) * w},
                ReduceArg{Op::ADD, {1}});
  };
  EXPECT_EQ(create_schedule(make(Op::SINK, dtypes::void_, {scaled("INTERP")})).items.size(), 1u);
  expect_close(run(scaled("CPU")), run(scaled("INTERP")));
  // a matmul whose K is below 2^14 stays one kernel
  EXPECT_EQ(create_schedule(make(Op::SINK, dtypes::void_, {matmul("INTERP", Layout::NT, 16, 8192, 32)}))
                .items.size(),
            1u);
}

TEST(SplitReduce, ThePartialsOfASplitKStayWithinTheirBound) {
  // buffers of these sizes are never allocated: only scheduled
  auto buf = [](const Shape& shape) {
    return make(Op::RESHAPE, dtypes::float32,
                {new_buffer(device_node("INTERP"), dtypes::float32, shape[0] * shape[1])}, shape);
  };
  // (1024, 1024) outputs over 128256: chunks of at most 2048 would make 2^20 x 63+ partials; the
  // smallest chunk within 2^25 partials is 4008 (32 partials), the smallest multiple of 32 5344 (24)
  Schedule wide =
      create_schedule(make(Op::SINK, dtypes::void_, {matmul_nt(buf({1024, 128256}), buf({1024, 128256}))}));
  ASSERT_EQ(wide.items.size(), 2u);
  EXPECT_EQ(output_size(wide, 0), int64_t{24} << 20);
  // (8192, 4096) outputs (the 8B model's head gradient at sequence 8192): not split at all
  Schedule huge =
      create_schedule(make(Op::SINK, dtypes::void_, {matmul_nt(buf({8192, 128256}), buf({4096, 128256}))}));
  EXPECT_EQ(huge.items.size(), 1u);
}

}  // namespace
}  // namespace lg
