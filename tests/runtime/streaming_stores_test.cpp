// Streaming stores (codegen/streaming_stores.h): which CPU kernels write their output with them,
// and that a kernel that does computes what the interpreter's arithmetic gives.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/config.h"
#include "codegen/heuristic.h"
#include "codegen/program.h"
#include "codegen/render_c.h"
#include "codegen/streaming_stores.h"
#include "ir/build.h"
#include "runtime/buffer.h"
#include "runtime/realize.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

// Element i of an input is scale * ((i * 7) % 11 - 5): sums of their products are exact in float32.
double element(int64_t i, double scale) { return scale * static_cast<double>((i * 7) % 11 - 5); }

NodeRef input(const std::string& device, int64_t rows, int64_t cols, float scale) {
  NodeRef b = new_buffer(device_node(device), dtypes::float32, rows * cols);
  std::vector<float> host(rows * cols);
  for (int64_t i = 0; i < rows * cols; i++) host[i] = static_cast<float>(element(i, scale));
  buffer_copy_in(*b, host.data(), host.size() * 4);
  return make(Op::RESHAPE, dtypes::float32, {b}, Shape{rows, cols});
}

// out (n, m) = a (n, k) @ b (k, m), a fresh output, as the LM head's logits are computed (the CPU
// step reads the head's weight repacked along the vocabulary: 16 lanes along m).
NodeRef logits(const std::string& device, int64_t n, int64_t k, int64_t m) {
  NodeRef a = input(device, n, k, 0.5f),
          bt = make(Op::PERMUTE, dtypes::float32, {input(device, k, m, 0.25f)}, Shape{1, 0});
  NodeRef x = make(Op::EXPAND, dtypes::float32, {make(Op::RESHAPE, dtypes::float32, {a}, Shape{n, 1, k})},
                   Shape{n, m, k});
  NodeRef y = make(Op::EXPAND, dtypes::float32, {make(Op::RESHAPE, dtypes::float32, {bt}, Shape{1, m, k})},
                   Shape{n, m, k});
  return make(Op::RESHAPE, dtypes::float32,
              {make(Op::REDUCE_AXIS, dtypes::float32, {x * y}, ReduceArg{Op::ADD, {2}})}, Shape{n, m});
}

LinearProgram program(const NodeRef& root) {
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {root}));
  EXPECT_EQ(s.items.size(), 1u);
  const ScheduleItem& item = s.items.at(0);
  return lower_kernel(item.ast, item.name, cpu_heuristic_opts(item.ast), 16);
}

size_t vector_stores(const LinearProgram& p) {
  size_t n = 0;
  for (const NodeRef& x : p.ops) n += x->op == Op::STORE && x->src[1]->dtype.count == 16;
  return n;
}

// 1024 x 8192 float32 is kStreamingStoreBytes (32 MiB): every store of the register tile streams,
// and the kernel ends with the fence. Half of it stays in ordinary stores.
TEST(StreamingStores, AnOutputOfAtLeast32MiBStreamsItsVectorStores) {
  LinearProgram big = program(logits("INTERP", 1024, 16, 8192));
  ASSERT_GT(vector_stores(big), 1u);
  EXPECT_EQ(streaming_stores(big).size(), vector_stores(big));
  std::string c = CRenderer().render(big);
  EXPECT_NE(c.find("lg_stream_f32x16(&data0["), std::string::npos);
  EXPECT_EQ(c.find("lg_store_f32x16(&data0["), std::string::npos);
  EXPECT_NE(c.find("  lg_stream_fence();\n}\n"), std::string::npos);

  LinearProgram half = program(logits("INTERP", 1024, 16, 4096));
  EXPECT_TRUE(streaming_stores(half).empty());
  std::string h = CRenderer().render(half);
  EXPECT_EQ(h.find("lg_stream_f32x16(&"), std::string::npos);
  EXPECT_EQ(h.find("  lg_stream_fence();\n}\n"), std::string::npos);
}

TEST(StreamingStores, TheSwitchTurnsThemOff) {
  config().stream_stores = false;  // STREAM_STORES=0
  LinearProgram big = program(logits("INTERP", 1024, 16, 8192));
  EXPECT_TRUE(streaming_stores(big).empty());
  std::string c = CRenderer().render(big);
  config().stream_stores = true;
  EXPECT_EQ(c.find("lg_stream_f32x16(&"), std::string::npos);
  EXPECT_EQ(c.find("  lg_stream_fence();\n}\n"), std::string::npos);
}

// An update of a buffer in place (w = w + x @ W^T) reads the lines it writes: they are in cache,
// and stay ordinary stores however large.
TEST(StreamingStores, AKernelThatReadsItsOutputBufferDoesNotStream) {
  NodeRef w = input("INTERP", 1024, 8192, 1.0f);
  NodeRef sum = make(Op::ASSIGN, dtypes::float32, {w, w + logits("INTERP", 1024, 16, 8192)});
  LinearProgram p = program(sum);
  ASSERT_GT(vector_stores(p), 1u);
  EXPECT_TRUE(streaming_stores(p).empty());
}

// An elementwise kernel that reads as much as it writes keeps ordinary stores (its memory is as
// busy as its stores would make it); one that reads nothing (a fill) streams.
TEST(StreamingStores, ElementwiseKernelsStreamOnlyFills) {
  NodeRef a = input("INTERP", 1024, 8192, 1.0f), b = input("INTERP", 1024, 8192, 2.0f);
  LinearProgram sum = program(a + b);
  ASSERT_GT(vector_stores(sum), 0u);
  EXPECT_TRUE(streaming_stores(sum).empty());
  NodeRef zero =
      make(Op::RESHAPE, dtypes::float32, {cnst(dtypes::float32, 0.0, device_node("INTERP"))}, Shape{1, 1});
  LinearProgram fill = program(make(Op::EXPAND, dtypes::float32, {zero}, Shape{1024, 8192}));
  ASSERT_GT(vector_stores(fill), 0u);
  EXPECT_EQ(streaming_stores(fill).size(), vector_stores(fill));
}

// On the CPU device the streamed logits equal float64 sums of the exact products, every element.
TEST(StreamingStores, TheStreamedOutputHoldsEveryValue) {
  constexpr int64_t n = 1024, k = 16, m = 8192;
  NodeRef out = realize(make(Op::SINK, dtypes::void_, {logits("CPU", n, k, m)}))[0];
  std::vector<float> got(n * m);
  buffer_copy_out(*(out->op == Op::BUFFER ? out.get() : out->src[0].get()), got.data(), got.size() * 4);
  for (int64_t r = 0; r < n; r++)
    for (int64_t c = 0; c < m; c++) {
      double want = 0;
      for (int64_t kk = 0; kk < k; kk++) want += element(r * k + kk, 0.5) * element(kk * m + c, 0.25);
      ASSERT_EQ(got[r * m + c], static_cast<float>(want)) << r << ", " << c;
    }
}

}  // namespace
}  // namespace lg
