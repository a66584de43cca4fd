// The CPU heuristic reads each kernel's access strides: which axis is contiguous, which loads are
// broadcast along an axis. These tests pin the strides and the choices they lead to for the three
// matmul layouts and for reductions, and check that every choice computes what the interpreter
// computes without Opts.
#include <gtest/gtest.h>

#include "base/config.h"
#include "codegen/access.h"
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

// Axes of a matmul kernel: 0 = n, 1 = m (outputs), 2 = k (reduce). Slot 0 is the output.
std::vector<int64_t> strides_of_slot(const std::vector<Access>& acc, int64_t slot) {
  for (const Access& a : acc)
    if (a.slot == slot) return a.stride;
  return {};
}

TEST(Access, StridesOfTheThreeMatmulLayouts) {
  auto strides = [](Layout l) {
    return kernel_accesses(only_item(create_schedule(make(Op::SINK, dtypes::void_, {matmul("INTERP", l, 64, 48, 32)}))).ast);
  };
  std::vector<Access> nn = strides(Layout::NN), nt = strides(Layout::NT), tn = strides(Layout::TN);
  EXPECT_EQ(strides_of_slot(nn, 0), (std::vector<int64_t>{32, 1, 0}));   // out (64, 32)
  EXPECT_EQ(strides_of_slot(nn, 1), (std::vector<int64_t>{48, 0, 1}));   // a (64, 48)
  EXPECT_EQ(strides_of_slot(nn, 2), (std::vector<int64_t>{0, 1, 32}));   // b (48, 32)
  EXPECT_EQ(strides_of_slot(nt, 2), (std::vector<int64_t>{0, 48, 1}));   // b stored (32, 48)
  EXPECT_EQ(strides_of_slot(tn, 1), (std::vector<int64_t>{1, 0, 64}));   // a stored (48, 64)
}

TEST(Heuristic, MatmulWithAContiguousOutputAxisVectorizesItAndTilesTheBroadcastAxis) {
  for (Layout l : {Layout::NN, Layout::TN}) {
    NodeRef mm = matmul("INTERP", l, 64, 48, 64);
    std::vector<Opt> opts = cpu_heuristic_opts(only_item(create_schedule(make(Op::SINK, dtypes::void_, {mm}))).ast);
    // one vector along m, two vectors wide, times 8 rows; m has too few trips left to be the panel loop
    EXPECT_EQ(to_string(opts), "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8)]");
  }
}

TEST(Heuristic, MatmulWithOnlyTheReductionContiguousSplitsItIntoVectorAccumulators) {
  NodeRef mm = matmul("INTERP", Layout::NT, 64, 48, 32);
  std::vector<Opt> opts = cpu_heuristic_opts(only_item(create_schedule(make(Op::SINK, dtypes::void_, {mm}))).ast);
  // 16 partial sums along k, times 4 x 4 outputs
  EXPECT_EQ(to_string(opts), "[UPCAST(2,16), UPCAST(1,4), UPCAST(0,4)]");
}

TEST(Heuristic, TheColumnPanelLoopIsTheParallelOneWhenItHasTheTrips) {
  // out (8, 1024): 4-row tiles leave axis 0 two trips; the 32 column panels are the outer loop, and
  // each panel (b's rows are 1024 floats apart) is packed for the two row tiles that read it.
  NodeRef mm = matmul("INTERP", Layout::NN, 8, 16, 1024);
  std::vector<Opt> opts = cpu_heuristic_opts(only_item(create_schedule(make(Op::SINK, dtypes::void_, {mm}))).ast);
  EXPECT_EQ(to_string(opts), "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,4), THREAD(1,0), PACK(2,0)]");
}

TEST(Heuristic, EveryMatmulLayoutOnCpuEqualsTheInterpreter) {
  for (Layout l : {Layout::NN, Layout::NT, Layout::TN})
    for (auto [n, k, m] : {std::tuple{64, 48, 64}, {8, 16, 1024}, {48, 80, 96}, {5, 7, 3}})
      expect_close(run(matmul("CPU", l, n, k, m)), run(matmul("INTERP", l, n, k, m)));
}

// The LM head's weight gradient is dW = dlogits^T @ h, a TN matmul with a narrow right operand:
// (n, k) @ (k, 128) with the left one stored (k, n). Each 8-row tile walks all of h (k x 128
// floats, 1 MiB at k = 2048), more than L2 holds beside the rest, so the heuristic blocks the
// reduction (512 steps: 256 KiB of h) inside chunks of 32 tiles of the parallel loop (KBLOCK and
// LOCAL), and packs each block's panel of h (PACK); at k = 256 h fits and nothing is blocked. Sums of small
// multiples of 1/8 are exact in float32, so the CPU's values equal float64 sums bit for bit, also when the
// product is added into a weight's gradient buffer (an ASSIGN of w + product: the blocks add into w's
// values).
TEST(Heuristic, AWeightGradientWhoseOperandOutrunsL2IsBlockedAlongItsReduction) {
  constexpr int64_t n = 4096, k = 2048, m = 128;
  auto opts = [](int64_t kk) {
    return to_string(cpu_heuristic_opts(
        only_item(create_schedule(make(Op::SINK, dtypes::void_, {matmul("INTERP", Layout::TN, n, kk, m)})))
            .ast));
  };
  EXPECT_EQ(opts(k), "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), LOCAL(0,32), KBLOCK(2,512), PACK(2,0)]");
  EXPECT_EQ(opts(256), "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8)]");
  config().kblock = false;  // KBLOCK=0: the A/B switch
  EXPECT_EQ(opts(k), "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8)]");
  config().kblock = true;
  config().pack = false;  // PACK=0: the A/B switch
  EXPECT_EQ(opts(k), "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), LOCAL(0,32), KBLOCK(2,512)]");
  config().pack = true;

  // input(): element i of a stored (k, n) and of b stored (k, m) is scale * ((i * 7) % 11 - 5)
  auto element = [](int64_t i, double scale) { return scale * static_cast<double>((i * 7) % 11 - 5); };
  std::vector<double> at(k * n), bk(k * m), want(n * m, 0.0);
  for (int64_t i = 0; i < k * n; i++) at[i] = element(i, 0.5);
  for (int64_t i = 0; i < k * m; i++) bk[i] = element(i, 0.25);
  for (int64_t kk = 0; kk < k; kk++)
    for (int64_t r = 0; r < n; r++)
      for (int64_t c = 0; c < m; c++) want[r * m + c] += at[kk * n + r] * bk[kk * m + c];
  std::vector<float> got = run(matmul("CPU", Layout::TN, n, k, m));
  ASSERT_EQ(got.size(), want.size());
  for (int64_t i = 0; i < n * m; i++) ASSERT_EQ(got[i], static_cast<float>(want[i])) << i;

  NodeRef w = input("CPU", {n, m}, 1.0f);
  std::vector<float> w0 = values(w);
  NodeRef sum =
      make(Op::ASSIGN, dtypes::float32,
           {w, w + make(Op::RESHAPE, dtypes::float32, {matmul("CPU", Layout::TN, n, k, m)}, Shape{n, m})});
  Schedule accumulate = create_schedule(make(Op::SINK, dtypes::void_, {sum}));
  EXPECT_EQ(to_string(cpu_heuristic_opts(only_item(accumulate).ast)),
            "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), LOCAL(0,32), KBLOCK(2,512), PACK(2,0)]");
  got = run(sum);
  for (int64_t i = 0; i < n * m; i++) ASSERT_EQ(got[i], static_cast<float>(w0[i] + want[i])) << i;
}

// An NN matmul whose b rows are 1024 floats (4 KiB) apart: every k row of a column panel falls into
// the same few cache sets, so the heuristic packs the panel (PACK) for the row tiles that read it.
// The packed kernel is vector code reading the thread's array, and its values are float64 sums
// (small multiples of 1/8: exact). PACK=0 is the A/B switch.
TEST(Heuristic, AMatmulPanelWhoseRowsAreAPowerOfTwoApartIsPacked) {
  constexpr int64_t n = 64, k = 48, m = 1024;
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {matmul("INTERP", Layout::NN, n, k, m)}));
  const ScheduleItem& item = only_item(s);
  EXPECT_EQ(to_string(cpu_heuristic_opts(item.ast)),
            "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), THREAD(1,0), PACK(2,0)]");
  std::string src = CRenderer().render(lower_kernel(item.ast, item.name, cpu_heuristic_opts(item.ast), 16));
  EXPECT_NE(src.find("float lg_smem0[1536] __attribute__((aligned(64)));"), std::string::npos)
      << src;  // 48 x 32
  EXPECT_NE(src.find("lg_load_f32x16(&lg_smem0["), std::string::npos) << src;
  config().pack = false;
  EXPECT_EQ(to_string(cpu_heuristic_opts(item.ast)), "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), THREAD(1,0)]");
  config().pack = true;

  auto element = [](int64_t i, double scale) { return scale * static_cast<double>((i * 7) % 11 - 5); };
  std::vector<double> want(n * m, 0.0);
  for (int64_t r = 0; r < n; r++)
    for (int64_t kk = 0; kk < k; kk++)
      for (int64_t c = 0; c < m; c++) want[r * m + c] += element(r * k + kk, 0.5) * element(kk * m + c, 0.25);
  std::vector<float> got = run(matmul("CPU", Layout::NN, n, k, m));
  ASSERT_EQ(got.size(), want.size());
  for (int64_t i = 0; i < n * m; i++) ASSERT_EQ(got[i], static_cast<float>(want[i])) << i;
}

// A TN matmul whose broadcast operand is larger than a last-level cache and jumps a page per k
// step (the LM head's dW = dlogits^T @ h at vocabulary 32000 and 2048 tokens: 8 floats of each
// 128 KB row per step) would read all of it once per column panel with the panels outermost; the
// heuristic blocks the reduction instead (KBLOCK: read once) and packs each block's panel, also
// when the value is computed from the sum (as a bf16 product rounded before it is added into a
// float32 gradient: its partial sums go to an array, docs/cpu_backend.md "K blocking").
TEST(Heuristic, AWeightGradientWithALargePageStridedOperandIsBlockedNotPanelOrdered) {
  Schedule s =
      create_schedule(make(Op::SINK, dtypes::void_, {matmul("INTERP", Layout::TN, 32000, 1024, 512)}));
  EXPECT_EQ(to_string(cpu_heuristic_opts(only_item(s).ast)),
            "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), LOCAL(0,8), KBLOCK(2,128), PACK(2,0)]");
  NodeRef mm = matmul("INTERP", Layout::TN, 32000, 1024, 512);
  Schedule squared = create_schedule(make(Op::SINK, dtypes::void_, {mm * mm}));
  EXPECT_EQ(to_string(cpu_heuristic_opts(only_item(squared).ast)),
            "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), LOCAL(0,8), KBLOCK(2,128), PACK(2,0)]");
  Schedule narrow =
      create_schedule(make(Op::SINK, dtypes::void_, {matmul("INTERP", Layout::TN, 2048, 1024, 512)}));
  EXPECT_EQ(to_string(cpu_heuristic_opts(only_item(narrow).ast)),  // 8 MiB of dlogits: panels outermost
            "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), THREAD(1,0), PACK(2,0)]");
}

// A bf16 matmul (each operand widened to float32 before its FMA): besides the panel of X, the
// tile's broadcast rows (dY^T of a weight gradient, contiguous along the rows; a of an NN product,
// contiguous along the reduction) are PACKed, widened to float32, so the kernel broadcasts them
// from memory instead of shifting and broadcasting each element (docs/cpu_backend.md "bf16
// operands"). Values: exact float64 sums.
TEST(Heuristic, ABf16MatmulPacksItsBroadcastRowsWidened) {
  constexpr int64_t n = 64, k = 256, m = 512;
  auto bf16_input = [](const std::string& dev, const Shape& shape, float scale) {
    NodeRef b = new_buffer(device_node(dev), dtypes::bfloat16, shape[0] * shape[1]);
    std::vector<uint16_t> host(shape[0] * shape[1]);
    for (size_t i = 0; i < host.size(); i++) {  // small multiples of scale: exact in bf16
      host[i] = float_to_bf16_bits(scale * static_cast<float>((static_cast<int64_t>(i) * 7) % 11 - 5));
    }
    buffer_copy_in(*b, host.data(), host.size() * 2);
    return make(Op::CAST, dtypes::float32, {make(Op::RESHAPE, dtypes::bfloat16, {b}, shape)});
  };
  auto weight_gradient = [&](const std::string& dev, Layout l, int64_t rows, int64_t steps) {
    NodeRef a = l == Layout::TN ? permute(bf16_input(dev, {steps, rows}, 0.5f), {1, 0})
                                : bf16_input(dev, {rows, steps}, 0.5f);
    return matmul_nt(a, permute(bf16_input(dev, {steps, m}, 0.25f), {1, 0}));
  };
  auto opts_of = [&](Layout l, int64_t rows, int64_t steps) {
    Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {weight_gradient("INTERP", l, rows, steps)}));
    return to_string(cpu_heuristic_opts(only_item(s).ast));
  };
  // not packed: NN rows whose array (8 rows x 2048 steps of float32: 64 KiB) outgrows L1, and TN
  // rows of a 71 MB operand that jump a page (17408 bf16) per step
  EXPECT_EQ(opts_of(Layout::NN, n, 2048), "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), THREAD(1,0), PACK(2,0)]");
  EXPECT_EQ(opts_of(Layout::TN, 17408, 2048).find("PACK(1,0)"), std::string::npos)
      << opts_of(Layout::TN, 17408, 2048);
  EXPECT_EQ(opts_of(Layout::TN, n, k),
            "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), THREAD(1,0), PACK(2,0), PACK(1,0)]");
  EXPECT_EQ(opts_of(Layout::NN, n, k),
            "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), THREAD(1,0), PACK(2,0), PACK(1,0)]");
  // The copies' outer loops are left to the SLP vectorizer (codegen/render_c.cpp): the panel's
  // k and vector-copy loops around its lanes, the rows' k loop around its 8 rows.
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {weight_gradient("INTERP", Layout::TN, n, k)}));
  const ScheduleItem& item = only_item(s);
  std::string src = CRenderer().render(lower_kernel(item.ast, item.name, cpu_heuristic_opts(item.ast), 16));
  size_t pragmas = 0;
  for (size_t at = src.find("#pragma clang loop vectorize(disable)"); at != std::string::npos;
       at = src.find("#pragma clang loop vectorize(disable)", at + 1))
    pragmas++;
  EXPECT_EQ(pragmas, 3u) << src;
  EXPECT_NE(src.find("float lg_smem1["), std::string::npos) << src;  // dY^T's rows, widened

  auto element = [](int64_t i, double scale) { return scale * static_cast<double>((i * 7) % 11 - 5); };
  for (Layout l : {Layout::TN, Layout::NN}) {
    std::vector<double> want(n * m, 0.0);
    for (int64_t r = 0; r < n; r++)
      for (int64_t c = 0; c < m; c++)
        for (int64_t kk = 0; kk < k; kk++)
          want[r * m + c] +=
              element(l == Layout::TN ? kk * n + r : r * k + kk, 0.5) * element(kk * m + c, 0.25);
    std::vector<float> got = run(weight_gradient("CPU", l, n, k));
    ASSERT_EQ(got.size(), want.size());
    for (int64_t i = 0; i < n * m; i++) ASSERT_EQ(got[i], static_cast<float>(want[i])) << i;
  }
}

// A batched NT matmul whose output row is two vectors (attention's dQ = dS @ K over a head dim of
// 32, K stored transposed): too few panels to split, so the batch stays the parallel loop and each
// of its trips packs its own panel of b (16 KiB), read by 16 row tiles; 2.3x faster than the
// reduce-vector tiling for the Llama step's dQ. With 4 threads 8 batches are too few trips, and
// with 64 rows (8 tiles) a panel is read too few times for its copy: the reduce-vector tiling.
TEST(Heuristic, ABatchedNtMatmulWithTooFewPanelsPacksPerBatch) {
  constexpr int64_t batch = 8, n = 128, k = 128, m = 32;
  auto product = [&](const std::string& dev, int64_t rows) {
    NodeRef a = input(dev, {batch, rows, k}, 0.5f), bt = input(dev, {batch, m, k}, 0.25f);
    auto expand = [&](const NodeRef& x, const Shape& view) {
      return make(Op::EXPAND, x->dtype, {make(Op::RESHAPE, x->dtype, {x}, view)}, Shape{batch, rows, m, k});
    };
    NodeRef prod = expand(a, {batch, rows, 1, k}) * expand(bt, {batch, 1, m, k});
    return make(Op::REDUCE_AXIS, dtypes::float32, {prod}, ReduceArg{Op::ADD, {3}});
  };
  auto opts_of = [&](int threads, int64_t rows) {
    int saved = config().threads;
    config().threads = threads;
    Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {product("INTERP", rows)}));
    std::string o = to_string(cpu_heuristic_opts(only_item(s).ast));
    config().threads = saved;
    return o;
  };
  EXPECT_EQ(opts_of(2, n), "[UPCAST(2,16), UPCAST(2,2), UPCAST(1,8), PACK(2,0)]");
  EXPECT_EQ(opts_of(4, n).find("PACK"), std::string::npos) << opts_of(4, n);
  EXPECT_EQ(opts_of(2, 64).find("PACK"), std::string::npos) << opts_of(2, 64);

  auto element = [](int64_t i, double scale) { return scale * static_cast<double>((i * 7) % 11 - 5); };
  std::vector<double> want(batch * n * m, 0.0);
  for (int64_t b = 0; b < batch; b++)
    for (int64_t r = 0; r < n; r++)
      for (int64_t c = 0; c < m; c++)
        for (int64_t kk = 0; kk < k; kk++)
          want[(b * n + r) * m + c] +=
              element((b * n + r) * k + kk, 0.5) * element((b * m + c) * k + kk, 0.25);
  int saved = config().threads;
  config().threads = 2;  // the kernel is compiled with these opts whatever the pool's size
  std::vector<float> got = run(product("CPU", n));
  config().threads = saved;
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) ASSERT_EQ(got[i], static_cast<float>(want[i])) << i;
}

// A bf16 operand broadcast along the output vector and not packed (rows of 2048 steps outgrow L1)
// is loaded by broadcast from its address: lg_splat_bf16x16, not a splat of the converted scalar
// (which moves each value through a general register: a third of the head's dX time on Zen 5).
// Values: exact float64 sums (small multiples of the scales, exact in float32).
TEST(Heuristic, ABf16BroadcastOperandIsLoadedByBroadcastFromItsAddress) {
  constexpr int64_t n = 64, k = 2048, m = 512;
  auto bf16_input = [](const std::string& dev, const Shape& shape, float scale) {
    NodeRef b = new_buffer(device_node(dev), dtypes::bfloat16, shape[0] * shape[1]);
    std::vector<uint16_t> host(shape[0] * shape[1]);
    for (size_t i = 0; i < host.size(); i++)
      host[i] = float_to_bf16_bits(scale * static_cast<float>((static_cast<int64_t>(i) * 7) % 11 - 5));
    buffer_copy_in(*b, host.data(), host.size() * 2);
    return make(Op::CAST, dtypes::float32, {make(Op::RESHAPE, dtypes::bfloat16, {b}, shape)});
  };
  auto product = [&](const std::string& dev) {
    return matmul_nt(bf16_input(dev, {n, k}, 0.5f), permute(bf16_input(dev, {k, m}, 0.25f), {1, 0}));
  };
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {product("INTERP")}));
  const ScheduleItem& item = only_item(s);
  std::vector<Opt> opts = cpu_heuristic_opts(item.ast);
  EXPECT_EQ(to_string(opts), "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), THREAD(1,0), PACK(2,0)]");
  std::string src = CRenderer().render(lower_kernel(item.ast, item.name, opts, 16));
  size_t splats = 0;
  for (size_t at = src.find("= lg_splat_bf16x16(&data1["); at != std::string::npos;
       at = src.find("= lg_splat_bf16x16(&data1[", at + 1))
    splats++;
  EXPECT_EQ(splats, 8u) << src;  // the tile's 8 rows

  auto element = [](int64_t i, double scale) { return scale * static_cast<double>((i * 7) % 11 - 5); };
  std::vector<double> want(n * m, 0.0);
  for (int64_t r = 0; r < n; r++)
    for (int64_t c = 0; c < m; c++)
      for (int64_t kk = 0; kk < k; kk++)
        want[r * m + c] += element(r * k + kk, 0.5) * element(kk * m + c, 0.25);
  std::vector<float> got = run(product("CPU"));
  ASSERT_EQ(got.size(), want.size());
  for (int64_t i = 0; i < n * m; i++) ASSERT_EQ(got[i], static_cast<float>(want[i])) << i;
}

// RoPE's rotate_half through the heads' reshape, as the Llama model reads its queries: x (B, S,
// H * hd) viewed as (B, KV, rep, S, hd) and then (B, H, S, hd), its halves swapped and the first
// negated (cat(-x[..., 16:], x[..., :16]): two PADs added). Each half's read is gated; through the
// views its address divides and takes moduli of the element + 16, which fold only over the gated
// half (rewrite/rules/gated_index.cpp): one 16-lane vector per half instead of scalar copies
// through divisions (4 ns an element in the Llama step).
TEST(Heuristic, RotateHalfThroughAHeadReshapeIsOneVectorPerHalf) {
  constexpr int64_t B = 2, S = 8, H = 8, hd = 32;
  auto x = [](int64_t b, int64_t s, int64_t h, int64_t d) {  // small multiples of 0.5: exact in bf16
    int64_t i = ((b * S + s) * H + h) * hd + d;
    return 0.5f * static_cast<float>((i * 7) % 11 - 5);
  };
  // in bfloat16, as the model's activations are
  auto rotated = [&](const std::string& dev) {
    NodeRef buf = new_buffer(device_node(dev), dtypes::bfloat16, B * S * H * hd);
    std::vector<uint16_t> host;
    for (int64_t b = 0; b < B; b++)
      for (int64_t s2 = 0; s2 < S; s2++)
        for (int64_t h = 0; h < H; h++)
          for (int64_t d = 0; d < hd; d++) host.push_back(float_to_bf16_bits(x(b, s2, h, d)));
    buffer_copy_in(*buf, host.data(), host.size() * 2);
    NodeRef in = make(Op::RESHAPE, dtypes::bfloat16, {buf}, Shape{B, S, H * hd});
    NodeRef heads = make(Op::RESHAPE, dtypes::bfloat16, {in}, Shape{B, S, 2, H / 2, hd});
    NodeRef xs5 = permute(heads, {0, 2, 3, 1, 4});  // (B, KV, rep, S, hd)
    NodeRef xs = make(Op::RESHAPE, dtypes::bfloat16, {xs5}, Shape{B, H, S, hd});
    auto half = [&](int64_t from) {
      return make(Op::SHRINK, dtypes::bfloat16, {xs}, Pairs{{0, B}, {0, H}, {0, S}, {from, from + hd / 2}});
    };
    NodeRef first = make(Op::PAD, dtypes::bfloat16, {make(Op::NEG, dtypes::bfloat16, {half(hd / 2)})},
                         Pairs{{0, 0}, {0, 0}, {0, 0}, {0, hd / 2}});
    NodeRef second = make(Op::PAD, dtypes::bfloat16, {half(0)}, Pairs{{0, 0}, {0, 0}, {0, 0}, {hd / 2, 0}});
    return make(Op::CAST, dtypes::float32, {first + second});
  };
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {rotated("INTERP")}));
  const ScheduleItem& item = only_item(s);
  std::vector<Opt> opts = cpu_heuristic_opts(item.ast);
  EXPECT_EQ(to_string(opts), "[UPCAST(3,16)]");
  std::string src = CRenderer().render(lower_kernel(item.ast, item.name, opts, 16));
  std::string body = src.substr(src.find("void lg_kernel"));
  EXPECT_EQ(body.find(" / "), std::string::npos) << body;
  EXPECT_EQ(body.find(" % "), std::string::npos) << body;
  EXPECT_NE(body.find("lg_load_bf16x16(&data1[v"), std::string::npos) << body;

  std::vector<float> got = run(rotated("CPU"));
  ASSERT_EQ(got.size(), static_cast<size_t>(B * H * S * hd));
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t s2 = 0; s2 < S; s2++)
        for (int64_t d = 0; d < hd; d++) {
          float want = d < hd / 2 ? -x(b, s2, h, d + hd / 2) : x(b, s2, h, d - hd / 2);
          ASSERT_EQ(got[((b * H + h) * S + s2) * hd + d], want) << b << " " << h << " " << s2 << " " << d;
        }
}

// A norm weight's gradient is one column sum over batch and sequence: one output axis and two
// reduce axes, but one reduction, so it is an output-vector kernel (64 columns a trip, read a row
// at a time), not a row kernel of several reductions (which left it scalar, one strided column
// at a time: 10 ms for 2048 x 512 floats).
TEST(Heuristic, AColumnSumOverTwoAxesIsVectorizedAlongItsColumns) {
  auto column_sum = [](const std::string& dev) {
    NodeRef x = input(dev, {4, 64, 128}, 0.5f);
    return make(Op::REDUCE_AXIS, dtypes::float32, {x}, ReduceArg{Op::ADD, {0, 1}});
  };
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {column_sum("INTERP")}));
  EXPECT_EQ(to_string(cpu_heuristic_opts(only_item(s).ast)), "[UPCAST(0,16), UPCAST(0,4)]");
  expect_close(run(column_sum("CPU")), run(column_sum("INTERP")));
}

// An NT matmul (attention's q @ k^T over a head dim of 64) is tiled along the output axis the store
// writes contiguously, with b (strided along it) packed into a transposing copy: a reduce-vector
// tiling spent about 30 scalar ops adding up each output's 16 partial sums after 4 FMAs. A
// reduction too long for a packed panel (8192 x 32 floats: 1 MiB) keeps the reduce-vector tiling;
// PACK=0 does too. Values: exact float64 sums.
TEST(Heuristic, AnNtMatmulIsTiledAlongItsOutputThroughATransposingPack) {
  constexpr int64_t n = 64, k = 64;
  auto opts_of = [](int64_t kk, int64_t m) {
    Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {matmul("INTERP", Layout::NT, n, kk, m)}));
    return to_string(cpu_heuristic_opts(only_item(s).ast));
  };
  EXPECT_EQ(opts_of(k, 512), "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), THREAD(1,0), PACK(2,0)]");
  EXPECT_EQ(opts_of(256, 512), "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), THREAD(1,0), PACK(2,0)]");
  EXPECT_EQ(opts_of(8192, 512), "[UPCAST(2,16), UPCAST(1,4), UPCAST(0,4)]");
  // 256 keys (a 256-token sequence): 16 panels of one vector for 4 threads or more, 8 of two (4
  // panels a thread) for 2 threads
  int threads = config().threads;
  config().threads = 4;
  EXPECT_EQ(opts_of(k, 256), "[UPCAST(1,16), UPCAST(0,8), THREAD(1,0), PACK(2,0)]");
  config().threads = 2;
  EXPECT_EQ(opts_of(k, 256), "[UPCAST(1,16), UPCAST(1,2), UPCAST(0,8), THREAD(1,0), PACK(2,0)]");
  config().threads = threads;
  config().pack = false;
  EXPECT_EQ(opts_of(k, 512), "[UPCAST(2,16), UPCAST(1,4), UPCAST(0,4)]");
  config().pack = true;

  for (int64_t m : {512, 256}) {
    Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {matmul("INTERP", Layout::NT, n, k, m)}));
    const ScheduleItem& item = only_item(s);
    std::string src = CRenderer().render(lower_kernel(item.ast, item.name, cpu_heuristic_opts(item.ast), 16));
    EXPECT_NE(src.find("lg_load_f32x16(&lg_smem0["), std::string::npos) << src;  // b read as vectors
    auto element = [](int64_t i, double scale) { return scale * static_cast<double>((i * 7) % 11 - 5); };
    std::vector<double> want(n * m, 0.0);
    for (int64_t r = 0; r < n; r++)
      for (int64_t c = 0; c < m; c++)
        for (int64_t kk = 0; kk < k; kk++)
          want[r * m + c] += element(r * k + kk, 0.5) * element(c * k + kk, 0.25);
    std::vector<float> got = run(matmul("CPU", Layout::NT, n, k, m));
    ASSERT_EQ(got.size(), want.size());
    for (int64_t i = 0; i < n * m; i++) ASSERT_EQ(got[i], static_cast<float>(want[i])) << m << " " << i;
  }
}

// A TN matmul reads its broadcast operand down the columns, a stored row (8 KiB here) per k step,
// which the hardware prefetchers do not follow: the C kernel prefetches it 16 steps ahead. An NN
// matmul of narrow rows reads nothing a page apart and prefetches nothing.
TEST(Heuristic, LoadsAPageApartPerLoopTripArePrefetchedAhead) {
  auto source = [](Layout l, int64_t n) {
    Schedule s = create_schedule(make(Op::SINK, dtypes::void_, {matmul("INTERP", l, n, 48, 64)}));
    const ScheduleItem& item = only_item(s);
    return CRenderer().render(lower_kernel(item.ast, item.name, cpu_heuristic_opts(item.ast), 16));
  };
  std::string tn = source(Layout::TN, 2048);
  ASSERT_NE(tn.find("__builtin_prefetch("), std::string::npos);
  EXPECT_NE(tn.find(" + 32768ll) * 4u"), std::string::npos) << tn;  // 16 rows of 2048 floats ahead
  EXPECT_EQ(source(Layout::NN, 64).find("__builtin_prefetch("), std::string::npos);
  expect_close(run(matmul("CPU", Layout::TN, 2048, 48, 64)), run(matmul("INTERP", Layout::TN, 2048, 48, 64)));
}

TEST(Heuristic, RowAndColumnSumsOnCpuEqualTheInterpreter) {
  for (int64_t axis : {0, 1}) {
    auto sum = [&](const std::string& dev) {
      return make(Op::REDUCE_AXIS, dtypes::float32, {input(dev, {96, 256}, 0.5f)}, ReduceArg{Op::ADD, {axis}});
    };
    expect_close(run(sum("CPU")), run(sum("INTERP")));
  }
}

}  // namespace
}  // namespace lg
