// The runtime: the INTERP device on linear programs, buffers, the program cache and realize().
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/config.h"
#include "base/error.h"
#include "codegen/program.h"
#include "ir/build.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/realize.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

NodeRef global(int64_t slot, DType t = dtypes::float32) {
  return make(Op::DEFINE_GLOBAL, t.as_ptr(), {}, slot);
}
NodeRef index(int64_t slot, const NodeRef& i, DType t = dtypes::float32) {
  return make(Op::INDEX, t.as_ptr(), {global(slot, t), i});
}
NodeRef load(int64_t slot, const NodeRef& i, DType t = dtypes::float32) {
  return make(Op::LOAD, t, {index(slot, i, t)});
}
NodeRef sink(NodeRef idx, NodeRef v) {
  return make(Op::SINK, dtypes::void_, {make(Op::STORE, dtypes::void_, {idx, v})});
}
NodeRef reduce(const NodeRef& v, const NodeRef& r, Op op) { return make(Op::REDUCE, v->dtype, {v, r}, op); }

std::vector<float> run(const NodeRef& kernel, std::vector<std::vector<float>> bufs) {
  LinearProgram p = lower_kernel(kernel, "test");
  auto prog = get_device("INTERP").load(p, "", {});
  KernelArgs args;
  for (auto& b : bufs) {
    args.buffers.push_back(b.data());
    args.sizes.push_back(static_cast<int64_t>(b.size()));
  }
  prog->run(args);
  return bufs[0];
}

TEST(Interp, RowSumsOfAMatrix) {
  NodeRef r0 = range(2, 0, AxisType::LOOP), r1 = range(3, 1, AxisType::REDUCE);
  NodeRef k = sink(index(0, r0), reduce(load(1, r0 * 3 + r1), r1, Op::ADD));
  EXPECT_EQ(run(k, {{0, 0}, {1, 2, 3, 4, 5, 6}}), (std::vector<float>{6, 15}));
}

TEST(Interp, EmptyReductionGivesTheIdentity) {
  NodeRef r = range(0, 0, AxisType::REDUCE);
  NodeRef sum = sink(index(0, index_const(0)), reduce(load(1, r), r, Op::ADD));
  NodeRef max = sink(index(0, index_const(0)), reduce(load(1, r), r, Op::MAX));
  EXPECT_EQ(run(sum, {{7}, {1}})[0], 0.0f);
  EXPECT_EQ(run(max, {{7}, {1}})[0], -std::numeric_limits<float>::infinity());
}

TEST(Interp, GatedLoadReadsZeroAndGatedStoreSkips) {
  // out[r] = r < 2 ? in[r] : 0, reading in only where the gate holds (in has 2 elements)
  NodeRef r = range(4, 0, AxisType::LOOP);
  NodeRef gate = lt(r, 2);
  NodeRef v =
      make(Op::LOAD, dtypes::float32, {make(Op::INDEX, dtypes::float32.as_ptr(), {global(1), r, gate})});
  EXPECT_EQ(run(sink(index(0, r), v), {{9, 9, 9, 9}, {5, 6}}), (std::vector<float>{5, 6, 0, 0}));
  NodeRef gated_store = make(Op::INDEX, dtypes::float32.as_ptr(), {global(0), r, gate});
  EXPECT_EQ(run(sink(gated_store, load(1, r)), {{9, 9, 9, 9}, {1, 2, 3, 4}}),
            (std::vector<float>{1, 2, 9, 9}));
}

TEST(InterpDeathTest, OutOfBoundsIndexAbortsNamingTheKernel) {
  NodeRef r = range(4, 0, AxisType::LOOP);
  NodeRef k = sink(index(0, r), load(1, r + 1));
  EXPECT_DEATH(run(k, {{0, 0, 0, 0}, {1, 2, 3, 4}}), "kernel test: index 4 out of bounds of buffer 1");
}

TEST(Interp, ArithmeticRoundsToTheElementDtype) {
  // bf16: 1 + 2^-9 rounds back to 1 (8 bits of mantissa)
  NodeRef k = sink(index(0, index_const(0), dtypes::bfloat16),
                   load(1, index_const(0), dtypes::bfloat16) + cnst(dtypes::bfloat16, 1.0 / 512));
  LinearProgram p = lower_kernel(k, "bf16");
  auto prog = get_device("INTERP").load(p, "", {});
  uint16_t out = 0, in = float_to_bf16_bits(1.0f);
  prog->run({{&out, &in}, {1, 1}});
  EXPECT_EQ(bf16_bits_to_float(out), 1.0f);
}

TEST(Devices, NamesAreCanonicalAndUnknownOnesAreUserErrors) {
  EXPECT_EQ(canonical_device("INTERP:0"), "INTERP");
  EXPECT_EQ(&get_device("INTERP:0"), &get_device("INTERP"));
  EXPECT_NE(&get_device("INTERP:1"), &get_device("INTERP"));
  try {
    get_device("NOPE");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown device \"NOPE\"; this build has: INTERP"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(get_device("INTERP:x"), Error);
}

TEST(Buffers, MemoryIsAllocatedOnFirstUseAndFreedWithTheNode) {
  size_t before = buffer_bytes_in_use();
  {
    NodeRef b = new_buffer(device_node("INTERP"), dtypes::float32, 1000);
    EXPECT_EQ(buffer_bytes_in_use(), before);
    std::vector<float> host(1000, 2.5f), back(1000);
    buffer_copy_in(*b, host.data(), 4000);
    EXPECT_EQ(buffer_bytes_in_use(), before + 4000);
    buffer_copy_out(*b, back.data(), 4000);
    EXPECT_EQ(back, host);
  }
  EXPECT_EQ(buffer_bytes_in_use(), before);
}

TEST(Realize, RunsTheScheduleAndCachesProgramsByKernel) {
  NodeRef dev = device_node("INTERP");
  auto make_input = [&](float v) {
    NodeRef b = new_buffer(dev, dtypes::float32, 4);
    std::vector<float> host(4, v);
    buffer_copy_in(*b, host.data(), 16);
    return b;
  };
  NodeRef a = make_input(1.5f), b = make_input(2.0f), c = make_input(3.0f), d = make_input(4.0f);
  auto mul = [&](const NodeRef& x, const NodeRef& y) { return make(Op::SINK, dtypes::void_, {x * y}); };
  size_t built = programs_built();
  std::vector<NodeRef> out1 = realize(mul(a, b));
  EXPECT_EQ(programs_built(), built + 1);
  std::vector<NodeRef> out2 = realize(mul(c, d));
  EXPECT_EQ(programs_built(), built + 1);  // same kernel, other buffers: no new program
  std::vector<float> host(4);
  buffer_copy_out(*out1[0], host.data(), 16);
  EXPECT_EQ(host, std::vector<float>(4, 3.0f));
  buffer_copy_out(*out2[0], host.data(), 16);
  EXPECT_EQ(host, std::vector<float>(4, 12.0f));
}

TEST(Realize, CopiesBetweenDevices) {
  NodeRef a = new_buffer(device_node("INTERP"), dtypes::int32, 3);
  std::vector<int32_t> host{7, 8, 9}, back(3);
  buffer_copy_in(*a, host.data(), 12);
  std::vector<NodeRef> out =
      realize(make(Op::SINK, dtypes::void_, {make(Op::COPY, dtypes::int32, {a, device_node("INTERP:1")})}));
  EXPECT_EQ(out[0]->device_name(), "INTERP:1");
  buffer_copy_out(*out[0], back.data(), 12);
  EXPECT_EQ(back, host);
}

// A schedule's intermediate buffers are freed after the last kernel that reads them: along a chain
// of four realized intermediates, at most two are held at once (the one a kernel reads and the
// one it writes), and the output stays.
TEST(Realize, IntermediatesAreFreedAfterTheirLastKernel) {
  NodeRef dev = device_node("INTERP");
  NodeRef x = new_buffer(dev, dtypes::float32, 1000);
  std::vector<float> host(1000, 1.0f);
  buffer_copy_in(*x, host.data(), 4000);
  NodeRef two = make(Op::EXPAND, dtypes::float32, {make(Op::RESHAPE, dtypes::float32, {cnst(dtypes::float32, 2.0, dev)}, Shape{1})},
                     Shape{1000});
  NodeRef v = x;
  for (int i = 0; i < 4; i++) v = make(Op::CONTIGUOUS, dtypes::float32, {v * two});
  NodeRef sink = make(Op::SINK, dtypes::void_, {v + two});
  ASSERT_EQ(create_schedule(sink).items.size(), 5u);
  size_t before = buffer_bytes_in_use();
  reset_buffer_peak();
  std::vector<NodeRef> out = realize(sink);
  EXPECT_EQ(buffer_peak_bytes(), before + 2 * 4000);  // without the release: 5 x 4000
  EXPECT_EQ(buffer_bytes_in_use(), before + 4000);    // the output
  buffer_copy_out(*out[0], host.data(), 4000);
  EXPECT_EQ(host, std::vector<float>(1000, 18.0f));   // 1 * 2^4 + 2
}

// POISON=1: new memory (small and mapped buffers, on INTERP and CPU) holds 0xFF bytes, NaN as
// float32; a kernel that reads a buffer nothing wrote gets NaNs, and one that writes its whole
// output overwrites the poison with the values it computes.
TEST(Poison, NewMemoryHoldsNaNsUntilAKernelWritesIt) {
  struct Restore {
    ~Restore() { config().poison = false; }
  } restore;
  config().poison = true;
  for (const char* name : {"INTERP", "CPU"}) {
    for (int64_t n : {int64_t{1000}, int64_t{1} << 20}) {  // 4 KB (heap) and 4 MiB (a mapping on CPU)
      SCOPED_TRACE(testing::Message() << name << ", " << n << " floats");
      NodeRef dev = device_node(name);
      NodeRef never_written = new_buffer(dev, dtypes::float32, n);
      std::vector<uint8_t> bytes(static_cast<size_t>(n) * 4);
      buffer_copy_out(*never_written, bytes.data(), bytes.size());
      EXPECT_TRUE(std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == kPoisonByte; }));
      NodeRef one =
          make(Op::EXPAND, dtypes::float32,
               {make(Op::RESHAPE, dtypes::float32, {cnst(dtypes::float32, 1.0, dev)}, Shape{1})}, Shape{n});
      std::vector<NodeRef> out = realize(make(Op::SINK, dtypes::void_, {never_written + one}));
      std::vector<float> host(static_cast<size_t>(n));
      buffer_copy_out(*out[0], host.data(), host.size() * 4);
      EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](float v) { return std::isnan(v); }));
      NodeRef x = new_buffer(dev, dtypes::float32, n);
      std::vector<float> in(static_cast<size_t>(n));
      for (size_t i = 0; i < in.size(); i++) in[i] = static_cast<float>(i % 97);
      buffer_copy_in(*x, in.data(), in.size() * 4);
      out = realize(make(Op::SINK, dtypes::void_, {x + one}));
      buffer_copy_out(*out[0], host.data(), host.size() * 4);
      for (size_t i = 0; i < in.size(); i += 4099) ASSERT_EQ(host[i], in[i] + 1.0f) << "element " << i;
      EXPECT_TRUE(std::none_of(host.begin(), host.end(), [](float v) { return std::isnan(v); }));
    }
  }
}

}  // namespace
}  // namespace lg
