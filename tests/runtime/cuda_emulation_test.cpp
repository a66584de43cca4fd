// The CUDA renderer's kernels executed (on CPU threads, runtime/cuda_emulation.h) with the GPU
// heuristic's Opts and the CUDA device's launch geometry, against the interpreter. CUDACHECK runs
// the same linear programs as C loops; this runs the CUDA source itself: block and thread index
// math, padding masks, GROUPTOP's shared-memory combine and the store guard.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include "base/config.h"
#include "codegen/gpu_launch.h"
#include "codegen/heuristic_gpu.h"
#include "codegen/program.h"
#include "codegen/render_cuda.h"
#include "ir/build.h"
#include "runtime/beam.h"
#include "runtime/buffer.h"
#include "runtime/cuda_emulation.h"
#include "runtime/realize.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

using Graph = NodeRef (*)(const std::string& device);

NodeRef input(const std::string& device, DType t, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  NodeRef b = new_buffer(device_node(device), dtypes::float32, n);
  std::vector<float> host(n);
  for (int64_t i = 0; i < n; i++) host[i] = 0.25f * static_cast<float>((i * 7) % 11 - 5);
  buffer_copy_in(*b, host.data(), host.size() * 4);
  NodeRef v = make(Op::RESHAPE, dtypes::float32, {b}, shape);
  return t == dtypes::float32 ? v : cast(v, t);
}

NodeRef full(const std::string& device, DType t, double c, const Shape& shape) {
  NodeRef k = make(Op::RESHAPE, t, {cnst(t, c, device_node(device))}, Shape(shape.size(), 1));
  return make(Op::EXPAND, t, {k}, shape);
}

// softmax(a @ b) over the rows of (n, k) @ (k, m), in dtype t, as float32.
NodeRef softmax_of_matmul(const std::string& device, DType t, int64_t n, int64_t k, int64_t m) {
  NodeRef a = input(device, t, {n, k}), b = input(device, t, {k, m});
  NodeRef x = make(Op::EXPAND, t, {make(Op::RESHAPE, t, {a}, Shape{n, 1, k})}, Shape{n, m, k});
  NodeRef bt = make(Op::PERMUTE, t, {b}, Shape{1, 0});
  NodeRef y = make(Op::EXPAND, t, {make(Op::RESHAPE, t, {bt}, Shape{1, m, k})}, Shape{n, m, k});
  NodeRef mm = make(Op::RESHAPE, t, {make(Op::REDUCE_AXIS, t, {x * y}, ReduceArg{Op::ADD, {2}})}, Shape{n, m});
  NodeRef mx = make(Op::REDUCE_AXIS, t, {mm}, ReduceArg{Op::MAX, {1}});
  NodeRef e = alu(Op::EXP2, mm - make(Op::EXPAND, t, {mx}, Shape{n, m}));
  NodeRef s = make(Op::REDUCE_AXIS, t, {e}, ReduceArg{Op::ADD, {1}});
  return make(Op::SINK, dtypes::void_, {cast(e * alu(Op::RECIPROCAL, make(Op::EXPAND, t, {s}, Shape{n, m})), dtypes::float32)});
}

// Sum, max and product (of factors near 1) over the rows of a (6, cols) float32 input.
NodeRef row_reductions(const std::string& device, int64_t cols) {
  DType t = dtypes::float32;
  NodeRef x = input(device, t, {6, cols});
  NodeRef near_one = x * full(device, t, 0.0625, {6, cols}) + full(device, t, 1.0, {6, cols});
  return make(Op::SINK, dtypes::void_,
              {make(Op::REDUCE_AXIS, t, {x}, ReduceArg{Op::ADD, {1}}), make(Op::REDUCE_AXIS, t, {x}, ReduceArg{Op::MAX, {1}}),
               make(Op::REDUCE_AXIS, t, {near_one}, ReduceArg{Op::MUL, {1}})});
}

// softmax over the rows of x (rows, cols) stored in dtype `stored`, computed in float32: one row
// kernel (two row reductions, then every element of the row).
NodeRef softmax_rows(const std::string& device, DType stored, int64_t rows, int64_t cols) {
  DType t = dtypes::float32;
  NodeRef x = cast(input(device, stored, {rows, cols}), t);
  auto expand = [&](const NodeRef& r) { return make(Op::EXPAND, t, {r}, Shape{rows, cols}); };
  NodeRef mx = make(Op::REDUCE_AXIS, t, {x}, ReduceArg{Op::MAX, {1}});
  NodeRef e = alu(Op::EXP2, x - expand(mx));
  NodeRef s = make(Op::REDUCE_AXIS, t, {e}, ReduceArg{Op::ADD, {1}});
  return make(Op::SINK, dtypes::void_, {e * alu(Op::RECIPROCAL, expand(s))});
}

// RMS norm over the rows of x (rows, cols) times a weight (cols), stored in dtype `stored`,
// computed in float32.
NodeRef rms_norm_rows(const std::string& device, DType stored, int64_t rows, int64_t cols) {
  DType t = dtypes::float32;
  NodeRef x = cast(input(device, stored, {rows, cols}), t);
  NodeRef w1 = cast(input(device, stored, {cols}), t);
  NodeRef w = make(Op::EXPAND, t, {make(Op::RESHAPE, t, {w1}, Shape{1, cols})}, Shape{rows, cols});
  NodeRef ms = make(Op::REDUCE_AXIS, t, {x * x}, ReduceArg{Op::ADD, {1}});
  NodeRef scale = alu(Op::RECIPROCAL, alu(Op::SQRT, ms * full(device, t, 1.0 / static_cast<double>(cols), {rows, 1}) +
                                                       full(device, t, 1e-5, {rows, 1})));
  return make(Op::SINK, dtypes::void_, {x * make(Op::EXPAND, t, {scale}, Shape{rows, cols}) * w});
}

// x * 3 in float16 over (3, 300): the column axis is padded to a multiple of 32 threads.
NodeRef scale_f16(const std::string& device) {
  DType h = dtypes::float16;
  return make(Op::SINK, dtypes::void_, {cast(input(device, h, {3, 300}) * full(device, h, 3.0, {3, 300}), dtypes::float32)});
}

std::vector<float> read(const std::vector<NodeRef>& outs) {
  std::vector<float> all;
  for (const NodeRef& out : outs) {
    const Node* b = out->op == Op::BUFFER ? out.get() : out->src[0].get();
    std::vector<float> host(out->numel());
    buffer_copy_out(*b, host.data(), host.size() * 4);
    all.insert(all.end(), host.begin(), host.end());
  }
  return all;
}

// Every kernel of the schedule lowered with the GPU heuristic and run as emulated CUDA, on host
// buffers (device CPU).
// row_schedule: every kernel must get the row schedule (codegen/heuristic_gpu.h: GROUPOUT).
std::vector<float> run_emulated(const NodeRef& sink, bool warp_shuffle = true, bool row_schedule = false) {
  Schedule s = create_schedule(sink);
  for (const ScheduleItem& item : s.items) {
    EXPECT_EQ(item.kind, ScheduleItem::Kind::Kernel);
    std::vector<Opt> opts = gpu_heuristic_opts(item.ast);
    if (row_schedule) {
      bool grouped_out = std::find_if(opts.begin(), opts.end(), [](const Opt& o) { return o.kind == OptKind::GROUPOUT; }) != opts.end();
      EXPECT_TRUE(grouped_out) << item.name << ": " << to_string(opts);
    }
    LinearProgram p = lower_kernel(item.ast, item.name, opts);
    std::vector<void*> bufs;
    for (const NodeRef& b : item.buffers) bufs.push_back(buffer_memory(*b).ptr);
    testing_util::emulate_cuda(p, bufs, warp_shuffle);
  }
  return read(s.outputs);
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rtol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-5 + rtol * std::abs(want[i])) << i;
}

TEST(CudaEmulation, GroupReductionsCombineAcrossThreadsAndTheFirstThreadStores) {
  for (bool shuffle : {true, false})   // warp shuffles (CUDA), shared memory only (HIP's way)
    for (int64_t cols : {1000, 4096})  // padded to 1024, and not padded
      expect_close(run_emulated(row_reductions("CPU", cols), shuffle), read(realize(row_reductions("INTERP", cols))), 1e-5);
}

TEST(CudaEmulation, SoftmaxOfMatmulOverPaddedThreadBlocks) {
  expect_close(run_emulated(softmax_of_matmul("CPU", dtypes::float32, 16, 12, 40)),
               read(realize(softmax_of_matmul("INTERP", dtypes::float32, 16, 12, 40))), 1e-5);
  expect_close(run_emulated(softmax_of_matmul("CPU", dtypes::float32, 4, 64, 1000)),
               read(realize(softmax_of_matmul("INTERP", dtypes::float32, 4, 64, 1000))), 1e-5);
  // In bfloat16 the row's sum of exponentials rounds after every add, so its value depends on the
  // order: the interpreter adds the 1000 terms one after another, the row schedule in 256 strided
  // partial sums combined as a tree (closer to the float32 sum here). Each output is compared
  // within that spread, and every row of the result sums to 1.
  std::vector<float> got = run_emulated(softmax_of_matmul("CPU", dtypes::bfloat16, 4, 64, 1000));
  expect_close(got, read(realize(softmax_of_matmul("INTERP", dtypes::bfloat16, 4, 64, 1000))), 5e-2);
  for (size_t row = 0; row < 4; row++) {
    double sum = 0;
    for (size_t j = 0; j < 1000; j++) sum += got[row * 1000 + j];
    EXPECT_NEAR(sum, 1.0, 1e-2) << row;
  }
}

// One block per row: the block's threads reduce the row together (max, then the sum of
// exponentials, each combined so that every thread holds it), then each writes its share of the
// row. 1000 columns are padded to 1024 (masked lanes in both the reductions and the stores), 96
// to a group of 128, 64 give a 64-thread group, 32 a single warp (no shared memory).
TEST(CudaEmulation, RowKernelsReduceEachRowOnceInTheBlockAndEveryThreadWritesItsShare) {
  for (bool shuffle : {true, false})
    for (int64_t cols : {1000, 96, 64, 32}) {
      SCOPED_TRACE(testing::Message() << "warp shuffles " << shuffle << ", " << cols << " columns");
      expect_close(run_emulated(softmax_rows("CPU", dtypes::float32, 3, cols), shuffle, true),
                   read(realize(softmax_rows("INTERP", dtypes::float32, 3, cols))), 1e-5);
      expect_close(run_emulated(rms_norm_rows("CPU", dtypes::float32, 3, cols), shuffle, true),
                   read(realize(rms_norm_rows("INTERP", dtypes::float32, 3, cols))), 1e-5);
    }
  // bfloat16 inputs (a model's logits and activations), reduced in float32: sums in another order
  // differ in the last bits only. (A sum in bfloat16 depends on its order far more: the
  // interpreter's sequential one stops growing past a few hundred.)
  expect_close(run_emulated(softmax_rows("CPU", dtypes::bfloat16, 2, 4096), true, true),
               read(realize(softmax_rows("INTERP", dtypes::bfloat16, 2, 4096))), 1e-5);
  expect_close(run_emulated(rms_norm_rows("CPU", dtypes::bfloat16, 2, 4096), true, true),
               read(realize(rms_norm_rows("INTERP", dtypes::bfloat16, 2, 4096))), 1e-5);
}

// Per row of x (rows, cols): log(sum(exp(x - max))) + max, one value per row (a loss's per-token
// term): two row reductions and no element of the row written.
NodeRef logsumexp_rows(const std::string& device, int64_t rows, int64_t cols) {
  DType t = dtypes::float32;
  NodeRef x = input(device, t, {rows, cols});
  NodeRef mx = make(Op::REDUCE_AXIS, t, {x}, ReduceArg{Op::MAX, {1}});
  NodeRef e = alu(Op::EXP2, x - make(Op::EXPAND, t, {mx}, Shape{rows, cols}));
  NodeRef s = make(Op::REDUCE_AXIS, t, {e}, ReduceArg{Op::ADD, {1}});
  return make(Op::SINK, dtypes::void_, {alu(Op::LOG2, s) + mx});
}

// Every reduction of such a row is split over the block's threads (before, only the last was and
// each thread ran the other whole, 256 times over); the first thread stores the row's value.
TEST(CudaEmulation, RowsOfOneValueSplitEveryReductionOverTheBlock) {
  for (int64_t cols : {4096, 1000}) {
    SCOPED_TRACE(testing::Message() << cols << " columns");
    Schedule s = create_schedule(logsumexp_rows("CPU", 5, cols));
    ASSERT_EQ(s.items.size(), 1u);
    std::vector<Opt> opts = gpu_heuristic_opts(s.items[0].ast);
    EXPECT_EQ(std::count_if(opts.begin(), opts.end(), [](const Opt& o) { return o.kind == OptKind::GROUPTOP; }), 2)
        << to_string(opts);
    for (bool shuffle : {true, false})
      expect_close(run_emulated(logsumexp_rows("CPU", 5, cols), shuffle), read(realize(logsumexp_rows("INTERP", 5, cols))), 1e-5);
  }
}

// x * 3 over (rows, cols) with x held in a buffer of dtype t, as float32: two kernels, the first
// writes x in dtype t, the second reads it.
NodeRef scale(const std::string& device, DType t, int64_t rows, int64_t cols) {
  NodeRef x = make(Op::CONTIGUOUS, t, {input(device, t, {rows, cols})});
  return make(Op::SINK, dtypes::void_, {cast(x * full(device, t, 3.0, {rows, cols}), dtypes::float32)});
}

// The rendered CUDA source of every kernel of sink with the GPU heuristic, concatenated.
std::string cuda_sources(const NodeRef& sink) {
  std::string all;
  for (const ScheduleItem& item : create_schedule(sink).items)
    all += CudaRenderer().render(lower_kernel(item.ast, item.name, gpu_heuristic_opts(item.ast)));
  return all;
}

// 16-byte loads and stores (float4, uint4 of 8 bfloat16 or float16 elements) move the same bits as
// scalar ones: elementwise kernels equal the interpreter exactly, and softmax rows of 1024 floats
// (runs of 4 per thread in the reductions and the outputs) as closely as before.
TEST(CudaEmulation, VectorLoadsAndStoresMoveTheSameValues) {
  for (DType t : {dtypes::float32, dtypes::bfloat16, dtypes::float16}) {
    EXPECT_NE(cuda_sources(scale("CPU", t, 8, 1024)).find(t == dtypes::float32 ? "const float4 vec" : "const uint4 vec"),
              std::string::npos) << name(t);
    EXPECT_EQ(run_emulated(scale("CPU", t, 8, 1024)), read(realize(scale("INTERP", t, 8, 1024)))) << name(t);
  }
  EXPECT_NE(cuda_sources(softmax_rows("CPU", dtypes::float32, 3, 1024)).find("const float4 vec"), std::string::npos);
  for (bool shuffle : {true, false})
    expect_close(run_emulated(softmax_rows("CPU", dtypes::float32, 3, 1024), shuffle, true),
                 read(realize(softmax_rows("INTERP", dtypes::float32, 3, 1024))), 1e-5);
}

// An in-place update of AdamW's shape over n float32 elements: m = 0.9 m + 0.1 g, then p = p - 0.01 m
// with the new m, each written back into its own buffer (one kernel of two outputs); its outputs
// are the two updated buffers.
NodeRef in_place_update(const std::string& device, int64_t n) {
  DType t = dtypes::float32;
  auto buffer = [&](int seed) {
    NodeRef b = new_buffer(device_node(device), t, n);
    std::vector<float> host(n);
    for (int64_t i = 0; i < n; i++) host[i] = 0.125f * static_cast<float>((i * seed) % 13 - 6);
    buffer_copy_in(*b, host.data(), host.size() * 4);
    return b;
  };
  NodeRef m = buffer(5), p = buffer(7), g = input(device, t, {n});
  NodeRef m_new = make(Op::ASSIGN, t, {m, m * full(device, t, 0.9, {n}) + g * full(device, t, 0.1, {n})});
  NodeRef p_new = make(Op::ASSIGN, t, {p, p - m_new * full(device, t, 0.01, {n})});
  return make(Op::SINK, dtypes::void_, {m_new, p_new});
}

// An in-place update loads each element of m and p before it stores it: the loads are merged into
// float4 loads at the first and the stores into float4 stores at the last (gpu_vector_access.h),
// and the values are the interpreter's.
TEST(CudaEmulation, InPlaceUpdatesMoveTheirElementsFourAtATime) {
  const int64_t n = 4096;
  std::string src = cuda_sources(in_place_update("CPU", n));
  EXPECT_NE(src.find("const float4 vec"), std::string::npos) << src;
  EXPECT_NE(src.find("*(float4*)(data"), std::string::npos) << src;
  EXPECT_EQ(src.find("] = v"), std::string::npos) << "no scalar store left: " << src;
  EXPECT_EQ(run_emulated(in_place_update("CPU", n)), read(realize(in_place_update("INTERP", n))));
}

TEST(CudaEmulation, Float16ElementwiseIsExact) {
  EXPECT_EQ(run_emulated(scale_f16("CPU")), read(realize(scale_f16("INTERP"))));
}

// ---- the GPU BEAM space (runtime/beam.h) ----

// Every list of the GPU space up to `depth` steps from its starts, each once, the starts first.
std::vector<std::vector<Opt>> gpu_space_lists(const NodeRef& ast, bool tensor_cores, int depth) {
  std::unique_ptr<BeamSpace> space = gpu_beam_space(ast, GpuKnobs::defaults(tensor_cores));
  std::vector<std::vector<Opt>> all, frontier;
  std::set<std::string> seen;
  auto add = [&](const std::vector<std::vector<Opt>>& lists, std::vector<std::vector<Opt>>& into) {
    for (const std::vector<Opt>& o : lists)
      if (seen.insert(to_string(o)).second) all.push_back(o), into.push_back(o);
  };
  add(space->starts(), frontier);
  for (int d = 0; d < depth; d++) {
    std::vector<std::vector<Opt>> next;
    for (const std::vector<Opt>& o : frontier) add(space->next(o), next);
    frontier = std::move(next);
  }
  return all;
}

// The knob steps stay inside their bounds and turn tensor cores on or off only where the device
// has them.
TEST(GpuBeamSpace, KnobStepsStayInBounds) {
  for (bool tc : {false, true}) {
    std::vector<GpuKnobs> frontier{GpuKnobs::defaults(tc)};
    for (int d = 0; d < 4; d++) {
      std::vector<GpuKnobs> next;
      for (const GpuKnobs& k : frontier)
        for (const GpuKnobs& s : gpu_knob_steps(k, tc)) {
          EXPECT_TRUE(tc || !s.tensor_cores);
          EXPECT_GE(s.block_threads, 32);
          EXPECT_LE(s.block_threads, kGpuMaxThreads);
          EXPECT_GE(s.register_tile, 1);
          EXPECT_LE(s.register_tile, 8);
          EXPECT_LE(s.tc.warp_m * s.tc.warp_n, 32);
          EXPECT_LE(s.tc.block_m * s.tc.block_n, 8);
          EXPECT_GE(std::min({s.tc.warp_m, s.tc.warp_n, s.tc.block_m, s.tc.block_n}), 1);
          next.push_back(s);
        }
      frontier = std::move(next);
      if (frontier.size() > 2000) frontier.resize(2000);
    }
  }
  std::vector<GpuKnobs> from_default = gpu_knob_steps(GpuKnobs::defaults(true), true);
  EXPECT_TRUE(std::any_of(from_default.begin(), from_default.end(), [](const GpuKnobs& k) { return !k.tensor_cores; }));
  EXPECT_TRUE(std::any_of(from_default.begin(), from_default.end(), [](const GpuKnobs& k) { return k.tc.smem != config().smem; }));
}

// Every list two steps from the starts, for reductions, row kernels and elementwise kernels, is a
// schedule the GPU back end accepts: it lowers, its launch has at most 1024 threads per block, and
// it renders. (An illegal launch geometry is an internal error, so BEAM could not skip it.)
TEST(GpuBeamSpace, EveryListTwoStepsFromTheStartsLowersToALegalLaunch) {
  std::vector<NodeRef> graphs = {softmax_of_matmul("CPU", dtypes::float32, 16, 12, 40), row_reductions("CPU", 1000),
                                 softmax_rows("CPU", dtypes::bfloat16, 3, 1000), rms_norm_rows("CPU", dtypes::float32, 5, 96),
                                 logsumexp_rows("CPU", 4, 4096), scale("CPU", dtypes::bfloat16, 8, 1024), scale_f16("CPU")};
  size_t lists = 0;
  for (const NodeRef& g : graphs)
    for (const ScheduleItem& item : create_schedule(g).items) {
      std::vector<std::vector<Opt>> all = gpu_space_lists(item.ast, true, 2);
      EXPECT_EQ(all.at(0), gpu_heuristic_opts(item.ast, true)) << item.name << ": the heuristic's list starts";
      for (const std::vector<Opt>& o : all) {
        SCOPED_TRACE(item.name + " " + to_string(o));
        LinearProgram p = lower_kernel(item.ast, item.name, o);
        EXPECT_LE(gpu_launch_dims(p).threads, kGpuMaxThreads);
        EXPECT_NE(CudaRenderer().render(p).find("lg_kernel"), std::string::npos);
        lists++;
      }
    }
  EXPECT_GT(lists, 40u);  // (a row of 40 or 96 elements has one group size within two steps)
}

// Each kernel run once per list one step from the heuristic's (after the heuristic's run of every
// kernel filled the buffers): what each list writes equals what the heuristic's wrote, up to the
// order of float32 sums. Emulated CUDA, so block sizes, register tiles and vector accesses other
// than the heuristic's run through the real index math.
TEST(GpuBeamSpace, ListsOneStepFromTheHeuristicsWriteTheSameValues) {
  size_t runs = 0;
  for (const NodeRef& g : {softmax_of_matmul("CPU", dtypes::float32, 16, 12, 40), softmax_rows("CPU", dtypes::float32, 3, 1000),
                           scale("CPU", dtypes::float32, 8, 1024)}) {
    Schedule s = create_schedule(g);
    auto run = [](const ScheduleItem& item, const std::vector<Opt>& opts) {
      std::vector<void*> bufs;
      for (const NodeRef& b : item.buffers) bufs.push_back(buffer_memory(*b).ptr);
      testing_util::emulate_cuda(lower_kernel(item.ast, item.name, opts), bufs);
      const Node& out = *item.buffers.at(0);
      EXPECT_EQ(out.dtype, dtypes::float32);
      std::vector<float> host(out.get_arg<BufferArg>().size);
      buffer_copy_out(out, host.data(), host.size() * 4);
      return host;
    };
    for (const ScheduleItem& item : s.items) {
      std::vector<float> want = run(item, gpu_heuristic_opts(item.ast));
      std::unique_ptr<BeamSpace> space = gpu_beam_space(item.ast, GpuKnobs::defaults(false));
      for (const std::vector<Opt>& o : space->next(space->starts().at(0))) {
        SCOPED_TRACE(item.name + " " + to_string(o));
        std::vector<float> got = run(item, o);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); i++) ASSERT_NEAR(got[i], want[i], 1e-5 + 1e-5 * std::abs(want[i])) << i;
        runs++;
      }
    }
  }
  EXPECT_GE(runs, 6u);
}

}  // namespace
}  // namespace lg
