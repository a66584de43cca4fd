#include "codegen/heuristic_gpu.h"

#include <algorithm>

#include "codegen/access.h"

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

}  // namespace

std::vector<Opt> gpu_heuristic_opts(const NodeRef& ast) {
  std::vector<NodeRef> axes = kernel_axes(ast);
  std::vector<Access> accesses = kernel_accesses(ast);
  std::vector<int64_t> left;  // trips left on each output axis (output axes come first)
  bool has_reduce = false;
  for (const NodeRef& r : axes) {
    if (r->get_arg<RangeArg>().type == AxisType::REDUCE) has_reduce = true;
    else left.push_back(r->src[0]->const_as_int());
  }
  int outs = static_cast<int>(left.size());
  std::vector<Opt> opts;
  if (outs == 0) return opts;  // a reduction to one value: one thread (no block reduction yet)
  // The first LOCAL axis: the last one the store writes contiguously, else the last.
  int first = outs - 1;
  for (int a = outs - 1; a >= 0; a--)
    if (store_stride(accesses, a) == 1) {
      first = a;
      break;
    }
  // Register tile: a reduction's outputs along an axis where a load is reused, 4 per thread. Not
  // the LOCAL axis, which must keep its trips for the threads.
  if (has_reduce)
    for (int a = outs - 1; a >= 0; a--)
      if (a != first && reused_along(accesses, a) && left[a] % 4 == 0 && left[a] >= 16) {
        opts.push_back({OptKind::UPCAST, a, 4});
        left[a] /= 4;
        break;
      }
  // Threads: the first axis, then the others from the last, while the block has room.
  int64_t threads = 1;
  std::vector<int> order{first};
  for (int a = outs - 1; a >= 0; a--)
    if (a != first) order.push_back(a);
  std::vector<Opt> locals;
  for (int a : order) {
    int64_t room = kGpuBlockThreads / threads;
    if (room < 2) break;
    if (a == first && left[a] >= 32 && !largest_divisor(left[a], room, {256, 128, 64, 32})) {
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
  // (codegen/gpu_launch.h): apply the contiguous axis's last.
  opts.insert(opts.end(), locals.rbegin(), locals.rend());
  // Every output axis (what LOCAL and UPCAST left of it) is a grid axis.
  for (int a = 0; a < outs; a++) opts.push_back({OptKind::GLOBAL, a});
  return opts;
}

}  // namespace lg
