#include "codegen/heuristic_gpu.h"

#include <algorithm>

#include "codegen/access.h"
#include "codegen/heuristic_tc.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/symbolic.h"

namespace lg {
namespace {

// The largest of `choices` (descending) that divides n and is at most limit, or 0.
int largest_divisor(int64_t n, int64_t limit, std::initializer_list<int> choices) {
  for (int c : choices)
    if (c <= limit && n % c == 0) return c;
  return 0;
}

int64_t store_stride(const std::vector<Access>& accesses, int a) {
  for (const Access& x : accesses)
    if (x.is_store) return x.stride[a];
  return 0;
}

// Some load does not move along a: copies of the body along a share its value.
bool reused_along(const std::vector<Access>& accesses, int a) {
  for (const Access& x : accesses)
    if (!x.is_store && x.stride[a] == 0) return true;
  return false;
}

// Some load moves by one element along a.
bool loaded_contiguously(const std::vector<Access>& accesses, int a) {
  for (const Access& x : accesses)
    if (!x.is_store && x.stride[a] == 1) return true;
  return false;
}

// GROUPTOP for a reduction whose threads would each walk their own strided row (no load is
// contiguous along the first LOCAL axis, or there are no outputs to spread): a group of threads
// splits a reduce axis some load reads contiguously (coalesced) and combines in shared memory.
// Appends the Opts and returns the group's threads (1: none).
int64_t group_reduction(const std::vector<NodeRef>& axes, const std::vector<Access>& accesses, int outs, int first,
                        std::vector<Opt>& opts) {
  if (outs == static_cast<int>(axes.size()) || (first >= 0 && loaded_contiguously(accesses, first))) return 1;
  for (int a = static_cast<int>(axes.size()) - 1; a >= outs; a--) {
    int64_t n = axes[a]->src[0]->const_as_int();
    if (!loaded_contiguously(accesses, a) || n < 64) continue;
    if (n % 32 != 0) {
      opts.push_back({OptKind::PADTO, a, 32});
      n = (n + 31) / 32 * 32;
    }
    int g = largest_divisor(n, kGpuBlockThreads, {256, 128, 64, 32});
    opts.push_back({OptKind::GROUPTOP, a, g});
    return g;
  }
  return 1;
}

// LOCAL splits of the output axes (left: their trips), the first axis first, then the others from
// the last, while the block (already `threads` wide) has room. An axis with no divisor of at least
// 32 is padded first. Appends the Opts.
void block_axes(std::vector<int64_t>& left, int first, int64_t threads, std::vector<Opt>& opts) {
  std::vector<int> order{first};
  for (int a = static_cast<int>(left.size()) - 1; a >= 0; a--)
    if (a != first) order.push_back(a);
  std::vector<Opt> locals;
  for (int a : order) {
    int64_t room = kGpuBlockThreads / threads;
    if (room < 2) break;
    if (a == first && left[a] >= 32 && left[a] % 32 != 0 && room >= 32) {
      opts.push_back({OptKind::PADTO, a, 32});
      left[a] = (left[a] + 31) / 32 * 32;
    }
    int n = left[a] <= room ? static_cast<int>(left[a]) : largest_divisor(left[a], room, {256, 128, 64, 32, 16, 8, 4, 2});
    if (n < 2) continue;
    locals.push_back({OptKind::LOCAL, a, n});
    left[a] /= n;
    threads *= n;
  }
  // A later LOCAL gets a later range id, and the latest varies fastest across threads
  // (codegen/gpu_launch.h): apply the first axis's last.
  opts.insert(opts.end(), locals.rbegin(), locals.rend());
}

}  // namespace

std::vector<Opt> gpu_heuristic_opts(const NodeRef& scheduled, bool tensor_cores) {
  if (tensor_cores)
    if (std::optional<std::vector<Opt>> tc = tc_heuristic_opts(scheduled)) return *tc;
  // Axes are numbered as apply_opts sees them: after lower_kernel's "initial symbolic" (which
  // folds away loops of one trip); kernel_accesses numbers them the same way.
  NodeRef ast = rewrite(scheduled, pm_symbolic(), {.name = "initial symbolic"});
  std::vector<NodeRef> axes = kernel_axes(ast);
  std::vector<Access> accesses = kernel_accesses(ast);
  std::vector<int64_t> left;  // trips left on each output axis (output axes come first)
  for (const NodeRef& r : axes)
    if (r->get_arg<RangeArg>().type != AxisType::REDUCE) left.push_back(r->src[0]->const_as_int());
  int outs = static_cast<int>(left.size());
  bool has_reduce = outs < static_cast<int>(axes.size());
  // The first LOCAL axis: the last one the store writes contiguously, else the last.
  int first = outs - 1;
  for (int a = outs - 1; a >= 0; a--)
    if (store_stride(accesses, a) == 1) {
      first = a;
      break;
    }
  std::vector<Opt> opts;
  int64_t threads = group_reduction(axes, accesses, outs, first, opts);
  if (outs == 0) return opts;
  // Register tile: a reduction's outputs along an axis where a load is reused, 4 per thread. Not
  // the first LOCAL axis, which keeps its trips for the threads.
  if (has_reduce && threads == 1)
    for (int a = outs - 1; a >= 0; a--)
      if (a != first && reused_along(accesses, a) && left[a] % 4 == 0 && left[a] >= 16) {
        opts.push_back({OptKind::UPCAST, a, 4});
        left[a] /= 4;
        break;
      }
  block_axes(left, first, threads, opts);
  // Every output axis (what LOCAL and UPCAST left of it) is a grid axis.
  for (int a = 0; a < outs; a++) opts.push_back({OptKind::GLOBAL, a});
  return opts;
}

}  // namespace lg
