// The CPU renderer's vector width turns the heuristic's UPCASTs into vector values: matmul tiles
// into vector loads and fused multiply-adds, partial sums combined lane by lane, row reductions,
// bfloat16 arithmetic and masks as vector code. Each is checked against the interpreter's values
// (bit for bit where the operations are exact).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "codegen/heuristic.h"
#include "codegen/program.h"
#include "codegen/render_c.h"
#include "ir/build.h"
#include "ir/dtype.h"
#include "runtime/buffer.h"
#include "runtime/kernel_graph_util.h"
#include "runtime/realize.h"
#include "schedule/schedule.h"

namespace lg {
namespace {

using namespace graph_testing;

// The CPU renderer's vector width turns the heuristic's first UPCAST into vector values.
std::vector<const Node*> ops_of(const LinearProgram& p, Op op) {
  std::vector<const Node*> out;
  for (const NodeRef& n : p.ops)
    if (n->op == op) out.push_back(n.get());
  return out;
}

TEST(Vectorize, TheHeuristicTileOfAMatmulBecomesVectorLoadsAndFmas) {
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {matmul("INTERP", Layout::NN, 64, 48, 64)}));
  const ScheduleItem& item = only_item(s);
  LinearProgram p = lower_kernel(item.ast, item.name, cpu_heuristic_opts(item.ast), 16);
  int vector_fmas = 0;
  for (const Node* n : ops_of(p, Op::MULACC)) vector_fmas += n->dtype.count == 16;
  EXPECT_EQ(vector_fmas, 16);  // 2 vectors x 8 rows
  for (const Node* n : ops_of(p, Op::LOAD))
    EXPECT_TRUE(n->dtype.count == 16 || n->src[0]->src[0]->get_arg<int64_t>() == 1);
  EXPECT_EQ(ops_of(p, Op::VECTORIZE).size(), 8u);  // a(n, k) broadcast, once per row
  EXPECT_TRUE(lower_kernel(item.ast, item.name, cpu_heuristic_opts(item.ast), 0).ops.size() > p.ops.size());
}

TEST(Vectorize, PartialSumsAlongTheReductionAreCombinedLaneByLane) {
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {matmul("INTERP", Layout::NT, 64, 48, 32)}));
  const ScheduleItem& item = only_item(s);
  LinearProgram p = lower_kernel(item.ast, item.name, cpu_heuristic_opts(item.ast), 16);
  EXPECT_EQ(ops_of(p, Op::GEP).size(), 16u * 16u);  // 16 lanes of each of the 4 x 4 outputs
}

TEST(Vectorize, Bfloat16MatmulOnCpuEqualsTheInterpreterExactly) {
  // bf16 operands and output: vector loads convert, the f32 accumulators round once at the store.
  auto bf16 = [](const NodeRef& x) { return make(Op::CAST, dtypes::bfloat16, {x}); };
  auto f32 = [](const NodeRef& x) { return make(Op::CAST, dtypes::float32, {x}); };
  auto run_bytes = [&](const std::string& dev) {
    NodeRef a = make(Op::CONTIGUOUS, dtypes::bfloat16, {bf16(input(dev, {32, 48}, 0.37f))});
    NodeRef b = make(Op::CONTIGUOUS, dtypes::bfloat16, {bf16(input(dev, {48, 64}, 0.21f))});
    NodeRef out = bf16(matmul_nt(f32(a), f32(permute(b, {1, 0}))));
    NodeRef buf = realize(make(Op::SINK, dtypes::void_, {out}))[0];
    const Node* base = buf->op == Op::BUFFER ? buf.get() : buf->src[0].get();
    std::vector<uint16_t> bits(buf->numel());
    buffer_copy_out(*base, bits.data(), bits.size() * 2);
    return bits;
  };
  EXPECT_EQ(run_bytes("CPU"), run_bytes("INTERP"));
}

TEST(Vectorize, EmbeddingStyleSelectSumsOnCpuEqualTheInterpreter) {
  // out (16, 32) = sum_v where(ids[i] == v, w[v, j], 0): the condition is shared by the lanes of j.
  auto embed = [](const std::string& dev) {
    NodeRef ids = make(Op::CAST, dtypes::int32, {input(dev, {16}, 1)});  // values in [-5, 5]
    NodeRef w = input(dev, {8, 32}, 0.5f);
    NodeRef v = make(Op::IOTA, dtypes::int32, {device_node(dev)}, int64_t{8});
    NodeRef hit = make(Op::CMPEQ, dtypes::boolean,
                       {make(Op::EXPAND, dtypes::int32,
                             {make(Op::RESHAPE, dtypes::int32, {ids}, Shape{16, 1, 1})}, Shape{16, 8, 32}),
                        make(Op::EXPAND, dtypes::int32,
                             {make(Op::RESHAPE, dtypes::int32, {v}, Shape{1, 8, 1})}, Shape{16, 8, 32})});
    NodeRef wx = make(Op::EXPAND, dtypes::float32, {make(Op::RESHAPE, dtypes::float32, {w}, Shape{1, 8, 32})},
                      Shape{16, 8, 32});
    NodeRef zero = make(Op::EXPAND, dtypes::float32,
                        {make(Op::RESHAPE, dtypes::float32,
                              {make(Op::CONST, dtypes::float32, {device_node(dev)}, 0.0)}, Shape{1, 1, 1})},
                        Shape{16, 8, 32});
    return make(Op::REDUCE_AXIS, dtypes::float32, {make(Op::WHERE, dtypes::float32, {hit, wx, zero})},
                ReduceArg{Op::ADD, {1}});
  };
  expect_close(run(embed("CPU")), run(embed("INTERP")));
}

// Ops of the vector lanes (16) in the kernel of `root` as the CPU heuristic and renderer lower it.
int vector_ops(const NodeRef& root, Op op) {
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {root}));
  const ScheduleItem& item = s.items.back();
  int n = 0;
  for (const NodeRef& x : lower_kernel(item.ast, item.name, cpu_heuristic_opts(item.ast), 16).ops)
    n += x->op == op && x->dtype.count == 16;
  return n;
}

// Cross-entropy's one-hot pick: where(label(n) == v, x(n, v), 0), stored per element (its
// gradient) or summed over v (the loss). The label against the column index is a mask of lanes (the
// index at lane 0 plus the lane numbers, int32), so both are vector code, with the interpreter's
// bits; so is a comparison of two float32 values.
TEST(Vectorize, ALabelComparedWithTheColumnIndexBecomesALaneMask) {
  auto pick = [](const std::string& dev, bool sum) {
    std::vector<int32_t> host{3, 0, 17, 255, 16, 31, -100, 128};
    NodeRef labels = new_buffer(device_node(dev), dtypes::int32, 8);
    buffer_copy_in(*labels, host.data(), host.size() * 4);
    auto wide = [](const NodeRef& x, const Shape& s) {
      return make(Op::EXPAND, x->dtype, {make(Op::RESHAPE, x->dtype, {x}, s)}, Shape{8, 256});
    };
    NodeRef column = make(Op::IOTA, dtypes::int32, {device_node(dev)}, int64_t{256});
    NodeRef hit = make(Op::CMPEQ, dtypes::boolean, {wide(labels, {8, 1}), wide(column, {1, 256})});
    NodeRef zero = wide(make(Op::CONST, dtypes::float32, {device_node(dev)}, 0.0), {1, 1});
    NodeRef picked = make(Op::WHERE, dtypes::float32, {hit, input(dev, {8, 256}, 0.5f), zero});
    return sum ? make(Op::REDUCE_AXIS, dtypes::float32, {picked}, ReduceArg{Op::ADD, {1}}) : picked;
  };
  auto lesser = [](const std::string& dev) {
    NodeRef x = input(dev, {4, 64}, 0.5f), y = input(dev, {4, 64}, -0.25f);
    return make(Op::WHERE, dtypes::float32, {make(Op::CMPLT, dtypes::boolean, {x, y}), x, y});
  };
  for (bool sum : {false, true}) {
    EXPECT_GT(vector_ops(pick("INTERP", sum), Op::CMPEQ), 0) << sum;
    EXPECT_GT(vector_ops(pick("INTERP", sum), Op::WHERE), 0) << sum;
    EXPECT_EQ(run(pick("CPU", sum)), run(pick("INTERP", sum))) << sum;
  }
  std::vector<float> picked = run(pick("CPU", true));
  EXPECT_EQ(picked[0], 0.5f * static_cast<float>((3 * 7) % 11 - 5));  // row 0, column 3
  EXPECT_EQ(picked[6], 0.0f);                                         // label -100: no column
  EXPECT_GT(vector_ops(lesser("INTERP"), Op::CMPLT), 0);
  EXPECT_EQ(run(lesser("CPU")), run(lesser("INTERP")));
}

TEST(Vectorize, RowMaxesAndReciprocalRowSumsBecomeVectorCodeAndEqualTheInterpreter) {
  // (8, 256) rows; row 3 holds a NaN, which the max propagates (as lg_maxf and the interpreter do).
  auto rows = [](const std::string& dev) {
    std::vector<float> host(8 * 256);
    for (size_t i = 0; i < host.size(); i++) host[i] = 0.5f * static_cast<float>((i * 7) % 11 - 5);
    host[3 * 256 + 17] = std::nanf("");
    NodeRef b = new_buffer(device_node(dev), dtypes::float32, 8 * 256);
    buffer_copy_in(*b, host.data(), host.size() * 4);
    return make(Op::RESHAPE, dtypes::float32, {b}, Shape{8, 256});
  };
  auto row_max = [&](const std::string& dev) {
    return make(Op::REDUCE_AXIS, dtypes::float32, {rows(dev)}, ReduceArg{Op::MAX, {1}});
  };
  auto inv_sum = [&](const std::string& dev) {
    return make(
        Op::RECIPROCAL, dtypes::float32,
        {make(Op::REDUCE_AXIS, dtypes::float32, {input(dev, {8, 256}, 0.5f)}, ReduceArg{Op::ADD, {1}})});
  };
  for (const auto& f : {std::function<NodeRef(const std::string&)>(row_max),
                        std::function<NodeRef(const std::string&)>(inv_sum)}) {
    Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {f("INTERP")}));
    const ScheduleItem& item = s.items.back();
    int vector_ops = 0;
    for (const NodeRef& n : lower_kernel(item.ast, item.name, cpu_heuristic_opts(item.ast), 16).ops)
      vector_ops += n->dtype.count == 16;
    EXPECT_GT(vector_ops, 0) << item.name;
    std::vector<float> got = run(f("CPU")), want = run(f("INTERP"));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) {
      if (std::isnan(want[i]))
        EXPECT_TRUE(std::isnan(got[i])) << i;
      else
        EXPECT_EQ(got[i], want[i]) << i;
    }
  }
  EXPECT_TRUE(std::isnan(run(row_max("CPU"))[3]));
}

// got has want's bits, element for element (any NaN for a NaN).
void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) {
    uint32_t g, w;
    std::memcpy(&g, &got[i], 4), std::memcpy(&w, &want[i], 4);
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << i;
    else
      EXPECT_EQ(g, w) << i << ": " << got[i] << " vs " << want[i];
  }
}

// An elementwise kernel of square roots and reciprocals (an optimizer's m / (sqrt(v) + eps)):
// vector lanes, each correctly rounded, so the bits equal the interpreter's, zeros, negatives (NaN),
// infinities and denormals included.
TEST(Vectorize, SquareRootsAndReciprocalsBecomeVectorCodeWithTheInterpretersBits) {
  auto x = [](const std::string& dev) {
    std::vector<float> host(1024);
    for (size_t i = 0; i < host.size(); i++) host[i] = 0.37f * static_cast<float>(i) - 17.0f;
    host[5] = 0.0f, host[6] = -0.0f, host[7] = INFINITY, host[8] = -2.0f, host[9] = 1e-40f,
    host[10] = std::nanf("");
    NodeRef b = new_buffer(device_node(dev), dtypes::float32, 1024);
    buffer_copy_in(*b, host.data(), host.size() * 4);
    return b;
  };
  auto f = [&](const std::string& dev) {
    NodeRef v = x(dev);
    NodeRef eps = make(Op::EXPAND, dtypes::float32,
                       {make(Op::RESHAPE, dtypes::float32,
                             {make(Op::CONST, dtypes::float32, {device_node(dev)}, 1e-8)}, Shape{1})},
                       Shape{1024});
    return v * make(Op::RECIPROCAL, dtypes::float32, {make(Op::SQRT, dtypes::float32, {v}) + eps});
  };
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {f("INTERP")}));
  const ScheduleItem& item = only_item(s);
  int vector_roots = 0, vector_reciprocals = 0;
  for (const NodeRef& n : lower_kernel(item.ast, item.name, cpu_heuristic_opts(item.ast), 16).ops) {
    vector_roots += n->op == Op::SQRT && n->dtype.count == 16;
    vector_reciprocals += n->op == Op::RECIPROCAL && n->dtype.count == 16;
  }
  EXPECT_GT(vector_roots, 0);
  EXPECT_GT(vector_reciprocals, 0);
  expect_same_bits(run(f("CPU")), run(f("INTERP")));
}

// A bfloat16 elementwise chain (SwiGLU's silu times a gate, as a bf16 step computes it: every op
// rounded to bfloat16): vector lanes held in float32, each result rounded per lane where the scalar
// op rounds, so the bits equal the interpreter's, zeros, infinities, NaN and denormals included.
TEST(Vectorize, Bfloat16ArithmeticBecomesVectorCodeWithTheInterpretersBits) {
  auto x = [](const std::string& dev, float scale) {
    std::vector<float> host(1024);
    for (size_t i = 0; i < host.size(); i++) host[i] = scale * (0.37f * static_cast<float>(i) - 170.0f);
    host[5] = 0.0f, host[6] = -0.0f, host[7] = INFINITY, host[8] = -INFINITY, host[9] = 1e-40f,
    host[10] = std::nanf("");
    NodeRef b = new_buffer(device_node(dev), dtypes::float32, 1024);
    buffer_copy_in(*b, host.data(), host.size() * 4);
    return make(Op::CAST, dtypes::bfloat16, {b});
  };
  auto f = [&](const std::string& dev) {
    NodeRef a = x(dev, 0.05f), gate = x(dev, -0.013f);
    auto splat = [&](double v) {
      NodeRef c = make(Op::CONST, dtypes::bfloat16, {device_node(dev)}, v);
      return make(Op::EXPAND, dtypes::bfloat16, {make(Op::RESHAPE, dtypes::bfloat16, {c}, Shape{1})},
                  Shape{1024});
    };
    NodeRef e = make(Op::EXP2, dtypes::bfloat16, {make(Op::NEG, dtypes::bfloat16, {a}) * splat(1.4453125)});
    NodeRef silu = a * make(Op::RECIPROCAL, dtypes::bfloat16, {e + splat(1.0)});
    NodeRef root = make(Op::SQRT, dtypes::bfloat16, {make(Op::MAX, dtypes::bfloat16, {gate, splat(0.0)})});
    return make(Op::CAST, dtypes::float32, {silu * gate + root});
  };
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {f("INTERP")}));
  const ScheduleItem& item = only_item(s);
  int vector_bf16 = 0, scalar_bf16 = 0;
  for (const NodeRef& n : lower_kernel(item.ast, item.name, cpu_heuristic_opts(item.ast), 16).ops) {
    if (!is_alu(n->op) || n->dtype.scalar != Scalar::BFloat16) continue;
    (n->dtype.count == 16 ? vector_bf16 : scalar_bf16)++;
  }
  EXPECT_GT(vector_bf16, 0);
  EXPECT_EQ(scalar_bf16, 0);
  expect_same_bits(run(f("CPU")), run(f("INTERP")));
}

}  // namespace
}  // namespace lg
