// Fusion as seen from the Tensor API: how many kernels the scheduler makes for common expressions
// over realized inputs (schedule/fusion.h states the rules), and that the fused result is right.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "base/config.h"
#include "codegen/heuristic.h"
#include "codegen/heuristic_gpu.h"
#include "codegen/opt.h"
#include "codegen/program.h"
#include "ir/graph.h"
#include "schedule/schedule.h"
#include "tensor/host_ref.h"
#include "tensor/tensor.h"

namespace lg {
namespace {

using namespace lg::ref;

// Kernels (not copies) the scheduler makes to realize t.
int64_t kernel_count(const Tensor& t) {
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {t.node()}));
  return std::count_if(s.items.begin(), s.items.end(),
                       [](const ScheduleItem& it) { return it.kind == ScheduleItem::Kind::Kernel; });
}

// A realized input buffer holding h's values.
Tensor realized(const HostArray& h) {
  return Tensor::from_doubles(h.data, h.shape, dtypes::float32).realize();
}

HostArray input(const Shape& shape, uint64_t seed, Fill fill = Fill::Signed) {
  return random_fill(shape, fill, dtypes::float32, seed);
}

void expect_values(const Tensor& got, const HostArray& want, double tol = 1e-5) {
  ASSERT_EQ(got.shape(), want.shape);
  std::vector<double> v = got.to_doubles();
  ASSERT_EQ(static_cast<int64_t>(v.size()), want.numel());
  for (size_t i = 0; i < v.size(); i++)
    EXPECT_NEAR(v[i], want.data[i], tol * (1 + std::abs(want.data[i]))) << "element " << i;
}

TEST(Fusion, MultiplyAddThenSumIsOneKernel) {
  HostArray a = input({4, 6}, 1), b = input({4, 6}, 2), c = input({4, 6}, 3);
  Tensor out = (realized(a) * realized(b) + realized(c)).sum(1);
  EXPECT_EQ(kernel_count(out), 1);
  expect_values(
      out, reduce(map3(a, b, c, [](double x, double y, double z) { return x * y + z; }), Reduce::Sum, {1}));
}

TEST(Fusion, SoftmaxOverLastAxisIsOneKernel) {
  HostArray x = input({4, 8}, 4);
  Tensor out = realized(x).softmax(-1);
  EXPECT_EQ(kernel_count(out), 1);
  expect_values(out, softmax(x, -1), 1e-4);
}

TEST(Fusion, ElementwiseChainOfTenOpsIsOneKernel) {
  HostArray x = input({3, 5}, 5, Fill::Positive);
  Tensor t = realized(x);
  Tensor out = ((((t * 2 + 1).exp().log() - 0.5).sqrt().neg().abs() * 3).sigmoid() + t).relu();
  EXPECT_EQ(kernel_count(out), 1);
  expect_values(out,
                map(x,
                    [](double v) {
                      double r = std::sqrt(std::log(std::exp(v * 2 + 1)) - 0.5);
                      return std::max(0.0, sigmoid(std::abs(-r) * 3) + v);
                    }),
                1e-4);
}

TEST(Fusion, MatmulOfRealizedMatricesIsOneKernel) {
  HostArray a = input({5, 7}, 6), b = input({7, 3}, 7);
  Tensor out = realized(a).matmul(realized(b));
  EXPECT_EQ(kernel_count(out), 1);
  expect_values(out, matmul(a, b));
}

TEST(Fusion, MatmulByAWideMatrixPacksItIntoPanelsFirst) {
  // (64, 96) @ (96, 64): b is copied as (64/32, 96, 32) column panels (one kernel), then the product
  // reads the panels (a second); plain and transposed b give the same values.
  HostArray a = input({64, 96}, 9), b = input({96, 64}, 10);
  Tensor out = realized(a).matmul(realized(b));
  EXPECT_EQ(kernel_count(out), 2);
  expect_values(out, matmul(a, b), 1e-4);
  Tensor bt = realized(transpose(b));
  expect_values(realized(a).matmul(bt.transpose()), matmul(a, b), 1e-4);
}

TEST(Fusion, AWidenedHalfValueIsStoredInHalfPrecision) {
  // w = float32(bf16(x * y + z)) read by two kernels: realized (3 inputs, 2 users), but as the bf16
  // value, widened where it is read (schedule/fusion.h). Small integers: every value exact.
  HostArray x = random_fill({4, 64}, Fill::SmallInt, dtypes::float32, 11), y = random_fill({4, 64}, Fill::SmallInt, dtypes::float32, 12),
            z = random_fill({4, 64}, Fill::SmallInt, dtypes::float32, 13);
  Tensor w = (realized(x) * realized(y) + realized(z)).cast(dtypes::bfloat16).cast(dtypes::float32);
  Tensor rows = w.sum(1), twice = w.permute({1, 0}) * 2;
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {rows.node(), twice.node()}));
  std::string d = describe(s);
  // one kernel writes w as bf16 (its only 16-bit buffer), the sum and the doubled transpose read it
  ASSERT_EQ(s.items.size(), 3u) << d;
  std::vector<std::string> lines;
  for (size_t at = d.find("\n"); at != std::string::npos; at = d.find("\n", at + 1)) lines.push_back(d.substr(at + 1, d.find("\n", at + 1) - at - 1));
  ASSERT_GE(lines.size(), 3u) << d;
  auto out_part = [](const std::string& l) { return l.substr(0, l.find(" in ")); };
  EXPECT_NE(out_part(lines[0]).find("bf16[256]"), std::string::npos) << "w stored as bf16: " << d;
  for (int i : {1, 2}) EXPECT_NE(lines[i].substr(lines[i].find(" in ")).find("bf16[256]"), std::string::npos) << d;
  HostArray wx = map3(x, y, z, [](double a, double b, double c) { return a * b + c; });
  expect_values(rows, reduce(wx, Reduce::Sum, {1}));
  expect_values(twice, map(permute(wx, {1, 0}), [](double v) { return 2 * v; }));
}

TEST(Fusion, AHalfMatmulsResultReadByTwoKernelsIsStoredInHalfPrecision) {
  // r = bf16(a @ b) read as float32 by two kernels: the matmul's kernel stores the bf16 value (not
  // its float32 sum of products, twice the bytes), each reader widens it. Small integers: exact.
  HostArray a = random_fill({32, 64}, Fill::SmallInt, dtypes::float32, 18),
            b = random_fill({64, 48}, Fill::SmallInt, dtypes::float32, 19);
  auto half = [](const HostArray& h) { return realized(h).cast(dtypes::bfloat16).realize(); };
  Tensor r = half(a).matmul(half(b)).cast(dtypes::float32);
  Tensor rows = r.sum(1), twice = r * 2;
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {rows.node(), twice.node()}));
  std::string d = describe(s);
  ASSERT_EQ(s.items.size(), 3u) << d;
  std::string first = d.substr(d.find("\n") + 1);
  EXPECT_NE(first.substr(0, first.find(" in ")).find("bf16[1536]"), std::string::npos) << d;
  HostArray ab = matmul(a, b);
  expect_values(rows, reduce(round_to_dtype(ab, dtypes::bfloat16), Reduce::Sum, {1}), 1e-5);
  expect_values(twice, map(round_to_dtype(ab, dtypes::bfloat16), [](double v) { return 2 * v; }));
}

TEST(Fusion, ARowReductionReadByAScalarReductionHasItsOwnKernel) {
  // the sum over rows of each row's maximum: fused, one thread would walk all 64 x 512 elements;
  // the 64 row maxima get a kernel of their own (rows in parallel), the sum a second
  HostArray x = input({64, 512}, 14);
  Tensor out = realized(x).max(1).sum();
  EXPECT_EQ(kernel_count(out), 2);
  expect_values(out, reduce(reduce(x, Reduce::Max, {1}), Reduce::Sum, {0}), 1e-5);
  EXPECT_EQ(kernel_count(realized(x).sum(1) * 2), 1) << "a reduction read by an elementwise kernel still fuses";
}

TEST(Fusion, TwoHalfPrecisionMatmulsSummedAreTwoKernels) {
  // a @ b1 + a @ b2 in bf16: one matmul per kernel (codegen/tensor_core.h maps one), the sum fused
  // into the second; float32 matmuls still share one kernel
  HostArray a = random_fill({32, 64}, Fill::SmallInt, dtypes::float32, 15), b1 = random_fill({64, 48}, Fill::SmallInt, dtypes::float32, 16),
            b2 = random_fill({64, 48}, Fill::SmallInt, dtypes::float32, 17);
  auto half = [](const HostArray& h) { return realized(h).cast(dtypes::bfloat16).realize(); };
  Tensor out = half(a).matmul(half(b1)) + half(a).matmul(half(b2));
  EXPECT_EQ(kernel_count(out), 2);
  HostArray want = map3(matmul(a, b1), matmul(a, b2), matmul(a, b2), [](double p, double q, double) { return p + q; });
  expect_values(out.cast(dtypes::float32), want, 1e-2);
  EXPECT_EQ(kernel_count(realized(a).matmul(realized(b1)) + realized(a).matmul(realized(b2))), 1);
}

// A bf16 operand computed from float32 values (a normalization's output, a gradient) and re-laid-out
// (heads merged: (4, S, 16) -> (S, 64)) is realized as the matmul reads it, not recomputed for every
// output column inside the matmul: two kernels, and the matmul's operand is a plain load linear in
// its axes, so the CUDA heuristic gives it a block-tiled matmul (codegen/block_mma.h).
TEST(Fusion, AComputedHalfOperandOfAMatmulIsRealizedAsTheMatmulReadsIt) {
  const int64_t S = 64, H = 4, hd = 16, N = 64;
  HostArray xh = random_fill({H, S, hd}, Fill::SmallInt, dtypes::float32, 31), sh = random_fill({hd}, Fill::SmallInt, dtypes::float32, 32),
            wh = random_fill({N, H * hd}, Fill::SmallInt, dtypes::float32, 33);
  Tensor a = (realized(xh) * realized(sh)).cast(dtypes::bfloat16).permute({1, 0, 2}).reshape({1, S, H * hd});
  // w (1, N, 64): batched, so the CPU's panel copy of a 2-D weight (tensor/reduce.cpp) stays out
  Tensor w = realized(wh).cast(dtypes::bfloat16).reshape({1, N, H * hd}).realize();
  Tensor out = a.matmul(w.transpose(-1, -2)).reshape({S, N});
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {out.node()}));
  ASSERT_EQ(kernel_count(out), 2) << describe(s);
  const ScheduleItem& mm = s.items.back();
  std::vector<Opt> opts = gpu_heuristic_opts(mm.ast, true);
  ASSERT_FALSE(opts.empty());
  EXPECT_EQ(opts[0].kind, OptKind::BLOCK_MMA) << to_string(opts) << "\n" << describe(s);
  // out[i, j] = sum over h, d of x[h, i, d] * scale[d] * w[j, h * hd + d] (small integers: exact in bf16)
  HostArray want{{S, N}, std::vector<double>(S * N, 0.0)};
  for (int64_t i = 0; i < S; i++)
    for (int64_t j = 0; j < N; j++)
      for (int64_t h = 0; h < H; h++)
        for (int64_t d = 0; d < hd; d++)
          want.data[i * N + j] += xh.data[(h * S + i) * hd + d] * sh.data[d] * wh.data[j * H * hd + h * hd + d];
  expect_values(out.cast(dtypes::float32), want, 1e-2);
}

// The gradient of sum(probs @ v * w) with respect to v_src (1, S, KV * hd), v = v_src viewed as (1,
// KV, 1, S, hd) and broadcast over the rep query heads; probs (1, KV, rep, S, S), w (1, KV, rep, S,
// hd): dv[0, t, kv * hd + d] = sum over r, q of probs[0, kv, r, q, t] * w[0, kv, r, q, d].
HostArray value_gradient(const HostArray& probs, const HostArray& w) {
  const int64_t KV = w.shape[1], rep = w.shape[2], S = w.shape[3], hd = w.shape[4];
  HostArray dv{{1, S, KV * hd}, std::vector<double>(S * KV * hd, 0.0)};
  for (int64_t kv = 0; kv < KV; kv++)
    for (int64_t t = 0; t < S; t++)
      for (int64_t d = 0; d < hd; d++) {
        double sum = 0;
        for (int64_t r = 0; r < rep; r++)
          for (int64_t q = 0; q < S; q++)
            sum +=
                probs.data[(((kv * rep + r) * S + q) * S) + t] * w.data[(((kv * rep + r) * S + q) * hd) + d];
        dv.data[t * KV * hd + kv * hd + d] = sum;
      }
  return dv;
}

// Grouped-query attention: v (1, S, KV * hd) in bf16, viewed as (1, KV, 1, S, hd) and broadcast
// over the rep query heads of each kv head; out = probs @ v. The gradient of v sums over the rep
// heads and the queries; it is realized in its own axes (kv, key, d: the matmul's) and read through
// the permute below it, so tensor cores map its kernel (written straight into (1, S, KV * hd), kv
// and d would be one output axis both operands move along, which no tensor-core matmul maps).
TEST(Fusion, AGroupedAttentionsValueGradientIsATensorCoreMatmul) {
  const int64_t S = 32, KV = 2, rep = 2, hd = 16;
  HostArray vh = random_fill({1, S, KV * hd}, Fill::SmallInt, dtypes::float32, 21),
            ph = random_fill({1, KV, rep, S, S}, Fill::SmallInt, dtypes::float32, 22),
            wh = random_fill({1, KV, rep, S, hd}, Fill::SmallInt, dtypes::float32, 23);
  Tensor v_src = realized(vh).cast(dtypes::bfloat16).realize().requires_grad(true);
  Tensor probs = realized(ph).cast(dtypes::bfloat16).realize(), w = realized(wh);
  Tensor v = v_src.reshape({1, S, KV, 1, hd}).permute({0, 2, 3, 1, 4});
  Tensor loss = (probs.matmul(v).cast(dtypes::float32) * w).sum();
  Tensor g = Tensor::gradients(loss, {v_src})[0];
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {g.node()}));
  bool tensor_cores = false;
  for (const ScheduleItem& item : s.items)
    for (const Opt& o : gpu_heuristic_opts(item.ast, true)) tensor_cores = tensor_cores || o.kind == OptKind::TC;
  EXPECT_TRUE(tensor_cores) << describe(s);
  HostArray want = value_gradient(ph, wh);
  expect_values(g.cast(dtypes::float32), want, 1e-2);
}

// Rotated queries and keys in float32 (attention's rotary embedding: a half-swap by slices and a
// concatenation, times tables): each is realized before the score matmul, which then reads two
// buffers with vector loads; fused, the rotation would be recomputed per key (for q) and per query
// (for k) inside the reduction over the head dim, its slices indexed by comparisons.
TEST(Fusion, AComputedFloat32OperandOfAMatmulIsRealizedAsTheMatmulReadsIt) {
  const int64_t S = 32, hd = 32;
  HostArray qh = input({S, hd}, 41), kh = input({S, hd}, 42), ch = input({S, hd}, 43),
            sh = input({S, hd}, 44);
  Tensor c = realized(ch), sn = realized(sh);
  auto rotate = [&](const Tensor& x) {
    Tensor swapped = Tensor::cat({x.slice(-1, hd / 2, hd).neg(), x.slice(-1, 0, hd / 2)}, -1);
    return x * c + swapped * sn;
  };
  Tensor scores = rotate(realized(qh)).matmul(rotate(realized(kh)).transpose(0, 1));
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {scores.node()}));
  ASSERT_EQ(kernel_count(scores), 3) << describe(s);
  const ScheduleItem& mm = s.items.back();
  EXPECT_EQ(mm.buffers.size(), 3u) << describe(s);  // the scores, the rotated q and k
  std::vector<Opt> opts = cpu_heuristic_opts(mm.ast);
  ASSERT_FALSE(opts.empty());
  EXPECT_EQ(opts[0].kind, OptKind::UPCAST);
  EXPECT_EQ(opts[0].amount, 16) << to_string(opts);  // a vector of 16 lanes
  auto rotated = [&](const HostArray& x) {
    HostArray r = x;
    for (int64_t i = 0; i < S; i++)
      for (int64_t d = 0; d < hd; d++) {
        double swapped = d < hd / 2 ? -x.data[i * hd + d + hd / 2] : x.data[i * hd + d - hd / 2];
        r.data[i * hd + d] = x.data[i * hd + d] * ch.data[i * hd + d] + swapped * sh.data[i * hd + d];
      }
    return r;
  };
  expect_values(scores, matmul(rotated(qh), transpose(rotated(kh))), 1e-5);
}

// The float32 twin of the value gradient above, read by two kernels: the matmul computes it in
// the layout of v^T (kv, d, key) and its readers see it through the transpose and the heads'
// permute, as (1, S, KV * hd). It is stored as (1, key, kv, 1, d), the layout just before the
// merging reshape, so the readers load it linearly (stored in the matmul's own layout, they would
// read it with a stride of S along kv * hd, no vector lanes).
TEST(Fusion, AFloat32MatmulReadThroughAPermuteIsStoredAsItsReadersReadIt) {
  const int64_t S = 32, KV = 2, rep = 2, hd = 16;
  HostArray vh = input({1, S, KV * hd}, 51), ph = input({1, KV, rep, S, S}, 52),
            wh = input({1, KV, rep, S, hd}, 53);
  Tensor v_src = realized(vh).requires_grad(true);
  Tensor v = v_src.reshape({1, S, KV, 1, hd}).permute({0, 2, 3, 1, 4});
  Tensor loss = (realized(ph).matmul(v) * realized(wh)).sum();
  Tensor g = Tensor::gradients(loss, {v_src})[0];
  Tensor twice = g * 2.0, plus_one = g + 1.0;
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {twice.node(), plus_one.node()}));
  std::vector<std::string> reduce_kernels;
  for (const ScheduleItem& it : s.items)
    if (it.kind == ScheduleItem::Kind::Kernel && it.name.rfind("r_", 0) == 0)
      reduce_kernels.push_back(it.name);
  ASSERT_EQ(reduce_kernels.size(), 1u) << describe(s);
  EXPECT_EQ(reduce_kernels[0], "r_1_32_2_1_16__2_32")
      << describe(s);  // output (1, key, kv, 1, d); sums (rep, query)
  HostArray want = value_gradient(ph, wh);
  expect_values(twice, map(want, [](double x) { return 2 * x; }), 1e-5);
  expect_values(plus_one, map(want, [](double x) { return x + 1; }), 1e-5);
}

// Cross-entropy over a matmul's logits, with its gradient: the loss reads the logits in row kernels
// (maximum, sum of exponentials, the label's logit) and the gradient is one elementwise kernel over
// them, exp(x - max) * g / sum - (label == v ? g : 0): besides the logits only the gradient has their
// size (no exponentials or shifted logits are stored), and no kernel reduces a row of it.
TEST(Fusion, CrossEntropysGradientIsOneElementwiseKernelOverTheLogits) {
  // 64 rows of 96 scaled by g (a norm's weight): the matmul packs w^T into panels (256 x 96
  // elements) and realizes its product, whose kernel reads three inputs. The gradient is elementwise:
  // its own kernel with MULTI_OUTPUT=0; else an output of the row kernel over the logits
  // (schedule/multi_output.h), whose only REDUCEs are the row's maximum and sum.
  HostArray h = input({64, 96}, 7), g = input({96}, 9), w = input({256, 96}, 8);
  std::vector<int32_t> y(64);
  for (int32_t i = 0; i < 64; i++) y[i] = (i * 37 + 5) % 256;
  for (int on = 0; on < 2; on++) {
    config().multi_output = on == 1;
    Tensor ht = realized(h);
    ht.requires_grad(true);
    Tensor logits = (ht * realized(g)).matmul(realized(w).transpose(0, 1));
    Tensor loss = logits.cross_entropy(Tensor::from_vector<int32_t>(y, {64}), "sum");
    Tensor dh = Tensor::gradients(loss, {ht})[0];
    Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {loss.node(), dh.node()}));
    std::vector<int> wide_kernels_reductions;  // REDUCEs of each kernel with an output of 64 x 256
    for (const ScheduleItem& it : s.items) {
      if (it.kind != ScheduleItem::Kind::Kernel ||
          std::none_of(it.buffers.begin(), it.buffers.begin() + static_cast<std::ptrdiff_t>(it.outputs),
                       [](const NodeRef& b) { return b->get_arg<BufferArg>().size == 64 * 256; }))
        continue;
      auto ops = toposort(it.ast);
      wide_kernels_reductions.push_back(static_cast<int>(
          std::count_if(ops.begin(), ops.end(), [](const Node* n) { return n->op == Op::REDUCE; })));
    }
    // the logits' product (one REDUCE), then the gradient's kernel
    std::vector<int> want = on ? std::vector<int>{1, 2} : std::vector<int>{1, 0};
    EXPECT_EQ(wide_kernels_reductions, want) << describe(s);
    HostArray hg = map2(h, expand(g, {64, 96}), [](double a, double b) { return a * b; });
    HostArray x = matmul(hg, transpose(w)), labels = array({64}, std::vector<double>(y.begin(), y.end()));
    expect_values(loss, cross_entropy(x, labels, "sum", -100), 1e-5);
    HostArray dx = softmax(x, -1);
    for (int64_t i = 0; i < 64; i++) dx.data[i * 256 + y[i]] -= 1;
    expect_values(dh, map2(matmul(dx, w), expand(g, {64, 96}), [](double a, double b) { return a * b; }),
                  1e-4);
  }
  config().multi_output = true;
}

// Cross-entropy's loss reads each row of the logits twice (the maximum, the sum of exponentials):
// the label's logit is a gather, one element a row, not a third pass over the row.
TEST(Fusion, CrossEntropysLossReadsTheLogitsInTwoRowPasses) {
  const int64_t N = 8, V = 512;
  HostArray x = input({N, V}, 81);
  std::vector<int32_t> y(N);
  for (int32_t i = 0; i < N; i++) y[i] = (i * 97 + 3) % V;
  y[5] = -100;  // ignored
  Tensor xt = realized(x);
  Tensor loss = xt.cross_entropy(Tensor::from_vector<int32_t>(y, {N}), "sum");
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {loss.node()}));
  const Node* logits = view_base(xt.node().get());
  int row_passes = 0;  // REDUCEs over a row of V, in kernels that read the logits
  for (const ScheduleItem& it : s.items) {
    if (it.kind != ScheduleItem::Kind::Kernel ||
        std::none_of(it.buffers.begin() + 1, it.buffers.end(),
                     [&](const NodeRef& b) { return b.get() == logits; }))
      continue;
    for (const Node* n : toposort(it.ast))
      row_passes +=
          n->op == Op::REDUCE && std::any_of(n->src.begin() + 1, n->src.end(), [&](const NodeRef& r) {
            return r->op == Op::RANGE && r->src[0]->const_as_int() == V;
          });
  }
  EXPECT_EQ(row_passes, 2) << describe(s);
  HostArray labels = array({N}, std::vector<double>(y.begin(), y.end()));
  expect_values(loss, cross_entropy(x, labels, "sum", -100), 1e-5);
}

// The row maximum and the sum of exponentials that the loss and its gradient both read are one
// kernel of several outputs (schedule/multi_output.h), with what reads them row by row: the loss
// per row and the gradient of the logits (in a Llama step also the gradient's factor per row).
// The logits are read by that kernel alone: from memory once, by the maximum's loop, then from
// cache by the sum's and the gradient's. MULTI_OUTPUT=0 gives a kernel each (four read the
// logits) and the same bits.
TEST(Fusion, CrossEntropysRowMaximumAndSumOfExponentialsAreOneKernel) {
  const int64_t N = 8, V = 1000;  // not a multiple of the 16 lanes
  HostArray x = input({N, V}, 82);
  std::vector<int32_t> y(N);
  for (int32_t i = 0; i < N; i++) y[i] = (i * 97 + 3) % V;
  y[3] = -100;  // ignored: its loss and gradient are 0
  HostArray labels = array({N}, std::vector<double>(y.begin(), y.end()));
  std::vector<double> loss_bits[2], grad_bits[2];
  for (int on = 0; on < 2; on++) {
    config().multi_output = on == 1;
    Tensor xt = realized(x);
    xt.requires_grad(true);
    Tensor loss = xt.cross_entropy(Tensor::from_vector<int32_t>(y, {N}), "sum");
    Tensor dx = Tensor::gradients(loss, {xt})[0];
    Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {loss.node(), dx.node()}));
    const Node* logits = view_base(xt.node().get());
    std::vector<size_t> readers;  // outputs of each kernel that reads the logits
    for (const ScheduleItem& it : s.items)
      if (it.kind == ScheduleItem::Kind::Kernel &&
          std::any_of(it.buffers.begin() + static_cast<std::ptrdiff_t>(it.outputs), it.buffers.end(),
                      [&](const NodeRef& b) { return b.get() == logits; }))
        readers.push_back(it.outputs);
    std::vector<size_t> want = on ? std::vector<size_t>{4} : std::vector<size_t>{1, 1, 1, 1};
    EXPECT_EQ(readers, want) << describe(s);
    expect_values(loss, cross_entropy(x, labels, "sum", -100), 1e-5);
    loss_bits[on] = loss.to_doubles();
    grad_bits[on] = dx.to_doubles();
  }
  config().multi_output = true;
  EXPECT_EQ(loss_bits[0], loss_bits[1]);
  EXPECT_EQ(grad_bits[0], grad_bits[1]);
  HostArray want = softmax(x, -1);
  for (int64_t i = 0; i < N; i++)
    for (int64_t j = 0; j < V; j++)
      if (y[i] < 0)
        want.data[i * V + j] = 0;
      else if (j == y[i])
        want.data[i * V + j] -= 1;
  HostArray got = array({N, V}, grad_bits[1]);
  for (int64_t i = 0; i < N * V; i++) ASSERT_NEAR(got.data[i], want.data[i], 1e-6) << i;
}

// The CPU heuristic gives each of that kernel's two reductions its own vectors (16 lanes times 4
// partial sums), as a row kernel's, and the row's elements one vector (the gradient's stores, the
// row values' stores not counting: they are outside that loop): with only the last reduction
// vectorized, the maximum was a scalar loop over the row; with the row values' stores counted, the
// gradient was scalar. The row values are stored once per row, in the row loop (codegen/linearize.h),
// the gradient inside the loop over the row's elements.
TEST(Fusion, TheRowMaximumAndSumKernelVectorizesBothReductions) {
  const int64_t N = 8, V = 1024;
  Tensor xt = realized(input({N, V}, 83));
  xt.requires_grad(true);
  std::vector<int32_t> y(N, 7);
  Tensor loss = xt.cross_entropy(Tensor::from_vector<int32_t>(y, {N}), "sum");
  Tensor dx = Tensor::gradients(loss, {xt})[0];
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {loss.node(), dx.node()}));
  int found = 0;
  for (const ScheduleItem& it : s.items) {
    if (it.kind != ScheduleItem::Kind::Kernel || it.outputs != 4) continue;
    found++;
    std::vector<Opt> opts = cpu_heuristic_opts(it.ast);
    EXPECT_EQ(to_string(opts), "[UPCAST(2,16), UPCAST(2,4), UPCAST(3,16), UPCAST(3,4), UPCAST(1,16)]")
        << it.name;
    LinearProgram prog = lower_kernel(it.ast, it.name, opts, 16);
    std::map<int64_t, std::set<int>> depths;  // output slot -> loop depths of its STOREs
    int depth = 0;
    for (const NodeRef& op : prog.ops) {
      if (op->op == Op::RANGE) depth++;
      if (op->op == Op::END) depth--;
      if (op->op == Op::STORE) depths[op->src[0]->src[0]->get_arg<int64_t>()].insert(depth);
    }
    for (int64_t slot = 0; slot < 4; slot++) {
      bool wide = it.buffers[static_cast<size_t>(slot)]->get_arg<BufferArg>().size == N * V;
      EXPECT_EQ(depths[slot], std::set<int>{wide ? 2 : 1}) << "slot " << slot << "\n" << to_string(prog);
    }
  }
  EXPECT_EQ(found, 1) << describe(s);
}

// The input gradient of x @ w^T on the CPU, whose forward product reads w packed into panels
// (tensor/reduce.cpp): the gradient's product reads w as stored, (256, 96) row-major, contiguous
// along its output axis (one vector of 16 lanes along it, as an NN matmul), and needs no panel
// copy. Through the panels (256/32, 96, 32) it could only take vector lanes along the summed axis.
TEST(Fusion, AMatmulsInputGradientReadsTheWeightAsStoredNotItsPanels) {
  HostArray h = input({64, 96}, 71), w = input({256, 96}, 72), r = input({64, 256}, 73);
  Tensor ht = realized(h);
  ht.requires_grad(true);
  Tensor wt = realized(w);
  Tensor loss = (ht.matmul(wt.transpose(0, 1)) * realized(r)).sum();
  Tensor dh = Tensor::gradients(loss, {ht})[0];
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {dh.node()}));
  for (const ScheduleItem& it : s.items)  // no panel copy of w
    EXPECT_NE(it.buffers[0]->get_arg<BufferArg>().size, 256 * 96) << describe(s);
  const ScheduleItem& mm = s.items.back();
  const Node* w_buffer = view_base(wt.node().get());
  ASSERT_NE(w_buffer, nullptr);
  EXPECT_NE(std::find_if(mm.buffers.begin(), mm.buffers.end(),
                         [&](const NodeRef& b) { return b.get() == w_buffer; }),
            mm.buffers.end())
      << describe(s);
  std::vector<Opt> opts = cpu_heuristic_opts(mm.ast);
  ASSERT_FALSE(opts.empty());
  EXPECT_EQ(opts[0].kind, OptKind::UPCAST);
  EXPECT_EQ(opts[0].amount, 16) << to_string(opts);
  EXPECT_EQ(kernel_axes(mm.ast)[opts[0].axis]->get_arg<RangeArg>().type, AxisType::LOOP) << to_string(opts);
  expect_values(dh, matmul(r, w), 1e-5);
}

// In bfloat16 the weight is widened by a cast for the product, and its gradient product keeps
// reading the panels (tensor/gradient.cpp stored_operand: both operands widen 16 lanes at a time).
TEST(Fusion, ABfloat16MatmulsInputGradientReadsThePanels) {
  HostArray h = input({64, 96}, 74), w = input({256, 96}, 75), r = input({64, 256}, 76);
  Tensor ht = realized(h).cast(dtypes::bfloat16).realize();
  ht.requires_grad(true);
  Tensor wt = realized(w).cast(dtypes::bfloat16).realize();
  Tensor loss = (ht.matmul(wt.transpose(0, 1)).cast(dtypes::float32) * realized(r)).sum();
  Tensor dh = Tensor::gradients(loss, {ht})[0];
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {dh.node()}));
  const Node* w_buffer = view_base(wt.node().get());
  ASSERT_NE(w_buffer, nullptr);
  int panel_copies = 0;
  for (const ScheduleItem& it : s.items) {
    bool reads_w = std::any_of(it.buffers.begin() + 1, it.buffers.end(),
                               [&](const NodeRef& b) { return b.get() == w_buffer; });
    if (!reads_w) continue;
    EXPECT_EQ(it.buffers[0]->get_arg<BufferArg>().size, 256 * 96) << describe(s);  // only the copy reads w
    panel_copies++;
  }
  EXPECT_EQ(panel_copies, 1) << describe(s);
}

// Two float32 matmuls into one output (a weight gradient summed over two loss chunks): one kernel,
// whose reduction accumulates both products per step (two FMAs, codegen/fuse_mulacc.h), with the
// reference's values.
TEST(Fusion, TwoFloat32MatmulsSummedAreOneKernelWithTheReferenceValues) {
  HostArray a = input({48, 64}, 61), b = input({64, 80}, 62), c = input({48, 64}, 63),
            d = input({64, 80}, 64);
  Tensor out = realized(a).matmul(realized(b)) + realized(c).matmul(realized(d));
  EXPECT_EQ(kernel_count(out), 1);
  HostArray want = map2(matmul(a, b), matmul(c, d), [](double x, double y) { return x + y; });
  expect_values(out, want, 1e-5);
}

TEST(Fusion, ReduceFusesIntoTheFollowingElementwise) {
  HostArray x = input({4, 6}, 8);
  Tensor out = realized(x).sum(1) * 2;
  EXPECT_EQ(kernel_count(out), 1);
  expect_values(out, map(reduce(x, Reduce::Sum, {1}), [](double v) { return v * 2; }));
}

TEST(Fusion, ViewOfRealizedBufferNeedsNoKernel) {
  HostArray x = input({3, 4, 5}, 9);
  Tensor view = realized(x).permute({2, 0, 1});
  EXPECT_EQ(kernel_count(view), 0);
  expect_values(view, permute(x, {2, 0, 1}));
}

TEST(Fusion, ContiguousOfViewIsOneKernel) {
  HostArray x = input({3, 4, 5}, 10);
  Tensor copy = realized(x).permute({2, 0, 1}).contiguous();
  EXPECT_EQ(kernel_count(copy), 1);
  expect_values(copy, permute(x, {2, 0, 1}));
}

}  // namespace
}  // namespace lg
