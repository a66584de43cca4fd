#include "codegen/heuristic_tc.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "base/config.h"
#include "base/error.h"
#include "codegen/access.h"
#include "codegen/block_mma.h"
#include "codegen/smem.h"
#include "codegen/tensor_core.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/symbolic.h"

namespace lg {
namespace {

// The largest power of two up to `most` that divides n.
int64_t largest_divisor(int64_t n, int64_t most) {
  int64_t d = 1;
  while (d * 2 <= most && n % (d * 2) == 0) d *= 2;
  return d;
}

int64_t padded(int64_t n, int64_t tile) { return (n + tile - 1) / tile * tile; }

// Whether the matmul's loads of one operand (those that move along `along` and k but not along
// `other`) all read consecutive elements along `along`, and there is one.
bool operand_contiguous(const std::vector<Access>& accesses, int along, int other, int k) {
  bool any = false;
  for (const Access& a : accesses) {
    if (a.is_store || a.stride[along] == 0 || a.stride[k] == 0 || a.stride[other] != 0) continue;
    if (a.stride[along] != 1) return false;
    any = true;
  }
  return any;
}

// Opt BLOCK_MMA for matmul `choice` (heuristic_tc.h): tiling `fixed` when it is not -1 and applies
// (a wgmma tiling only where the target has wgmma), else of the heuristic's tilings the first with
// enough blocks, else the last that applies; nullopt when none applies.
std::optional<Opt> block_mma_opt(const NodeRef& ast, int choice, const std::vector<NodeRef>& axes, const TcAxes& c,
                                 int fixed, bool wgmma) {
  const std::vector<BlockMmaTiling>& tilings = block_mma_tilings();
  if (fixed >= 0) {
    std::string why = "the target has no wgmma";
    if (!tilings[fixed].wgmma || wgmma) try {
        apply_block_mma(ast, choice, fixed);
        return Opt{OptKind::BLOCK_MMA, choice, fixed};
      } catch (const OptError& e) {
        why = e.what();
      }
    if (config().debug >= 4) std::fprintf(stderr, "BLOCK_MMA_TILE=%d not taken (%s): the heuristic's tiling\n", fixed, why.c_str());
  }
  int64_t others = 1;  // blocks along the other output axes (a batch, heads)
  for (int a = 0; a < static_cast<int>(axes.size()); a++)
    if (a != c.m && a != c.n && axes[a]->get_arg<RangeArg>().type != AxisType::REDUCE) others *= axes[a]->src[0]->const_as_int();
  const int64_t m = axes[c.m]->src[0]->const_as_int(), n = axes[c.n]->src[0]->const_as_int();
  std::optional<Opt> pick;
  std::string why;
  for (int t = 0; t < kBlockMmaHeuristicTilings; t++) {
    try {
      apply_block_mma(ast, choice, t);
    } catch (const OptError& e) {
      why = e.what();
      continue;
    }
    pick = Opt{OptKind::BLOCK_MMA, choice, t};
    if (m / tilings[t].bm * (n / tilings[t].bn) * others >= kBlockMmaMinBlocks) break;
  }
  if (!pick && config().debug >= 4) std::fprintf(stderr, "no block matmul: %s\n", why.c_str());
  return pick;
}

}  // namespace

bool cuda_wgmma(const std::string& arch) { return cuda_tensor_cores(arch) && (arch == "sm_90a" || arch == "compute_90a"); }

bool cuda_tensor_cores(const std::string& arch) {
  size_t u = arch.find('_');
  if (!config().tc || u == std::string::npos) return false;
  return std::atoi(arch.c_str() + u + 1) >= 80;
}

TcTiling TcTiling::from_config() {
  const Config& c = config();
  const int tilings = static_cast<int>(block_mma_tilings().size());
  LG_USER_CHECK(c.block_mma_tile >= -1 && c.block_mma_tile < tilings, "environment variable BLOCK_MMA_TILE=", c.block_mma_tile,
                " is not a block matmul tiling (0 to ", tilings - 1, ", or -1 for the heuristic's; docs/gpu.md lists them)");
  return {c.tc_warp_m, c.tc_warp_n, c.tc_block_m, c.tc_block_n, c.smem, c.tc_run, c.block_mma, c.block_mma_tile};
}

std::optional<std::vector<Opt>> tc_heuristic_opts(const NodeRef& scheduled, const TcTiling& tiling) {
  // Axes are numbered as apply_opts sees them: after lower_kernel's "initial symbolic".
  NodeRef ast = rewrite(scheduled, pm_symbolic(), {.name = "initial symbolic"});
  std::vector<TcAxes> cands = tc_candidates(ast);
  if (cands.empty()) return std::nullopt;
  std::vector<NodeRef> axes = kernel_axes(ast);
  auto size = [&](int a) { return axes[a]->src[0]->const_as_int(); };
  // n: the last axis B moves along (the store's contiguous one, in a matmul). k: the innermost
  // reduce axis that holds a whole k step (the others stay loops around it): where a reduction is
  // split (k1, k2), the operands are contiguous along k2, so each lane's fragment pairs are adjacent.
  int choice = 0;
  for (int i = 0; i < static_cast<int>(cands.size()); i++)
    if (cands[i].m == cands[0].m && cands[i].n == cands[0].n && size(cands[i].k) >= kTcK && cands[i].k > cands[choice].k)
      choice = i;
  TcAxes c = cands[choice];
  int64_t m = size(c.m), n = size(c.n), k = size(c.k);
  if (m < kTcM || n < kTcN || k < kTcK) return std::nullopt;
  if (tiling.block)
    if (std::optional<Opt> o = block_mma_opt(ast, choice, axes, c, tiling.block_tiling, tiling.wgmma)) return std::vector<Opt>{*o};
  std::vector<Access> accesses = kernel_accesses(ast);
  // The list for lane runs of `run` elements (0: the PTX order) and the block's tile, bm x bn.
  struct Tiled {
    std::vector<Opt> opts;
    int64_t bm, bn;
  };
  auto tiled = [&](int64_t run) {
    std::vector<Opt> opts;
    if (m % kTcM) opts.push_back({OptKind::PADTO, c.m, static_cast<int>(kTcM)});
    if (n % kTcN) opts.push_back({OptKind::PADTO, c.n, static_cast<int>(kTcN)});
    if (k % kTcK) opts.push_back({OptKind::PADTO, c.k, static_cast<int>(kTcK)});
    // Lane runs (heuristic_tc.h): along k for both operands (TC's lane runs, as many mma steps as
    // divide k); along m (n) for an operand contiguous there, by an UPCAST of m (n) before TC.
    int steps = static_cast<int>(run / 4);
    while (steps > 1 && padded(k, kTcK) % (kTcK * steps) != 0) steps /= 2;
    // (at most the warp's tiles along the axis, at least 4 elements: 8 bytes)
    int64_t um = std::min<int64_t>(run, tiling.warp_m), un = std::min<int64_t>(run, tiling.warp_n);
    if (um < 4 || m % (kTcM * um) != 0 || !operand_contiguous(accesses, c.m, c.n, c.k)) um = 1;
    if (un < 4 || n % (kTcN * un) != 0 || !operand_contiguous(accesses, c.n, c.m, c.k)) un = 1;
    if (un > 1) opts.push_back({OptKind::UPCAST, c.n, static_cast<int>(un)});
    if (um > 1) opts.push_back({OptKind::UPCAST, c.m, static_cast<int>(um)});
    opts.push_back({OptKind::TC, choice, steps});  // PADTO and UPCAST keep the axes and the candidates' order
    int64_t mt = padded(m, kTcM) / kTcM / um, nt = padded(n, kTcN) / kTcN / un;  // tiles along m and n, per run element
    int64_t tm = largest_divisor(mt, tiling.warp_m / um), tn = largest_divisor(nt, tiling.warp_n / un);
    if (tm > 1) opts.push_back({OptKind::UPCAST, c.m, static_cast<int>(tm)});
    if (tn > 1) opts.push_back({OptKind::UPCAST, c.n, static_cast<int>(tn)});
    int64_t wm = largest_divisor(mt / tm, tiling.block_m), wn = largest_divisor(nt / tn, tiling.block_n);
    if (wm > 1) opts.push_back({OptKind::LOCAL, c.m, static_cast<int>(wm)});
    if (wn > 1) opts.push_back({OptKind::LOCAL, c.n, static_cast<int>(wn)});
    for (int a = 0; a < static_cast<int>(axes.size()); a++)
      if (axes[a]->get_arg<RangeArg>().type != AxisType::REDUCE) opts.push_back({OptKind::GLOBAL, a});
    return Tiled{std::move(opts), kTcM * um * tm * wm, kTcN * un * tn * wn};
  };
  // With SMEM: the block's A tile (BM x 16) and B tile (16 x BN) of each k step in shared memory,
  // if they fit; staging reads one A and one B per k step (smem.h), in the PTX order.
  if (tiling.smem && c.products == 1) {
    Tiled t = tiled(0);
    if ((t.bm * kTcK + kTcK * t.bn) * itemsize(c.input) <= kSharedMemoryBytes) {
      t.opts.push_back({OptKind::SMEM, 0});
      return t.opts;
    }
  }
  return tiled(tiling.run_bytes / itemsize(c.input)).opts;  // run: 0, 4, 8 or 16 elements
}

}  // namespace lg
