// Tensor::flash_attention (FLASH_ATTENTION, ir/attention.h): its values and gradients against
// attention built from matmul and softmax, on every device the tensor tests run on (INTERP: the
// op's definition; CPU: the C kernels; CUDACHECK: the CUDA schedule as C, the CUDA source through
// NVRTC), the log-sum-exp it also returns, the memory it saves, and its errors.
#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "host_ref.h"
#include "ir/attention.h"
#include "ir/build.h"
#include "schedule/schedule.h"
#include "tensor/tensor.h"

namespace lg {
namespace {

constexpr DType F32 = dtypes::float32;

struct Case {
  int64_t B, H, KV, S, T, D;
  bool causal;
  DType t = F32;
};

std::string label(const Case& c) {
  return str(name(c.t), " B", c.B, " H", c.H, " KV", c.KV, " S", c.S, " T", c.T, " D", c.D, c.causal ? " causal" : "");
}

Tensor input(const Shape& s, DType t, uint64_t seed) {
  Tensor x = Tensor::from_doubles(ref::random_fill(s, ref::Fill::Signed, F32, seed).data, s, F32);
  return (t == F32 ? x : x.cast(t)).realize();
}

struct Inputs {
  Tensor q, k, v;
};
Inputs inputs(const Case& c) {
  return {input({c.B, c.H, c.S, c.D}, c.t, 1), input({c.B, c.KV, c.T, c.D}, c.t, 2), input({c.B, c.KV, c.T, c.D}, c.t, 3)};
}

// The scaled, masked scores (B, H, S, T) in float32: kv heads repeated for their query heads.
Tensor scores(const Case& c, const Inputs& in) {
  int64_t rep = c.H / c.KV;
  Tensor k = in.k.cast(F32).reshape({c.B, c.KV, 1, c.T, c.D}).expand({c.B, c.KV, rep, c.T, c.D}).reshape({c.B, c.H, c.T, c.D});
  Tensor x = in.q.cast(F32).matmul(k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(c.D)));
  if (!c.causal) return x;
  Tensor s = Tensor::arange(0, c.S, 1, dtypes::int32, x.device()).unsqueeze(1);
  Tensor t = Tensor::arange(0, c.T, 1, dtypes::int32, x.device()).unsqueeze(0);
  return s.lt(t).where(x.scalar_like(-INFINITY).expand(x.shape()), x);
}

Tensor composite(const Case& c, const Inputs& in) {
  int64_t rep = c.H / c.KV;
  Tensor v = in.v.cast(F32).reshape({c.B, c.KV, 1, c.T, c.D}).expand({c.B, c.KV, rep, c.T, c.D}).reshape({c.B, c.H, c.T, c.D});
  return scores(c, in).softmax(-1).matmul(v);
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 8; i++)
    if (!(std::abs(got[i] - want[i]) <= tol * (1.0 + std::abs(want[i])))) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", want " << want[i];
      bad++;
    }
}

const Case kCases[] = {
    {1, 2, 2, 13, 13, 16, false},  // rows not a multiple of the kernels' 8
    {2, 4, 2, 20, 20, 16, true},   // grouped queries, causal
    {1, 4, 1, 9, 37, 8, false},    // more keys than queries, one kv head, keys past one 32-key tile
    {1, 2, 1, 40, 40, 32, true},   // causal over two key tiles
};

TEST(FlashAttention, OutputMatchesMatmulAndSoftmax) {
  for (const Case& c : kCases) {
    Inputs in = inputs(c);
    Tensor out = in.q.flash_attention(in.k, in.v, c.causal);
    ASSERT_EQ(out.shape(), (Shape{c.B, c.H, c.S, c.D})) << label(c);
    ASSERT_EQ(out.dtype(), c.t);
    expect_close(out.to_doubles(), composite(c, in).to_doubles(), 2e-6, label(c));
  }
}

TEST(FlashAttention, Bfloat16InputsGiveTheFloat32ResultRounded) {
  Case c{1, 4, 2, 24, 24, 32, true, dtypes::bfloat16};
  Inputs in = inputs(c);
  Tensor out = in.q.flash_attention(in.k, in.v, c.causal);
  ASSERT_EQ(out.dtype(), dtypes::bfloat16);
  expect_close(out.cast(F32).to_doubles(), composite(c, in).to_doubles(), 1.0 / 128, label(c));
}

TEST(FlashAttention, GradientsMatchMatmulAndSoftmax) {
  for (const Case& c : {kCases[1], kCases[2]}) {  // grouped and causal; more keys than queries
    Inputs in = inputs(c);
    Tensor w = input({c.B, c.H, c.S, c.D}, F32, 4);
    std::vector<Tensor> wrt{in.q, in.k, in.v};
    std::vector<Tensor> got = Tensor::gradients((in.q.flash_attention(in.k, in.v, c.causal) * w).sum(), wrt);
    std::vector<Tensor> want = Tensor::gradients((composite(c, in) * w).sum(), wrt);
    const char* names[] = {"dq", "dk", "dv"};
    for (size_t i = 0; i < 3; i++) {
      ASSERT_EQ(got[i].shape(), wrt[i].shape());
      expect_close(got[i].to_doubles(), want[i].to_doubles(), 1e-5, label(c) + " " + names[i]);
    }
  }
}

TEST(FlashAttention, Bfloat16GradientsAreCloseToFloat32Ones) {
  Case c{1, 4, 2, 16, 16, 16, true, dtypes::bfloat16};
  Inputs in = inputs(c);
  Tensor w = input({c.B, c.H, c.S, c.D}, F32, 4);
  std::vector<Tensor> got = Tensor::gradients((in.q.flash_attention(in.k, in.v, c.causal).cast(F32) * w).sum(), {in.q, in.k, in.v});
  std::vector<Tensor> want = Tensor::gradients((composite(c, in) * w).sum(), {in.q, in.k, in.v});
  for (size_t i = 0; i < 3; i++) {
    ASSERT_EQ(got[i].dtype(), dtypes::bfloat16);
    // dO is rounded to bf16 before the kernels; each gradient is rounded to bf16 after
    expect_close(got[i].cast(F32).to_doubles(), want[i].to_doubles(), 2.0 / 128, label(c));
  }
}

// The op's last column is the row's log-sum-exp; a loss that reads it gets its gradient too (the
// rule folds dL into delta).
TEST(FlashAttention, LogSumExpColumnAndItsGradient) {
  Case c{1, 4, 2, 12, 12, 8, true};
  Inputs in = inputs(c);
  Tensor both(make(Op::FLASH_ATTENTION, F32, {in.q.node(), in.k.node(), in.v.node()}, kAttentionCausal));
  ASSERT_EQ(both.shape(), (Shape{c.B, c.H, c.S, c.D + 1}));
  Tensor lse = scores(c, in).logsumexp(-1, true);
  expect_close(both.slice(-1, c.D, c.D + 1).to_doubles(), lse.to_doubles(), 2e-6, "log-sum-exp");
  Tensor w = input({c.B, c.H, c.S, c.D + 1}, F32, 5);
  std::vector<Tensor> got = Tensor::gradients((both * w).sum(), {in.q, in.k, in.v});
  Tensor want_loss = (composite(c, in) * w.slice(-1, 0, c.D)).sum() + (lse * w.slice(-1, c.D, c.D + 1)).sum();
  std::vector<Tensor> want = Tensor::gradients(want_loss, {in.q, in.k, in.v});
  for (size_t i = 0; i < 3; i++) expect_close(got[i].to_doubles(), want[i].to_doubles(), 1e-5, str("source ", i));
}

// Forward and backward in one schedule store nothing of the scores' size (B, H, S, T): the
// composite attention stores several.
TEST(FlashAttention, NoBufferOfTheScoresSize) {
  Case c{1, 2, 2, 128, 128, 8, true};
  Inputs in = inputs(c);
  Tensor w = input({c.B, c.H, c.S, c.D}, F32, 4);
  auto largest = [&](const Tensor& out) {
    std::vector<Tensor> g = Tensor::gradients((out * w).sum(), {in.q, in.k, in.v});
    Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {g[0].node(), g[1].node(), g[2].node()}));
    int64_t most = 0;
    for (const ScheduleItem& item : s.items) most = std::max(most, item.buffers[0]->numel());
    return most;
  };
  int64_t scores_size = c.B * c.H * c.S * c.T;
  EXPECT_LT(largest(in.q.flash_attention(in.k, in.v, c.causal)), scores_size / 4);
  EXPECT_GE(largest(composite(c, in)), scores_size);
}

// A source that an assign wrote into a run of a larger buffer is read in place (its slot pointer
// moved to the run) when the run starts at a 64-byte boundary; elsewhere it is a user error that
// says to read it through .contiguous(), which works.
TEST(FlashAttention, ReadsASourceThatAnAssignWroteIntoARunOfABuffer) {
  Case c{1, 2, 1, 8, 8, 16, false};
  Inputs in = inputs(c);
  int64_t n = c.B * c.KV * c.T * c.D;  // 128 float32: 512 bytes
  Tensor want = composite(c, in);
  for (int64_t at : {n, int64_t{3}}) {
    Tensor flat = Tensor::zeros({at + n}, F32).contiguous().realize();
    Tensor k = flat.slice(0, at, at + n).reshape(in.k.shape());
    k.assign(in.k);
    if (at * 4 % 64 == 0) {
      expect_close(in.q.flash_attention(k, in.v, false).to_doubles(), want.to_doubles(), 2e-6, "assigned run");
    } else {
      EXPECT_THROW(in.q.flash_attention(k, in.v, false).realize(), Error);
      expect_close(in.q.flash_attention(k.contiguous(), in.v, false).to_doubles(), want.to_doubles(), 2e-6, "copied run");
    }
  }
}

TEST(FlashAttention, BadShapesAndDtypesAreUserErrors) {
  Tensor q = input({1, 4, 8, 16}, F32, 1), k = input({1, 2, 8, 16}, F32, 2);
  EXPECT_THROW(q.flash_attention(k, k.reshape({1, 2, 16, 8}), false), Error);     // v is not k's shape
  EXPECT_THROW(q.flash_attention(input({1, 3, 8, 16}, F32, 2), input({1, 3, 8, 16}, F32, 3), false), Error);  // 4 % 3
  EXPECT_THROW(q.flash_attention(input({1, 2, 9, 16}, F32, 2), input({1, 2, 9, 16}, F32, 3), true), Error);   // causal, S != T
  EXPECT_THROW(q.flash_attention(k.cast(dtypes::bfloat16), k.cast(dtypes::bfloat16), false), Error);         // dtypes differ
  EXPECT_THROW(q.reshape({4, 8, 16}).flash_attention(k, k, false), Error);                                    // rank
  Tensor none = Tensor::zeros({1, 2, 0, 16}, F32);
  EXPECT_THROW(q.flash_attention(none, none, false), Error);  // no keys
}

}  // namespace
}  // namespace lg
