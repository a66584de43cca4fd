// The CUDA renderer's kernels executed (on CPU threads, runtime/cuda_emulation.h) with the GPU
// heuristic's Opts and the CUDA device's launch geometry, against the interpreter. CUDACHECK runs
// the same linear programs as C loops; this runs the CUDA source itself: block and thread index
// math, padding masks, GROUPTOP's shared-memory combine and the store guard.
#include <gtest/gtest.h>

#include <cmath>

#include "codegen/heuristic_gpu.h"
#include "codegen/program.h"
#include "ir/build.h"
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
std::vector<float> run_emulated(const NodeRef& sink, bool warp_shuffle = true) {
  Schedule s = create_schedule(sink);
  for (const ScheduleItem& item : s.items) {
    EXPECT_EQ(item.kind, ScheduleItem::Kind::Kernel);
    LinearProgram p = lower_kernel(item.ast, item.name, gpu_heuristic_opts(item.ast));
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
  expect_close(run_emulated(softmax_of_matmul("CPU", dtypes::bfloat16, 4, 64, 1000)),
               read(realize(softmax_of_matmul("INTERP", dtypes::bfloat16, 4, 64, 1000))), 2e-2);
}

TEST(CudaEmulation, Float16ElementwiseIsExact) {
  EXPECT_EQ(run_emulated(scale_f16("CPU")), read(realize(scale_f16("INTERP"))));
}

}  // namespace
}  // namespace lg
