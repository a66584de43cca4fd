// Opt ATOMIC (codegen/atomic_scatter.h): a scatter-add's positions run in parallel with atomic adds.
// Values against a host sum on the interpreter, on the C CPU device (its threads split the positions
// and race on repeated ids) and as the CUDA renderer's source run by the emulation; the GPU
// heuristic's choice; and the kernels it must leave alone.
//
// The table starts at small integers and every added value is a multiple of 0.25 below 2, so every
// sum is exact in float32 in any order: results are compared for equality.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "codegen/atomic_scatter.h"
#include "codegen/gpu_launch.h"
#include "codegen/heuristic_gpu.h"
#include "codegen/opt.h"
#include "codegen/program.h"
#include "codegen/render_c.h"
#include "codegen/render_cuda.h"
#include "ir/build.h"
#include "ir/graph.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/symbolic.h"
#include "runtime/buffer.h"
#include "runtime/cuda_emulation.h"
#include "runtime/device.h"
#include "runtime/program_build.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

// table (rows, cols) float32 += values (ids.size(), cols) scattered along axis 0 by ids: row ids[p]
// gets values[p, :]; ids outside [0, rows) add nothing.
struct Scatter {
  int64_t rows, cols;
  std::vector<int32_t> ids;
  DType t = dtypes::float32;

  int64_t positions() const { return static_cast<int64_t>(ids.size()); }
  static float value(int64_t p, int64_t c) { return 0.25f * static_cast<float>((p * 7 + c * 3) % 8); }
  static float start(int64_t i) { return static_cast<float>(i % 5); }

  std::vector<float> expected() const {
    std::vector<float> out(rows * cols);
    for (int64_t i = 0; i < rows * cols; i++) out[i] = start(i);
    for (int64_t p = 0; p < positions(); p++)
      if (ids[p] >= 0 && ids[p] < rows)
        for (int64_t c = 0; c < cols; c++) out[ids[p] * cols + c] += value(p, c);
    return out;
  }
};

// The scatter's graph on device and its one kernel; the table buffer holds Scatter::start.
struct Built {
  ScheduleItem item;
  NodeRef table;
};

NodeRef filled(const std::string& device, DType t, const std::vector<float>& host) {
  NodeRef b = new_buffer(device_node(device), dtypes::float32, static_cast<int64_t>(host.size()));
  buffer_copy_in(*b, host.data(), host.size() * 4);
  return t == dtypes::float32 ? b : cast(b, t);
}

Built build(const Scatter& s, const std::string& device) {
  int64_t n = s.positions();
  std::vector<float> start(s.rows * s.cols), values(n * s.cols);
  for (int64_t i = 0; i < s.rows * s.cols; i++) start[i] = Scatter::start(i);
  for (int64_t p = 0; p < n; p++)
    for (int64_t c = 0; c < s.cols; c++) values[p * s.cols + c] = Scatter::value(p, c);
  NodeRef table = new_buffer(device_node(device), s.t, s.rows * s.cols);
  NodeRef ids = new_buffer(device_node(device), dtypes::int32, n);
  buffer_copy_in(*ids, s.ids.data(), s.ids.size() * 4);
  NodeRef index = make(Op::EXPAND, dtypes::int32, {make(Op::RESHAPE, dtypes::int32, {ids}, Shape{n, 1})},
                       Shape{n, s.cols});
  NodeRef v = make(Op::RESHAPE, s.t, {filled(device, s.t, values)}, Shape{n, s.cols});
  NodeRef target = make(Op::RESHAPE, s.t, {table}, Shape{s.rows, s.cols});
  NodeRef scatter = make(Op::SCATTER_ADD, s.t, {target, index, v}, int64_t{0});
  Schedule sched = create_schedule(make(Op::SINK, dtypes::void_, {scatter}));
  std::vector<ScheduleItem> kernels;
  for (const ScheduleItem& it : sched.items)
    if (it.name.rfind("S_", 0) == 0) kernels.push_back(it);
  EXPECT_EQ(kernels.size(), 1u);
  if (s.t == dtypes::float32) buffer_copy_in(*table, start.data(), start.size() * 4);
  return {kernels.at(0), table};
}

// The kernel as lower_kernel sees it before its Opts.
NodeRef symbolic(const NodeRef& ast) { return rewrite(ast, pm_symbolic(), {.name = "initial symbolic"}); }

std::vector<float> table_of(const Built& b) {
  std::vector<float> out(b.table->get_arg<BufferArg>().size);
  buffer_copy_out(*b.table, out.data(), out.size() * 4);
  return out;
}

// Runs the kernel once with opts on its device (the table starts at Scatter::start).
std::vector<float> run(const Scatter& s, const std::string& device, const std::vector<Opt>& opts) {
  Built b = build(s, device);
  LinearProgram p = lower_kernel(b.item.ast, b.item.name, opts);
  BuiltProgram prog = build_program(get_device(device), p);
  KernelArgs args;
  for (const NodeRef& buf : b.item.buffers) {
    args.buffers.push_back(buffer_memory(*buf).ptr);
    args.sizes.push_back(buf->get_arg<BufferArg>().size);
  }
  prog.program->run(args);
  return table_of(b);
}

// The CUDA source of the GPU heuristic's kernel, run by the emulation on host buffers.
std::vector<float> run_emulated(const Scatter& s) {
  Built b = build(s, "CPU");
  LinearProgram p = lower_kernel(b.item.ast, b.item.name, gpu_heuristic_opts(b.item.ast));
  std::vector<void*> bufs;
  for (const NodeRef& buf : b.item.buffers) bufs.push_back(buffer_memory(*buf).ptr);
  testing_util::emulate_cuda(p, bufs);
  return table_of(b);
}

int count_ranges(const NodeRef& ast, AxisType t) {
  int n = 0;
  for (const Node* x : toposort(ast)) n += x->op == Op::RANGE && x->get_arg<RangeArg>().type == t;
  return n;
}

const Scatter kRepeats{6, 40, {3, 0, 3, 5, -1, 3, 6, 0, 2, 3, 3, 5, 1, 1, 4, 0, 3, 2, 100, 5}};

TEST(AtomicScatter, MakesTheScatteredAxisAnOutputAxisAndTheStoreAnAtomicAdd) {
  NodeRef ast = symbolic(build(kRepeats, "INTERP").item.ast);
  ASSERT_TRUE(is_serial_scatter(ast));
  ASSERT_EQ(count_ranges(ast, AxisType::SERIAL), 1);
  ASSERT_EQ(kernel_axes(ast).size(), 1u);  // only the columns are parallel
  NodeRef k = apply_opts(ast, {{OptKind::ATOMIC, 0}});
  EXPECT_EQ(count_ranges(k, AxisType::SERIAL), 0);
  std::vector<NodeRef> axes = kernel_axes(k);
  ASSERT_EQ(axes.size(), 2u);
  EXPECT_EQ(axes[0]->src[0]->const_as_int(), kRepeats.positions());  // the outermost axis
  const NodeRef& store = k->src[0];
  ASSERT_TRUE(is_atomic_add(*store));
  for (const Node* n : toposort(store->src[1]))  // the added value does not read the table
    EXPECT_FALSE(n->op == Op::INDEX && n->src[0] == store->src[0]->src[0]);
  EXPECT_FALSE(is_serial_scatter(k));
}

TEST(AtomicScatter, AddsEveryPositionOnTheInterpreterTheCpuAndEmulatedCuda) {
  std::vector<float> want = kRepeats.expected();
  EXPECT_EQ(run(kRepeats, "INTERP", {}), want);  // serial: the reference schedule
  EXPECT_EQ(run(kRepeats, "INTERP", {{OptKind::ATOMIC, 0}}), want);
  Built b = build(kRepeats, "INTERP");
  std::vector<Opt> gpu = gpu_heuristic_opts(b.item.ast);
  ASSERT_FALSE(gpu.empty());
  EXPECT_EQ(gpu[0].kind, OptKind::ATOMIC) << to_string(gpu);
  EXPECT_EQ(run(kRepeats, "INTERP", gpu), want);
  EXPECT_EQ(run(kRepeats, "CPU", gpu), want);
  EXPECT_EQ(run(kRepeats, "CPU", {{OptKind::ATOMIC, 0}}), want);
  EXPECT_EQ(run_emulated(kRepeats), want);
}

TEST(AtomicScatter, CpuThreadsAddingIntoOneElementLoseNothing) {
  // 16384 positions, all but every 64th onto row 0: the C kernel's threads split the positions
  // (the outermost loop) and add into row 0 together through the prelude's compare-and-swap loop.
  Scatter s{3, 64, std::vector<int32_t>(16384, 0)};
  for (size_t p = 0; p < s.ids.size(); p += 64) s.ids[p] = 2;
  LinearProgram p = lower_kernel(build(s, "CPU").item.ast, "S", {{OptKind::ATOMIC, 0}});
  EXPECT_EQ(parallel_extent(p), s.positions());
  std::string c = CRenderer().render(p);
  EXPECT_NE(c.find("lg_atomic_add_f32(&"), std::string::npos) << c;
  for (int i = 0; i < 3; i++) EXPECT_EQ(run(s, "CPU", {{OptKind::ATOMIC, 0}}), s.expected()) << "run " << i;
}

TEST(AtomicScatter, TheGpuHeuristicSpreadsThePositionsOverBlocks) {
  Scatter s{64, 256, std::vector<int32_t>(2048)};
  for (size_t p = 0; p < s.ids.size(); p++) s.ids[p] = static_cast<int32_t>((p * 13) % 64);
  NodeRef ast = build(s, "INTERP").item.ast;
  GpuKnobs knobs = GpuKnobs::defaults(false);
  std::vector<Opt> opts = gpu_heuristic_opts(ast, knobs);
  ASSERT_EQ(opts.at(0).kind, OptKind::ATOMIC) << to_string(opts);
  LinearProgram p = lower_kernel(ast, "S", opts);
  LaunchDims d = gpu_launch_dims(p);
  EXPECT_GE(d.blocks * d.threads * 8, s.positions() * s.cols) << "at most 8 elements a thread";
  EXPECT_GE(d.blocks, 512);  // enough to fill a GPU's SMs (an H100 has 132)
  std::string src = CudaRenderer().render(p);
  EXPECT_NE(src.find("lg_atomic_add(&data0["), std::string::npos) << src;
  // ATOMIC_SCATTER=0: the positions in order in every thread, only the columns parallel
  knobs.atomic_scatter = false;
  std::vector<Opt> serial = gpu_heuristic_opts(ast, knobs);
  EXPECT_TRUE(
      std::none_of(serial.begin(), serial.end(), [](const Opt& o) { return o.kind == OptKind::ATOMIC; }));
  LinearProgram q = lower_kernel(ast, "S", serial);
  EXPECT_LE(gpu_launch_dims(q).blocks * gpu_launch_dims(q).threads, s.cols);
  EXPECT_EQ(CudaRenderer().render(q).find("lg_atomic_add(&"), std::string::npos);
  EXPECT_EQ(run(s, "INTERP", opts), s.expected());
}

TEST(AtomicScatter, AppliesOnlyFirstToAScatterOfAnAtomicDtype) {
  NodeRef ast = symbolic(build(kRepeats, "INTERP").item.ast);
  // after another Opt (its ranges are no longer plain loops)
  EXPECT_THROW(apply_opts(ast, {{OptKind::LOCAL, 0, 8}, {OptKind::ATOMIC, 0}}), OptError);
  EXPECT_THROW(apply_opts(ast, {{OptKind::ATOMIC, 0}, {OptKind::ATOMIC, 0}}), OptError);
  // an elementwise kernel
  NodeRef x = new_buffer(device_node("INTERP"), dtypes::float32, 64);
  Schedule e = create_schedule(make(Op::SINK, dtypes::void_, {x + x}));
  ASSERT_EQ(e.items.size(), 1u);
  EXPECT_FALSE(is_serial_scatter(symbolic(e.items[0].ast)));
  EXPECT_THROW(apply_opts(symbolic(e.items[0].ast), {{OptKind::ATOMIC, 0}}), OptError);
  // a table of a dtype atomicAdd does not take: the heuristic keeps the serial schedule
  Scatter wide = kRepeats;
  wide.t = dtypes::int64;
  NodeRef w = symbolic(build(wide, "INTERP").item.ast);
  EXPECT_FALSE(is_serial_scatter(w));
  EXPECT_THROW(apply_opts(w, {{OptKind::ATOMIC, 0}}), OptError);
  std::vector<Opt> opts = gpu_heuristic_opts(w);
  EXPECT_TRUE(std::none_of(opts.begin(), opts.end(), [](const Opt& o) { return o.kind == OptKind::ATOMIC; }));
  EXPECT_FALSE(atomic_add_dtype(dtypes::bfloat16));
  EXPECT_TRUE(atomic_add_dtype(dtypes::int32));
}

}  // namespace
}  // namespace lg
