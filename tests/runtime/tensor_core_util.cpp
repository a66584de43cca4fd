#include "runtime/tensor_core_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "base/config.h"
#include "base/error.h"
#include "codegen/heuristic_gpu.h"
#include "ir/build.h"
#include "runtime/buffer.h"
#include "runtime/cpu.h"
#include "runtime/cuda_emulation.h"
#include "runtime/device.h"
#include "runtime/program_build.h"

namespace lg::tc_testing {

float a_value(int64_t i) { return static_cast<float>((i * 37) % 17 - 8) / 8.0f; }
float b_value(int64_t i) { return static_cast<float>((i * 11) % 13 - 6) / 4.0f; }

uint16_t bits16(float f, DType t) {
  if (t == dtypes::float16) {
    _Float16 h = static_cast<_Float16>(f);
    uint16_t u;
    std::memcpy(&u, &h, 2);
    return u;
  }
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);  // exact: the values have at most 8 significant bits
}

float from16(uint16_t u, DType t) {
  if (t == dtypes::float16) {
    _Float16 h;
    std::memcpy(&h, &u, 2);
    return static_cast<float>(h);
  }
  uint32_t w = static_cast<uint32_t>(u) << 16;
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

NodeRef filled(const std::string& device, DType t, int64_t n, float (*value)(int64_t)) {
  NodeRef b = new_buffer(device_node(device), t, n);
  std::vector<float> f(n);
  std::vector<uint16_t> h(n);
  for (int64_t i = 0; i < n; i++) f[i] = value(i), h[i] = bits16(f[i], t);
  if (t == dtypes::float32) buffer_copy_in(*b, f.data(), n * 4);
  else buffer_copy_in(*b, h.data(), n * 2);
  return b;
}

NodeRef matmul_graph(const std::string& device, const Matmul& c) {
  DType t = c.t, f = dtypes::float32;
  int64_t B = c.batch, M = c.m, N = c.n, K = c.k;
  NodeRef a_mk = c.a_t ? make(Op::PERMUTE, t, {make(Op::RESHAPE, t, {filled(device, t, B * M * K, a_value)}, Shape{B, K, M})},
                              Shape{0, 2, 1})
                       : make(Op::RESHAPE, t, {filled(device, t, B * M * K, a_value)}, Shape{B, M, K});
  NodeRef a = make(Op::RESHAPE, t, {a_mk}, Shape{B, M, 1, K});
  NodeRef b_nk = c.b_t ? make(Op::RESHAPE, t, {filled(device, t, B * K * N, b_value)}, Shape{B, N, K})
                       : make(Op::PERMUTE, t, {make(Op::RESHAPE, t, {filled(device, t, B * K * N, b_value)}, Shape{B, K, N})},
                              Shape{0, 2, 1});
  NodeRef bt = make(Op::RESHAPE, t, {b_nk}, Shape{B, 1, N, K});
  NodeRef x = cast(make(Op::EXPAND, t, {a}, Shape{B, M, N, K}), f);
  NodeRef y = cast(make(Op::EXPAND, t, {bt}, Shape{B, M, N, K}), f);
  NodeRef sum = make(Op::RESHAPE, f, {make(Op::REDUCE_AXIS, f, {x * y}, ReduceArg{Op::ADD, {3}})}, Shape{B, M, N});
  return make(Op::SINK, dtypes::void_, {c.out16 ? cast(sum, t) : sum});
}

std::vector<double> reference(const Matmul& c) {
  std::vector<double> out(c.batch * c.m * c.n, 0.0);
  for (int64_t z = 0; z < c.batch; z++)
    for (int64_t i = 0; i < c.m; i++)
      for (int64_t j = 0; j < c.n; j++) {
        double s = 0;
        for (int64_t q = 0; q < c.k; q++) {
          int64_t ai = c.a_t ? (z * c.k + q) * c.m + i : (z * c.m + i) * c.k + q;
          int64_t bi = c.b_t ? (z * c.n + j) * c.k + q : (z * c.k + q) * c.n + j;
          s += double(a_value(ai)) * b_value(bi);
        }
        out[(z * c.m + i) * c.n + j] = s;
      }
  return out;
}

std::vector<float> read(const NodeRef& out, DType t) {
  const Node* b = out->op == Op::BUFFER ? out.get() : out->src[0].get();
  std::vector<float> host(out->numel());
  if (t == dtypes::float32) {
    buffer_copy_out(*b, host.data(), host.size() * 4);
    return host;
  }
  std::vector<uint16_t> h(host.size());
  buffer_copy_out(*b, h.data(), h.size() * 2);
  for (size_t i = 0; i < h.size(); i++) host[i] = from16(h[i], t);
  return host;
}

LinearProgram tc_program(const ScheduleItem& item) {
  return lower_kernel(item.ast, item.name, gpu_heuristic_opts(item.ast, true));
}

int wmma_count(const LinearProgram& p) {
  int n = 0;
  for (const NodeRef& op : p.ops) n += op->op == Op::WMMA;
  return n;
}

std::vector<float> run_tc(const Matmul& c, Run how) {
  Schedule s = create_schedule(matmul_graph("CPU", c));
  EXPECT_EQ(s.items.size(), 1u);
  const ScheduleItem& item = s.items.at(0);
  LinearProgram p = tc_program(item);
  EXPECT_GE(wmma_count(p), 4) << "no tensor cores in " << to_string(p);
  int locals = 0;
  for (const NodeRef& op : p.ops) locals += op->op == Op::DEFINE_LOCAL;
  EXPECT_EQ(locals, config().smem ? 2 : 0) << "A and B tiles in shared memory (SMEM=" << config().smem << ")";
  run_program(p, item, how);
  return read(s.outputs.at(0), c.out16 ? c.t : dtypes::float32);
}

void run_program(const LinearProgram& p, const ScheduleItem& item, Run how) {
  KernelArgs args;
  for (const NodeRef& b : item.buffers) {
    args.buffers.push_back(buffer_memory(*b).ptr);
    args.sizes.push_back(b->numel());
  }
  if (how == Run::EmulatedCuda) {
    testing_util::emulate_cuda(p, args.buffers, true, args.sizes);
  } else {
    std::unique_ptr<Device> cpu = make_checking_cpu_device("CPU");  // the C program as CUDACHECK builds it
    build_program(*cpu, p).program->run(args);
  }
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 10; i++)
    if (!(std::abs(got[i] - want[i]) <= tol * (1.0 + std::abs(want[i])))) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", want " << want[i];
      bad++;
    }
}

std::string label(const Matmul& c) {
  return str(name(c.t), " ", c.batch, "x(", c.m, "x", c.k, c.a_t ? " stored k-major" : "", " @ ", c.k, "x", c.n,
             c.b_t ? " stored n-major" : "", ")", c.out16 ? " -> 16-bit" : "");
}

float c_value(int64_t i) { return static_cast<float>((i * 5) % 11 - 5) / 8.0f; }
float d_value(int64_t i) { return static_cast<float>((i * 7) % 9 - 4) / 4.0f; }

NodeRef two_products_graph(int64_t M, int64_t N, int64_t K) {
  DType t = dtypes::bfloat16, f = dtypes::float32;
  auto lhs = [&](float (*value)(int64_t)) {
    NodeRef a = make(Op::RESHAPE, t, {filled("CPU", t, M * K, value)}, Shape{M, 1, K});
    return cast(make(Op::EXPAND, t, {a}, Shape{M, N, K}), f);
  };
  auto rhs = [&](float (*value)(int64_t)) {
    NodeRef b = make(Op::RESHAPE, t, {filled("CPU", t, K * N, value)}, Shape{K, N});
    NodeRef bt = make(Op::RESHAPE, t, {make(Op::PERMUTE, t, {b}, Shape{1, 0})}, Shape{1, N, K});
    return cast(make(Op::EXPAND, t, {bt}, Shape{M, N, K}), f);
  };
  NodeRef body = lhs(a_value) * rhs(b_value) + lhs(c_value) * rhs(d_value);
  NodeRef sum = make(Op::RESHAPE, f, {make(Op::REDUCE_AXIS, f, {body}, ReduceArg{Op::ADD, {2}})}, Shape{M, N});
  return make(Op::SINK, dtypes::void_, {sum});
}

std::vector<double> two_products_reference(int64_t M, int64_t N, int64_t K) {
  std::vector<double> out(M * N, 0.0);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++)
      for (int64_t q = 0; q < K; q++)
        out[i * N + j] += double(a_value(i * K + q)) * b_value(q * N + j) + double(c_value(i * K + q)) * d_value(q * N + j);
  return out;
}

}  // namespace lg::tc_testing
