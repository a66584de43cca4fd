// Optimizations as data: every legal Opt list (up to two Opts) gives the same result as none, for
// matmul, reductions, elementwise with broadcast and the kernels of softmax. Integer data makes the
// comparison exact even when an Opt changes the order of a sum; float results match to 1e-6.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "codegen/opt.h"
#include "codegen/program.h"
#include "codegen/render_c.h"
#include "ir/build.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/program_build.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

NodeRef filled(const Shape& shape, DType t, uint64_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  NodeRef b = new_buffer(device_node("INTERP"), t, n);
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> bytes(n * itemsize(t));
  for (int64_t i = 0; i < n; i++) {
    if (t == dtypes::int32) {
      int32_t v = static_cast<int32_t>(rng() % 19) - 9;
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    } else if (t == dtypes::bfloat16) {  // k / 4 has at most 5 significant bits: exact in bf16
      uint16_t bits = float_to_bf16_bits(static_cast<float>(static_cast<int>(rng() % 17) - 8) / 4);
      std::memcpy(bytes.data() + 2 * i, &bits, 2);
    } else {
      float v = static_cast<float>(static_cast<int>(rng() % 17) - 8) / 4;
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    }
  }
  buffer_copy_in(*b, bytes.data(), bytes.size());
  return shape.size() == 1 ? b : make(Op::RESHAPE, t, {b}, shape);
}

NodeRef reduce(const NodeRef& x, Op op, std::vector<int64_t> axes) {
  return make(Op::REDUCE_AXIS, x->dtype, {x}, ReduceArg{op, std::move(axes)});
}
NodeRef expand(const NodeRef& x, const Shape& s) { return make(Op::EXPAND, x->dtype, {x}, s); }
NodeRef reshape(const NodeRef& x, const Shape& s) { return make(Op::RESHAPE, x->dtype, {x}, s); }

// Runs one scheduled kernel with opts on INTERP and returns its output bytes.
std::vector<uint8_t> run(const ScheduleItem& item, const std::vector<Opt>& opts) {
  LinearProgram p = lower_kernel(item.ast, item.name, opts);
  auto prog = get_device("INTERP").load(p, "", {});
  KernelArgs args;
  for (const NodeRef& b : item.buffers) {
    args.buffers.push_back(buffer_memory(*b).ptr);
    args.sizes.push_back(b->get_arg<BufferArg>().size);
  }
  std::vector<uint8_t> before(buffer_memory(*item.buffers[0]).bytes);
  std::memset(buffer_memory(*item.buffers[0]).ptr, 0, before.size());
  prog->run(args);
  std::vector<uint8_t> out(before.size());
  buffer_copy_out(*item.buffers[0], out.data(), out.size());
  return out;
}

// Integers must match exactly; float32 sums may be reassociated by UNROLL and GROUP, so they match
// to a few ulps.
void expect_same(DType t, const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, const std::string& what) {
  if (t != dtypes::float32) {
    EXPECT_EQ(got, want) << what;
    return;
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i += 4) {
    float g, w;
    std::memcpy(&g, got.data() + i, 4);
    std::memcpy(&w, want.data() + i, 4);
    EXPECT_NEAR(g, w, 1e-6f * std::max(1.0f, std::abs(w))) << what << " at element " << i / 4;
  }
}

std::vector<Opt> candidates(const NodeRef& ast) {
  std::vector<Opt> c;
  int axes = static_cast<int>(kernel_axes(ast).size());
  for (int a = 0; a < axes; a++) {
    for (int amt : {2, 3, 4}) {
      for (OptKind k : {OptKind::UPCAST, OptKind::UNROLL, OptKind::LOCAL, OptKind::GROUP, OptKind::PADTO,
                        OptKind::KBLOCK})
        c.push_back({k, a, amt});
    }
    c.push_back({OptKind::THREAD, a, 0});
  }
  return c;
}

// Every legal list of one or two candidate Opts gives the unoptimized result; returns how many ran.
int check_all_opt_lists(const ScheduleItem& item) {
  std::vector<uint8_t> want = run(item, {});
  int legal = 0;
  std::vector<Opt> first = candidates(item.ast);
  for (const Opt& a : first) {
    std::vector<std::vector<Opt>> lists{{a}};
    NodeRef after;
    try {
      after = apply_opts(item.ast, {a});
    } catch (const OptError&) {
      continue;
    }
    for (const Opt& b : candidates(after)) lists.push_back({a, b});
    for (const auto& opts : lists) {
      std::vector<uint8_t> got;
      try {
        got = run(item, opts);
      } catch (const OptError&) {
        continue;
      }
      legal++;
      expect_same(item.buffers[0]->dtype, got, want, item.name + " with " + to_string(opts));
    }
  }
  return legal;
}

// The bytes of a kernel's output buffer (argument 0) now.
std::vector<uint8_t> output_bytes(const ScheduleItem& item) {
  std::vector<uint8_t> out(buffer_memory(*item.buffers[0]).bytes);
  buffer_copy_out(*item.buffers[0], out.data(), out.size());
  return out;
}

// Runs a kernel that updates its output in place (w = w + ...) from the output bytes w0, with opts,
// compiled for the device (INTERP: the LinearProgram itself); returns the output's bytes.
std::vector<uint8_t> run_in_place(const ScheduleItem& item, const std::vector<uint8_t>& w0,
                                  const std::string& device, const std::vector<Opt>& opts) {
  Device& dev = get_device(device);
  LinearProgram p =
      lower_kernel(item.ast, item.name, opts, dev.renderer() ? dev.renderer()->vector_lanes() : 0);
  buffer_copy_in(*item.buffers[0], w0.data(), w0.size());
  std::unique_ptr<Program> prog = build_program(dev, p).program;
  KernelArgs args;
  for (const NodeRef& buf : item.buffers) {
    args.buffers.push_back(buffer_memory(*buf).ptr);
    args.sizes.push_back(buf->get_arg<BufferArg>().size);
  }
  prog->run(args);
  return output_bytes(item);
}

ScheduleItem only_kernel(const NodeRef& root) {
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {root}));
  EXPECT_EQ(s.items.size(), 1u);
  return s.items.at(0);
}

TEST(Opts, EveryLegalListKeepsMatmulExact) {
  NodeRef a = filled({6, 8}, dtypes::int32, 1), b = filled({8, 4}, dtypes::int32, 2);
  // (6, 1, 8) * (1, 4, 8) summed over the last axis
  NodeRef x = expand(reshape(a, {6, 1, 8}), {6, 4, 8});
  NodeRef y = expand(reshape(make(Op::PERMUTE, b->dtype, {b}, Shape{1, 0}), {1, 4, 8}), {6, 4, 8});
  EXPECT_GT(check_all_opt_lists(only_kernel(reduce(x * y, Op::ADD, {2}))), 50);
}

TEST(Opts, EveryLegalListKeepsReductionsExact) {
  NodeRef a = filled({6, 12}, dtypes::int32, 3);
  EXPECT_GT(check_all_opt_lists(only_kernel(reduce(a, Op::MAX, {1}))), 20);
  EXPECT_GT(check_all_opt_lists(only_kernel(reduce(a, Op::ADD, {0}))), 20);
}

TEST(Opts, EveryLegalListKeepsBroadcastElementwiseExact) {
  NodeRef a = filled({6, 1}, dtypes::float32, 4), b = filled({1, 8}, dtypes::float32, 5);
  EXPECT_GT(check_all_opt_lists(only_kernel(expand(a, {6, 8}) * expand(b, {6, 8}))), 20);
}

TEST(Opts, EveryLegalListKeepsSoftmaxKernelsExact) {
  NodeRef x = filled({4, 6}, dtypes::float32, 6);
  NodeRef m = reduce(x, Op::MAX, {1});
  NodeRef e = alu(Op::EXP2, x + alu(Op::NEG, expand(m, {4, 6})));
  NodeRef s = reduce(e, Op::ADD, {1});
  NodeRef y = e * alu(Op::RECIPROCAL, expand(s, {4, 6}));
  Schedule sched = create_schedule(make(Op::SINK, dtypes::void_, {y}));
  ASSERT_EQ(sched.items.size(), 1u);  // a row kernel: max and sum once per row, then the row
  for (const ScheduleItem& item : sched.items) {
    run(item, {});  // fills the buffers later kernels read
    EXPECT_GT(check_all_opt_lists(item), 10) << item.name;
  }
}

// Why opts do not apply to ast ("" when they do).
std::string opt_error(const NodeRef& ast, const std::vector<Opt>& opts) {
  try {
    apply_opts(ast, opts);
  } catch (const OptError& e) {
    return e.what();
  }
  return "";
}

TEST(Opts, IllegalOptsAreRejectedWithAReason) {
  NodeRef a = filled({6, 12}, dtypes::int32, 7);
  ScheduleItem item = only_kernel(reduce(a, Op::ADD, {1}));
  auto reason = [&](const std::vector<Opt>& opts) { return opt_error(item.ast, opts); };
  EXPECT_NE(reason({{OptKind::UPCAST, 0, 4}}).find("does not divide axis of size 6"), std::string::npos);
  EXPECT_NE(reason({{OptKind::LOCAL, 1, 4}}).find("LOCAL of a reduce axis"), std::string::npos);
  EXPECT_NE(reason({{OptKind::UNROLL, 7, 2}}).find("no axis 7"), std::string::npos);
  EXPECT_EQ(reason({{OptKind::UPCAST, 0, 3}, {OptKind::UNROLL, 1, 4}}), "");  // the upcast part is no axis
  EXPECT_NE(reason({{OptKind::KBLOCK, 0, 2}}).find("KBLOCK of an output axis"), std::string::npos);
  EXPECT_NE(reason({{OptKind::KBLOCK, 1, 12}}).find("does not split axis of size 12"), std::string::npos);
  EXPECT_EQ(reason({{OptKind::KBLOCK, 1, 4}}), "");
  ScheduleItem maxes = only_kernel(reduce(a, Op::MAX, {1}));
  EXPECT_THROW(apply_opts(maxes.ast, {{OptKind::KBLOCK, 1, 4}}), OptError);
}

// KBLOCK: the block loop is SERIAL and sits right inside the outermost output loop, outside the
// other output loops (and the LOCAL chunk); each block adds its sum into the output, which an
// in-place accumulation (w = w + a @ b, a gradient summed into its buffer) already held: the
// result is the unblocked kernel's, for every block size.
TEST(Opts, KBlockRunsItsBlocksInsideTheOuterLoopAndAddsEachIntoTheOutput) {
  NodeRef a = filled({8, 12}, dtypes::int32, 10), b = filled({12, 16}, dtypes::int32, 11);
  NodeRef w = filled({8, 16}, dtypes::int32, 12);
  NodeRef x = expand(reshape(a, {8, 1, 12}), {8, 16, 12});
  NodeRef y = expand(reshape(make(Op::PERMUTE, b->dtype, {b}, Shape{1, 0}), {1, 16, 12}), {8, 16, 12});
  ScheduleItem item =
      only_kernel(make(Op::ASSIGN, w->dtype, {w, w + reshape(reduce(x * y, Op::ADD, {2}), {8, 16})}));
  std::vector<uint8_t> w0 = output_bytes(item);
  auto run_on_w0 = [&](const std::vector<Opt>& opts) { return run_in_place(item, w0, "INTERP", opts); };
  std::vector<uint8_t> want = run_on_w0({});
  EXPECT_NE(want, w0);
  for (const std::vector<Opt>& opts : std::vector<std::vector<Opt>>{
           {{OptKind::KBLOCK, 2, 4}},
           {{OptKind::KBLOCK, 2, 2}},
           {{OptKind::UPCAST, 1, 4}, {OptKind::LOCAL, 0, 2}, {OptKind::KBLOCK, 2, 3}},
           {{OptKind::UPCAST, 0, 2}, {OptKind::KBLOCK, 2, 6}, {OptKind::UNROLL, 2, 2}}})
    EXPECT_EQ(run_on_w0(opts), want) << to_string(opts);

  LinearProgram p = lower_kernel(item.ast, item.name, {{OptKind::LOCAL, 0, 2}, {OptKind::KBLOCK, 2, 4}});
  std::vector<std::pair<AxisType, int64_t>> loops;  // in the order they open
  for (const NodeRef& n : p.ops)
    if (n->op == Op::RANGE) loops.emplace_back(n->get_arg<RangeArg>().type, n->src[0]->const_as_int());
  ASSERT_EQ(loops.size(), 5u);
  EXPECT_EQ(loops[0], std::make_pair(AxisType::LOOP, int64_t{4}));    // rows / 2, split across threads
  EXPECT_EQ(loops[1], std::make_pair(AxisType::SERIAL, int64_t{3}));  // 3 blocks of 4 in turn
  EXPECT_EQ(loops[2], std::make_pair(AxisType::LOOP, int64_t{16}));   // columns
  EXPECT_EQ(loops[3], std::make_pair(AxisType::LOCAL, int64_t{2}));   // the chunk's rows
  EXPECT_EQ(loops[4], std::make_pair(AxisType::REDUCE, int64_t{4}));  // a block's steps
}

// KBLOCK of a value computed from the sum, as a bf16 weight gradient is: w + round_bf16(a @ b), the
// product rounded before it is added into the float32 gradient. Rounding each block's partial sum
// would give other bits; the partial sums go to the thread's own array (declared before the loops,
// since each block reads the one before it) and the last block rounds and adds the whole sum: the
// unblocked kernel's bits (sums of these values are exact in any order), on the interpreter and
// compiled, for every block size and tiling.
TEST(Opts, KBlockOfAValueComputedFromTheSumKeepsItsPartialSumsInAnArray) {
  NodeRef a = filled({8, 12}, dtypes::float32, 15), b = filled({12, 16}, dtypes::float32, 16);
  NodeRef w = filled({8, 16}, dtypes::float32, 17);
  NodeRef x = expand(reshape(a, {8, 1, 12}), {8, 16, 12});
  NodeRef y = expand(reshape(make(Op::PERMUTE, b->dtype, {b}, Shape{1, 0}), {1, 16, 12}), {8, 16, 12});
  NodeRef product = reshape(reduce(x * y, Op::ADD, {2}), {8, 16});
  NodeRef rounded = make(Op::CAST, dtypes::float32, {make(Op::CAST, dtypes::bfloat16, {product})});
  ScheduleItem item = only_kernel(make(Op::ASSIGN, w->dtype, {w, w + rounded}));
  std::vector<uint8_t> w0 = output_bytes(item);
  auto run_on_w0 = [&](const std::string& device, const std::vector<Opt>& opts) {
    return run_in_place(item, w0, device, opts);
  };
  std::vector<uint8_t> want = run_on_w0("INTERP", {});
  EXPECT_NE(want, w0);
  for (const std::vector<Opt>& opts : std::vector<std::vector<Opt>>{
           {{OptKind::KBLOCK, 2, 4}},
           {{OptKind::KBLOCK, 2, 6}},
           {{OptKind::UPCAST, 1, 4}, {OptKind::LOCAL, 0, 2}, {OptKind::KBLOCK, 2, 3}},
           {{OptKind::UPCAST, 1, 16},
            {OptKind::UPCAST, 0, 2},
            {OptKind::KBLOCK, 2, 6},
            {OptKind::UNROLL, 2, 2}}})
    for (const char* device : {"INTERP", "CPU"})
      EXPECT_EQ(run_on_w0(device, opts), want) << device << " " << to_string(opts);

  // The array (16 partial sums: every output position inside the outermost loop, a row) is declared
  // before the first loop; the last block alone stores into w.
  LinearProgram p = lower_kernel(item.ast, item.name, {{OptKind::KBLOCK, 2, 4}});
  size_t local = p.ops.size(), first_range = p.ops.size();
  for (size_t i = 0; i < p.ops.size(); i++) {
    if (p.ops[i]->op == Op::DEFINE_LOCAL && local == p.ops.size()) local = i;
    if (p.ops[i]->op == Op::RANGE && first_range == p.ops.size()) first_range = i;
  }
  ASSERT_LT(local, p.ops.size());
  EXPECT_EQ(p.ops[local]->get_arg<BufferArg>().size, 16);
  EXPECT_LT(local, first_range);
  EXPECT_EQ(parallel_extent(p), 8);  // the rows still split over the threads
  // a max is no sum
  ScheduleItem maxes = only_kernel(reduce(a, Op::MAX, {1}));
  EXPECT_THROW(apply_opts(maxes.ast, {{OptKind::KBLOCK, 1, 4}}), OptError);
}

// PACK: the panel of b a column tile reads (k rows of its 4 columns) is copied into the thread's own
// array once per trip of the panel loop, before the row loop that reuses it opens, and read from
// there: the same values as the kernel without Opts. It refuses what it cannot pack, with a reason.
TEST(Opts, PackCopiesAMatmulPanelOncePerOuterTripAndReadsItFromThere) {
  NodeRef a = filled({8, 12}, dtypes::int32, 13), b = filled({12, 16}, dtypes::int32, 14);
  NodeRef x = expand(reshape(a, {8, 1, 12}), {8, 16, 12});
  NodeRef y = expand(reshape(make(Op::PERMUTE, b->dtype, {b}, Shape{1, 0}), {1, 16, 12}), {8, 16, 12});
  ScheduleItem item = only_kernel(reduce(x * y, Op::ADD, {2}));  // axes n 8, m 16, k 12; b is slot 2
  std::vector<uint8_t> want = run(item, {});
  const std::vector<Opt> packed{{OptKind::UPCAST, 1, 4}, {OptKind::THREAD, 1}, {OptKind::PACK, 2}};
  for (const std::vector<Opt>& opts : std::vector<std::vector<Opt>>{
           packed,
           {{OptKind::UPCAST, 1, 4}, {OptKind::UPCAST, 0, 2}, {OptKind::THREAD, 1}, {OptKind::PACK, 2}},
           {{OptKind::UPCAST, 1, 2}, {OptKind::UNROLL, 2, 3}, {OptKind::THREAD, 1}, {OptKind::PACK, 2}}})
    EXPECT_EQ(run(item, opts), want) << to_string(opts);

  LinearProgram p = lower_kernel(item.ast, item.name, packed);
  std::vector<std::pair<AxisType, int64_t>> loops;  // in the order they open
  size_t barrier = 0, row_loop = 0;
  for (size_t i = 0; i < p.ops.size(); i++) {
    const NodeRef& n = p.ops[i];
    if (n->op == Op::BARRIER) barrier = i;
    if (n->op != Op::RANGE) continue;
    loops.emplace_back(n->get_arg<RangeArg>().type, n->src[0]->const_as_int());
    if (loops.back().first == AxisType::LOOP) row_loop = i;
  }
  ASSERT_EQ(loops.size(), 5u);
  EXPECT_EQ(loops[0], std::make_pair(AxisType::THREAD, int64_t{4}));  // column panels of 4
  EXPECT_EQ(loops[1], std::make_pair(AxisType::COOP, int64_t{12}));   // the copy: k rows of the panel
  EXPECT_EQ(loops[2], std::make_pair(AxisType::COOP, int64_t{4}));    //   times its 4 columns
  EXPECT_EQ(loops[3], std::make_pair(AxisType::LOOP, int64_t{8}));    // the rows that reuse it
  EXPECT_EQ(loops[4], std::make_pair(AxisType::REDUCE, int64_t{12}));
  EXPECT_LT(barrier, row_loop);
  std::vector<int64_t> locals;  // elements of each array
  for (const NodeRef& n : p.ops)
    if (n->op == Op::DEFINE_LOCAL) locals.push_back(n->get_arg<BufferArg>().size);
  EXPECT_EQ(locals, std::vector<int64_t>{48});

  auto reason = [&](const std::vector<Opt>& opts) { return opt_error(item.ast, opts); };
  // b's panel loop (m) is the innermost output loop: no row loop inside it reuses a copy
  EXPECT_NE(reason({{OptKind::PACK, 2}}).find("no output loop inside the copy of argument 2"),
            std::string::npos);
  EXPECT_NE(reason({{OptKind::UPCAST, 1, 4}, {OptKind::THREAD, 1}, {OptKind::PACK, 0}})
                .find("one load of argument 0, the kernel has 0"),
            std::string::npos);
  EXPECT_NE(reason({{OptKind::UPCAST, 1, 4}, {OptKind::THREAD, 1}, {OptKind::PACK, 2}, {OptKind::PACK, 2}})
                .find("packed already"),
            std::string::npos);
  EXPECT_NE(reason({{OptKind::THREAD, 1}, {OptKind::PACK, 2}, {OptKind::UPCAST, 0, 2}})
                .find("PACK must come after the other Opts"),
            std::string::npos);
  EXPECT_NE(
      reason({{OptKind::GLOBAL, 0}, {OptKind::PACK, 2}}).find("PACK needs CPU loops, not a GLOBAL range"),
      std::string::npos);
  // a, read along k, moves with the rows (the innermost output loop): nothing reuses its copy either
  EXPECT_NE(reason({{OptKind::UPCAST, 1, 4}, {OptKind::THREAD, 1}, {OptKind::PACK, 1}})
                .find("no output loop inside"),
            std::string::npos);
  // a panel of 12000 k rows x 16 columns of int32 (768000 bytes) is more than a PACK may hold
  NodeRef wide = filled({12000, 32}, dtypes::int32, 15), left = filled({4, 12000}, dtypes::int32, 16);
  ScheduleItem big = only_kernel(
      reduce(expand(reshape(left, {4, 1, 12000}), {4, 32, 12000}) *
                 expand(reshape(make(Op::PERMUTE, wide->dtype, {wide}, Shape{1, 0}), {1, 32, 12000}),
                        {4, 32, 12000}),
             Op::ADD, {2}));
  std::string too_big =
      opt_error(big.ast, {{OptKind::UPCAST, 1, 16}, {OptKind::THREAD, 1}, {OptKind::PACK, 2}});
  EXPECT_NE(too_big.find("needs 768000 bytes (at most 524288)"), std::string::npos) << too_big;

  // five panels of 8192 k rows x 16 int32 columns (512 KiB each): four fit a kernel's 2 MiB
  NodeRef sum;
  for (uint64_t i = 0; i < 5; i++) {
    NodeRef w = filled({8192, 64}, dtypes::int32, 30 + i), x = filled({4, 8192}, dtypes::int32, 40 + i);
    NodeRef product =
        expand(reshape(x, {4, 1, 8192}), {4, 64, 8192}) *
        expand(reshape(make(Op::PERMUTE, w->dtype, {w}, Shape{1, 0}), {1, 64, 8192}), {4, 64, 8192});
    sum = sum ? sum + product : product;
  }
  ScheduleItem five = only_kernel(reduce(sum, Op::ADD, {2}));
  std::vector<Opt> opts{{OptKind::UPCAST, 1, 16}, {OptKind::THREAD, 1}};
  std::vector<std::string> refused;
  for (int slot = 1; slot <= 10; slot++) {
    opts.push_back({OptKind::PACK, slot});
    if (std::string e = opt_error(five.ast, opts); !e.empty()) {
      opts.pop_back();
      if (e.find("no output loop inside") == std::string::npos) refused.push_back(e);  // not an x
    }
  }
  EXPECT_EQ(opts.size(), 6u) << to_string(opts);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_NE(refused[0].find("would bring the kernel's arrays to 2621440 bytes (at most 2097152)"),
            std::string::npos)
      << refused[0];
}

// PACK of a bf16 operand whose one reader widens it to float32 (a bf16 matmul's FMA operand): the
// array holds the widened values, so the copy converts each element once and the kernel reads
// float32. Widening is worth a copy with no loop to reuse it: a tile's broadcast rows.
TEST(Opts, PackOfAWidenedBf16OperandHoldsFloat32) {
  NodeRef a = filled({8, 12}, dtypes::bfloat16, 17), b = filled({12, 16}, dtypes::bfloat16, 18);
  auto f32 = [](const NodeRef& x) { return make(Op::CAST, dtypes::float32, {x}); };
  NodeRef x = expand(reshape(f32(a), {8, 1, 12}), {8, 16, 12});
  NodeRef y =
      expand(reshape(make(Op::PERMUTE, dtypes::float32, {f32(b)}, Shape{1, 0}), {1, 16, 12}), {8, 16, 12});
  ScheduleItem item = only_kernel(reduce(x * y, Op::ADD, {2}));  // a is slot 1, b slot 2
  std::vector<uint8_t> want = run(item, {});
  // b's panel (reused by the row loop) and a's rows (only the tile's own columns read them)
  const std::vector<Opt> panel{{OptKind::UPCAST, 1, 4}, {OptKind::THREAD, 1}, {OptKind::PACK, 2}};
  const std::vector<Opt> rows{{OptKind::UPCAST, 1, 16}, {OptKind::UPCAST, 0, 2}, {OptKind::PACK, 1}};
  for (const std::vector<Opt>& opts : {panel, rows}) {
    EXPECT_EQ(run(item, opts), want) << to_string(opts);  // float32 sums of exact products: same order
    LinearProgram p = lower_kernel(item.ast, item.name, opts);
    std::vector<DType> locals;
    for (const NodeRef& n : p.ops)
      if (n->op == Op::DEFINE_LOCAL) locals.push_back(n->dtype.base());
    EXPECT_EQ(locals, std::vector<DType>{dtypes::float32}) << to_string(opts);
  }
  // a's rows (no vector lanes) are copied in a's own order, 12 contiguous k steps innermost; b's
  // panel with its 4 lanes innermost (a transposing copy when b runs along k)
  auto copy_loops = [&](const std::vector<Opt>& opts) {
    std::vector<int64_t> sizes;
    for (const NodeRef& n : lower_kernel(item.ast, item.name, opts).ops)
      if (n->op == Op::RANGE && n->get_arg<RangeArg>().type == AxisType::COOP)
        sizes.push_back(n->src[0]->const_as_int());
    return sizes;
  };
  EXPECT_EQ(copy_loops(rows), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(copy_loops(panel), (std::vector<int64_t>{12, 4}));
  // a panel of 12000 k steps x 16 columns: 768000 bytes widened, over kPackBytes: it stays bf16
  NodeRef left = filled({4, 12000}, dtypes::bfloat16, 21), wide = filled({12000, 64}, dtypes::bfloat16, 22);
  ScheduleItem big = only_kernel(
      reduce(expand(reshape(f32(left), {4, 1, 12000}), {4, 64, 12000}) *
                 expand(reshape(make(Op::PERMUTE, dtypes::float32, {f32(wide)}, Shape{1, 0}), {1, 64, 12000}),
                        {4, 64, 12000}),
             Op::ADD, {2}));
  const std::vector<Opt> big_panel{{OptKind::UPCAST, 1, 16}, {OptKind::THREAD, 1}, {OptKind::PACK, 2}};
  EXPECT_EQ(run(big, big_panel), run(big, {}));
  std::vector<DType> big_locals;
  for (const NodeRef& n : lower_kernel(big.ast, big.name, big_panel).ops)
    if (n->op == Op::DEFINE_LOCAL) big_locals.push_back(n->dtype.base());
  EXPECT_EQ(big_locals, std::vector<DType>{dtypes::bfloat16});
  // an int32 operand is not widened: the same rows have nothing to reuse their copy
  NodeRef c = filled({8, 12}, dtypes::int32, 19), d = filled({12, 16}, dtypes::int32, 20);
  ScheduleItem ints = only_kernel(
      reduce(expand(reshape(c, {8, 1, 12}), {8, 16, 12}) *
                 expand(reshape(make(Op::PERMUTE, d->dtype, {d}, Shape{1, 0}), {1, 16, 12}), {8, 16, 12}),
             Op::ADD, {2}));
  EXPECT_NE(opt_error(ints.ast, rows).find("no output loop inside the copy of argument 1"),
            std::string::npos);
}

TEST(Opts, UpcastMakesOneStorePerCopyAndUnrollFoldsCopies) {
  NodeRef a = filled({8, 8}, dtypes::int32, 8);
  ScheduleItem item = only_kernel(reduce(a, Op::ADD, {1}));
  NodeRef k = expand_upcasts(apply_opts(item.ast, {{OptKind::UPCAST, 0, 4}, {OptKind::UNROLL, 1, 2}}));
  EXPECT_EQ(k->src.size(), 4u);  // four stores
  for (const NodeRef& st : k->src) {
    const NodeRef& red = st->src[1];
    ASSERT_EQ(red->op, Op::REDUCE);
    EXPECT_EQ(red->src.size(), 2u);                  // one loop left, of size 4
    EXPECT_EQ(red->src[1]->src[0]->const_as_int(), 4);
    EXPECT_EQ(red->src[0]->op, Op::ADD);             // two unrolled loads added
  }
}

TEST(Opts, UpcastOfAReduceAxisMakesPartialAccumulatorsCombinedAfterTheLoop) {
  NodeRef a = filled({8, 8}, dtypes::int32, 9);
  ScheduleItem item = only_kernel(reduce(a, Op::ADD, {1}));
  NodeRef k = expand_upcasts(apply_opts(item.ast, {{OptKind::UPCAST, 1, 4}}));
  ASSERT_EQ(k->src.size(), 1u);  // one store
  int reduces = 0;
  for (const Node* n : toposort(k->src[0]))
    if (n->op == Op::REDUCE) {
      reduces++;
      EXPECT_EQ(n->src.size(), 2u);  // each partial loops over the remaining 2 trips
      EXPECT_EQ(n->src[1]->src[0]->const_as_int(), 2);
    }
  EXPECT_EQ(reduces, 4);
  EXPECT_EQ(k->src[0]->src[1]->op, Op::ADD);  // the partials added after the loop
}

}  // namespace
}  // namespace lg
