#include "codegen/block_mma.h"

#include <algorithm>
#include <optional>

#include "base/error.h"
#include "codegen/gpu_launch.h"
#include "codegen/opt.h"
#include "codegen/tensor_core.h"
#include "ir/build.h"
#include "ir/graph.h"

namespace lg {
namespace {

// The coefficient of range r in index expression x when x is linear in r (a sum of terms, r's
// terms r times constants), else nullopt.
std::optional<int64_t> coefficient(const NodeRef& x, const Node* r) {
  if (x.get() == r) return 1;
  if (!depends_on(x, r)) return 0;
  if (x->op == Op::ADD) {
    std::optional<int64_t> a = coefficient(x->src[0], r), b = coefficient(x->src[1], r);
    if (a && b) return *a + *b;
  }
  if (x->op == Op::MUL)
    for (int s = 0; s < 2; s++)
      if (x->src[1 - s]->is_const()) {
        std::optional<int64_t> a = coefficient(x->src[s], r);
        if (a) return *a * x->src[1 - s]->const_as_int();
      }
  return std::nullopt;
}

// Whether x is a multiple of `d` for every value of its ranges, counting the ranges in `free` as
// multiples (their strides are checked on their own).
bool multiple_of(const NodeRef& x, int64_t d, const std::vector<const Node*>& free) {
  if (std::find(free.begin(), free.end(), x.get()) != free.end()) return true;
  if (x->is_const()) return x->const_as_int() % d == 0;
  if (x->op == Op::ADD) return multiple_of(x->src[0], d, free) && multiple_of(x->src[1], d, free);
  if (x->op == Op::MUL) return multiple_of(x->src[0], d, free) || multiple_of(x->src[1], d, free);
  return false;
}

// One operand: LOAD(INDEX(buffer, index)) of a kernel argument, ungated, with its strides along its
// output axis (`along`) and k: the reduce axes `ks`, innermost first, which must merge into one
// (block_mma.h: each outer axis's stride the inner one's size times its stride).
struct Operand {
  NodeRef buffer, index;
  int64_t along_stride, k_stride;
};

Operand operand(const NodeRef& cast, const Node* along, const std::vector<NodeRef>& ks, const char* name) {
  const NodeRef& x = cast->src[0];
  if (cast->op != Op::CAST || x->op != Op::LOAD || x->src[0]->op != Op::INDEX || x->src[0]->src.size() != 2 ||
      x->src[0]->src[0]->op != Op::DEFINE_GLOBAL)
    throw OptError(str("BLOCK_MMA: operand ", name, " is not a plain load of a kernel argument"));
  Operand o{x->src[0]->src[0], x->src[0]->src[1], 0, 0};
  std::optional<int64_t> sa = coefficient(o.index, along);
  std::vector<int64_t> sk;
  for (const NodeRef& k : ks) {
    std::optional<int64_t> c = coefficient(o.index, k.get());
    if (!c || *c <= 0) sk.push_back(0);
    else sk.push_back(*c);
  }
  if (!sa || *sa <= 0 || std::find(sk.begin(), sk.end(), 0) != sk.end())
    throw OptError(str("BLOCK_MMA: operand ", name, "'s index is not increasing and linear in its matmul axes"));
  for (size_t i = 1; i < ks.size(); i++)
    if (sk[i] != sk[i - 1] * ks[i - 1]->src[0]->const_as_int())
      throw OptError(str("BLOCK_MMA: operand ", name, "'s reduce axes do not merge into one k"));
  o.along_stride = *sa;
  o.k_stride = sk[0];
  // 16-byte copies along the contiguous axis: the other stride and the origin of every tile are
  // multiples of 8 elements (kernel arguments are 16-byte aligned, runtime/cuda.cpp).
  int64_t other = o.along_stride == 1 ? o.k_stride : o.k_stride == 1 ? o.along_stride : 0;
  std::vector<const Node*> free{along};
  for (const NodeRef& k : ks) free.push_back(k.get());
  if (other == 0 || other % 8 != 0 || !multiple_of(o.index, 8, free))
    throw OptError(str("BLOCK_MMA: operand ", name, " is not contiguous along one matmul axis with 16-byte aligned rows"));
  return o;
}

// The constant term of a sum of range multiples (every range 0), else nullopt.
std::optional<int64_t> constant_term(const NodeRef& x) {
  if (x->is_const()) return x->const_as_int();
  if (x->op == Op::RANGE) return 0;
  if (x->op == Op::ADD) {
    std::optional<int64_t> a = constant_term(x->src[0]), b = constant_term(x->src[1]);
    if (a && b) return *a + *b;
  }
  if (x->op == Op::MUL)
    for (int s = 0; s < 2; s++)
      if (x->src[1 - s]->is_const()) {
        std::optional<int64_t> a = constant_term(x->src[s]);
        if (a) return *a * x->src[1 - s]->const_as_int();
      }
  return std::nullopt;
}

// A TMA tiling's operand: its buffer as rows of ld elements (ld the stride of the strided axis),
// every tile within one row. The contiguous axes (k when the operand is contiguous along k, else
// `along`) span `extent` elements from the offset's column; every other range moves whole rows.
void check_tma_rows(const Operand& o, const Node* along, const std::vector<NodeRef>& ks, int64_t along_size,
                    int64_t k_size, const char* name) {
  const bool k_major = o.k_stride == 1;
  const int64_t ld = k_major ? o.along_stride : o.k_stride, extent = k_major ? k_size : along_size;
  auto contiguous = [&](const Node* r) {
    if (!k_major) return r == along;
    return std::any_of(ks.begin(), ks.end(), [&](const NodeRef& k) { return k.get() == r; });
  };
  for (const Node* n : toposort(o.index))
    if (n->op == Op::RANGE && !contiguous(n)) {
      std::optional<int64_t> c = coefficient(o.index, n);
      if (!c || *c % ld != 0)
        throw OptError(str("BLOCK_MMA: TMA: operand ", name, " moves along a range by ",
                           c ? str(*c) : std::string("a non-linear step"), " elements, not whole rows of ",
                           ld));
    }
  std::optional<int64_t> c = constant_term(o.index);
  if (!c || *c < 0 || *c % ld + extent > ld)
    throw OptError(
        str("BLOCK_MMA: TMA: operand ", name, "'s tiles do not lie within rows of ", ld, " elements"));
}

// The products x_p * y_p of the reduction's body: CAST(x_1) * CAST(y_1) + ... (tensor_core.h).
std::vector<NodeRef> product_terms(const NodeRef& body) {
  if (body->op == Op::ADD && body->dtype == dtypes::float32) {
    std::vector<NodeRef> a = product_terms(body->src[0]), b = product_terms(body->src[1]);
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
  if (body->op != Op::MUL) throw OptError("BLOCK_MMA: k is padded (the products are masked)");
  return {body};
}

}  // namespace

const std::vector<BlockMmaTiling>& block_mma_tilings() {
  static const std::vector<BlockMmaTiling> t{
      {128, 128, 32, 2, 2, 3},
      {128, 64, 32, 2, 2, 3},
      {64, 128, 32, 2, 2, 3},
      {64, 64, 32, 2, 2, 3},
      {128, 256, 32, 2, 4, 3},
      {256, 128, 32, 4, 2, 3},
      {128, 128, 64, 2, 2, 3},
      {128, 256, 64, 2, 4, 3},
      {256, 128, 64, 4, 2, 3},
      {128, 128, 32, 2, 2, 4},
      {128, 256, 64, 8, 1, 4, true},
      {128, 128, 64, 8, 1, 4, true},
      {128, 256, 64, 8, 1, 4, true, true},
      {128, 256, 64, 8, 1, 4, true, true, true},
      {128, 256, 64, 8, 1, 4, true, true, true, true},
      {128, 256, 64, 8, 1, 4, true, true, true, false, 2},
      {128, 256, 64, 8, 1, 4, true, true, true, true, 2},
  };
  return t;
}

int64_t block_mma_threads(const BlockMmaTiling& t) {
  return int64_t{32} * t.warps_m * t.warps_n + (t.specialized ? kBlockMmaProducerThreads : 0);
}

int64_t block_mma_shared_bytes(const BlockMmaTiling& t) {
  return int64_t{t.stages} * (t.bm + t.bn) * t.bk * 2 + (t.wgmma ? 1024 : 0) +
         (t.specialized ? 16 * t.stages : 0);
}

namespace {
// The main loop's kind in BLOCK_MMA's arg: 0 mma.sync, 1 wgmma, 2 warp-specialized, 3 with TMA,
// 4 that persistent, 5 with TMA in clusters of 2, 6 that persistent.
int64_t main_loop_kind(const BlockMmaTiling& t) {
  LG_CHECK(t.cluster == 1 || (t.cluster == 2 && t.tma), "BLOCK_MMA: clusters of ", t.cluster,
           " blocks (only 2, and only for a TMA tiling)");
  if (t.cluster == 2) return t.persistent ? 6 : 5;
  if (t.persistent) return 4;
  if (t.tma) return 3;
  if (t.specialized) return 2;
  return t.wgmma ? 1 : 0;
}
}  // namespace

Shape BlockMmaArg::to_shape() const {
  const BlockMmaTiling& t = tiling;
  Shape s{k, t.bm, t.bn, t.bk, t.warps_m, t.warps_n, t.stages, main_loop_kind(t)};
  for (const BlockMmaProduct& p : products) s.insert(s.end(), {p.a_m, p.a_k, p.b_n, p.b_k});
  return s;
}

BlockMmaArg BlockMmaArg::from_shape(const Shape& s) {
  LG_CHECK(s.size() >= 12 && (s.size() - 8) % 4 == 0, "BLOCK_MMA arg of ", s.size(), " numbers");
  auto i = [&](int j) { return static_cast<int>(s[j]); };
  LG_CHECK(s[7] >= 0 && s[7] <= 6, "BLOCK_MMA arg: main loop kind ", s[7]);
  BlockMmaArg a{s[0],
                {i(1), i(2), i(3), i(4), i(5), i(6), s[7] != 0, s[7] >= 2, s[7] >= 3, s[7] == 4 || s[7] == 6,
                 s[7] >= 5 ? 2 : 1},
                {}};
  for (size_t j = 8; j < s.size(); j += 4) a.products.push_back({s[j], s[j + 1], s[j + 2], s[j + 3]});
  return a;
}

std::vector<GpuTensorMap> block_mma_tensor_maps(const Node& n) {
  LG_CHECK(n.op == Op::BLOCK_MMA, "block_mma_tensor_maps of ", op_name(n.op));
  const BlockMmaArg arg = BlockMmaArg::from_shape(n.get_arg<Shape>());
  std::vector<GpuTensorMap> maps;
  for (size_t p = 0; p < arg.products.size(); p++) {
    const BlockMmaProduct& x = arg.products[p];
    const size_t s = kBlockMmaThreadSources + p * kBlockMmaProductSources;
    maps.push_back(
        {n.src[s]->get_arg<int64_t>(), x.a_k == 1 ? x.a_m : x.a_k, x.a_k == 1 ? arg.tiling.bm : 64});
    maps.push_back({n.src[s + 2]->get_arg<int64_t>(), x.b_k == 1 ? x.b_n : x.b_k,
                    x.b_k == 1 ? arg.tiling.bn / arg.tiling.cluster : 64});
  }
  return maps;
}

NodeRef apply_block_mma(const NodeRef& ast, int choice, int tiling) {
  const std::vector<BlockMmaTiling>& tilings = block_mma_tilings();
  if (tiling < 0 || tiling >= static_cast<int>(tilings.size()))
    throw OptError(str("BLOCK_MMA: no tiling ", tiling, " (0 to ", tilings.size() - 1, ")"));
  const BlockMmaTiling t = tilings[tiling];
  for (const Node* n : toposort(ast))
    if (n->op == Op::RANGE && n->get_arg<RangeArg>().type != AxisType::LOOP && n->get_arg<RangeArg>().type != AxisType::REDUCE)
      throw OptError("BLOCK_MMA must be the first Opt (it sets the kernel's whole launch geometry)");
  std::vector<TcAxes> cands = tc_candidates(ast);
  if (choice < 0 || choice >= static_cast<int>(cands.size()))
    throw OptError(str("BLOCK_MMA: no tensor-core matmul ", choice, " (the kernel has ", cands.size(), ")"));
  const TcAxes c = cands[choice];
  std::vector<NodeRef> axes = kernel_axes(ast);
  const NodeRef M = axes[c.m], N = axes[c.n];
  NodeRef reduce;
  for (const Node* n : toposort(ast))
    if (n->op == Op::REDUCE) reduce = NodeRef::share(n);
  // k: every reduce axis, innermost (smallest stride in A) first
  std::vector<NodeRef> ks(reduce->src.begin() + 1, reduce->src.end());
  const NodeRef a0 = product_terms(reduce->src[0])[0]->src[0]->src[0];
  if (a0->op == Op::LOAD && a0->src[0]->op == Op::INDEX)
    std::stable_sort(ks.begin(), ks.end(), [&](const NodeRef& x, const NodeRef& y) {
      return coefficient(a0->src[0]->src[1], x.get()).value_or(0) < coefficient(a0->src[0]->src[1], y.get()).value_or(0);
    });
  std::vector<Operand> as, bs;
  for (const NodeRef& term : product_terms(reduce->src[0])) {
    as.push_back(operand(term->src[0], M.get(), ks, "A"));
    bs.push_back(operand(term->src[1], N.get(), ks, "B"));
  }
  auto size = [](const NodeRef& r) { return r->src[0]->const_as_int(); };
  int64_t ksize = 1;
  for (const NodeRef& k : ks) ksize *= size(k);
  const int64_t ms = size(M), ns = size(N);
  if (ms % t.bm || ns % t.bn || ksize % t.bk)
    throw OptError(str("BLOCK_MMA: ", ms, " x ", ns, " x ", ksize, " is not a multiple of the tile ", t.bm, " x ", t.bn, " x ", t.bk));
  if (t.tma)
    for (size_t p = 0; p < as.size(); p++) {
      check_tma_rows(as[p], M.get(), ks, ms, ksize, "A");
      check_tma_rows(bs[p], N.get(), ks, ns, ksize, "B");
    }

  // A cluster's blocks are consecutive blocks b (block_mma.h): consecutive block rows of one block
  // column while the block matmul's axis is the only grid axis and the rows come in pairs.
  if (t.cluster > 1) {
    if ((ms / t.bm) % t.cluster != 0)
      throw OptError(
          str("BLOCK_MMA: ", ms / t.bm, " block rows do not pair up into clusters of ", t.cluster));
    for (const NodeRef& r : axes)
      if (r != M && r != N && r->get_arg<RangeArg>().type != AxisType::REDUCE && size(r) > 1)
        throw OptError(
            "BLOCK_MMA: a cluster tiling with another grid axis (a batch or head) beside the matmul's");
  }

  int64_t next_id = 0;
  for (const Node* n : toposort(ast))
    if (n->op == Op::RANGE && n->get_arg<RangeArg>().id < kTcLaneRangeId) next_id = std::max(next_id, n->get_arg<RangeArg>().id + 1);
  // The grid: blocks in groups of g block rows (g a power of two up to 8 dividing the rows), the
  // rows of a group fastest, so the blocks running together read g A panels and few B panels.
  const int64_t nbm = ms / t.bm, nbn = ns / t.bn;
  int64_t g = 1;
  while (g < 8 && nbm % (g * 2) == 0) g *= 2;
  NodeRef blk = range(nbm * nbn, M->get_arg<RangeArg>().id, AxisType::GLOBAL);
  NodeRef bm = blk / (g * nbn) * g + blk % g, bn = blk / g % nbn;
  const int64_t wm_rows = t.bm / t.warps_m, wn_cols = t.bn / t.warps_n;
  NodeRef wm = range(t.warps_m, next_id + 1000000, AxisType::LOCAL), wn = range(t.warps_n, next_id + 1000001, AxisType::LOCAL);
  NodeRef lane = range(kWarpLanes, kTcLaneRangeId, AxisType::LOCAL);
  NodeRef tm = range(wm_rows / kTcM, next_id, AxisType::UPCAST), tn = range(wn_cols / kTcN, next_id + 1, AxisType::UPCAST);
  NodeRef e = range(4, next_id + 2, AxisType::UPCAST);
  // Element e of mma tile (tm, tn) of this lane: the PTX C fragment's place (tensor_core.h).
  NodeRef row = wm * wm_rows + tm * kTcM + tc_place(TcOperand::C, true, lane, 0) + e / 2 * 8;
  NodeRef col = wn * wn_cols + tn * kTcN + tc_place(TcOperand::C, false, lane, 0) + e % 2;
  // Each product's operand offsets for this block: the index at its first row (column) and k 0.
  std::vector<std::pair<NodeRef, NodeRef>> k0;
  for (const NodeRef& k : ks) k0.emplace_back(k, index_const(0));
  std::vector<NodeRef> src{row, col, wm, wn, lane, tm, tn, e};
  BlockMmaArg arg{ksize, t, {}};
  for (size_t p = 0; p < as.size(); p++) {
    std::vector<std::pair<NodeRef, NodeRef>> at_a = k0, at_b = k0;
    at_a.emplace_back(M, bm * t.bm);
    at_b.emplace_back(N, bn * t.bn);
    src.insert(src.end(), {as[p].buffer, substitute(as[p].index, at_a), bs[p].buffer, substitute(bs[p].index, at_b)});
    arg.products.push_back({as[p].along_stride, as[p].k_stride, bs[p].along_stride, bs[p].k_stride});
  }
  NodeRef mma = make(Op::BLOCK_MMA, dtypes::float32, std::move(src), arg.to_shape());
  std::vector<NodeRef> stores;
  for (const NodeRef& st : ast->src) stores.push_back(substitute(st, {{reduce, mma}, {M, bm * t.bm + row}, {N, bn * t.bn + col}}));
  // Every other output axis (a batch, a head) is a grid axis too.
  std::vector<std::pair<NodeRef, NodeRef>> grid;
  for (const NodeRef& r : axes)
    if (r != M && r != N && r->get_arg<RangeArg>().type != AxisType::REDUCE) grid.emplace_back(r, range(size(r), r->get_arg<RangeArg>().id, AxisType::GLOBAL));
  return substitute(make(Op::SINK, dtypes::void_, std::move(stores)), grid);
}

}  // namespace lg
