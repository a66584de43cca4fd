#include "codegen/heuristic_tc.h"

#include <cstdlib>

#include "base/config.h"
#include "base/error.h"
#include "codegen/smem.h"
#include "codegen/tensor_core.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/symbolic.h"

namespace lg {
namespace {

// The largest of `choices` (descending) that divides n.
int64_t largest_divisor(int64_t n, std::initializer_list<int64_t> choices) {
  for (int64_t c : choices)
    if (n % c == 0) return c;
  return 1;
}

int64_t padded(int64_t n, int64_t tile) { return (n + tile - 1) / tile * tile; }

}  // namespace

bool cuda_tensor_cores(const std::string& arch) {
  size_t u = arch.find('_');
  if (!config().tc || u == std::string::npos) return false;
  return std::atoi(arch.c_str() + u + 1) >= 80;
}

std::optional<std::vector<Opt>> tc_heuristic_opts(const NodeRef& scheduled) {
  // Axes are numbered as apply_opts sees them: after lower_kernel's "initial symbolic".
  NodeRef ast = rewrite(scheduled, pm_symbolic(), {.name = "initial symbolic"});
  std::vector<TcAxes> cands = tc_candidates(ast);
  if (cands.empty()) return std::nullopt;
  TcAxes c = cands[0];  // n: the last axis B moves along (the store's contiguous one, in a matmul)
  std::vector<NodeRef> axes = kernel_axes(ast);
  auto size = [&](int a) { return axes[a]->src[0]->const_as_int(); };
  int64_t m = size(c.m), n = size(c.n), k = size(c.k);
  if (m < kTcM || n < kTcN || k < kTcK) return std::nullopt;
  std::vector<Opt> opts;
  if (m % kTcM) opts.push_back({OptKind::PADTO, c.m, static_cast<int>(kTcM)});
  if (n % kTcN) opts.push_back({OptKind::PADTO, c.n, static_cast<int>(kTcN)});
  if (k % kTcK) opts.push_back({OptKind::PADTO, c.k, static_cast<int>(kTcK)});
  opts.push_back({OptKind::TC, 0});  // PADTO keeps the axes and the candidates' order
  int64_t mt = padded(m, kTcM) / kTcM, nt = padded(n, kTcN) / kTcN;  // tiles along m and n
  int64_t tm = largest_divisor(mt, {2, 1}), tn = largest_divisor(nt, {4, 2, 1});
  if (tm > 1) opts.push_back({OptKind::UPCAST, c.m, static_cast<int>(tm)});
  if (tn > 1) opts.push_back({OptKind::UPCAST, c.n, static_cast<int>(tn)});
  int64_t wm = largest_divisor(mt / tm, {2, 1}), wn = largest_divisor(nt / tn, {2, 1});
  if (wm > 1) opts.push_back({OptKind::LOCAL, c.m, static_cast<int>(wm)});
  if (wn > 1) opts.push_back({OptKind::LOCAL, c.n, static_cast<int>(wn)});
  for (int a = 0; a < static_cast<int>(axes.size()); a++)
    if (axes[a]->get_arg<RangeArg>().type != AxisType::REDUCE) opts.push_back({OptKind::GLOBAL, a});
  if (config().smem) {
    // The block's A tile (BM x 16) and B tile (16 x BN) of each k step in shared memory.
    int64_t bm = kTcM * tm * wm, bn = kTcN * tn * wn;
    int64_t bytes = (bm * kTcK + kTcK * bn) * itemsize(c.input);
    LG_CHECK(bytes <= kSharedMemoryBytes, "TC heuristic: tiles of ", bytes, " bytes exceed static shared memory");
    opts.push_back({OptKind::SMEM, 0});
  }
  return opts;
}

}  // namespace lg
