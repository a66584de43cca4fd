#include "codegen/heuristic_gpu.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "base/config.h"
#include "base/error.h"
#include "codegen/access.h"
#include "codegen/atomic_scatter.h"
#include "codegen/gpu_launch.h"
#include "codegen/heuristic_tc.h"
#include "ir/attention.h"
#include "ir/graph.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/symbolic.h"

namespace lg {
namespace {

// The largest power of two from `least` up to `limit` that divides n, or 0.
int largest_divisor(int64_t n, int64_t limit, int least) {
  int best = 0;
  for (int64_t c = least; c <= limit; c *= 2)
    if (n % c == 0) best = static_cast<int>(c);
  return best;
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

// Elements per thread for 16-byte accesses along axis a: 16 bytes of the narrowest element that
// moves along a (4 float32, 8 bfloat16), when every access that moves along a is contiguous
// there; else 0. Whether a run is aligned is the renderer's to prove (gpu_vector_access.h).
int vector_elements(const std::vector<Access>& accesses, int a) {
  int narrowest = 0;
  for (const Access& x : accesses) {
    if (x.stride[a] == 0) continue;
    bool vector_type = x.dtype == dtypes::float32 || x.dtype == dtypes::bfloat16 || x.dtype == dtypes::float16;
    if (x.stride[a] != 1 || !vector_type) return 0;
    int bytes = itemsize(x.dtype);
    narrowest = narrowest == 0 ? bytes : std::min(narrowest, bytes);
  }
  return narrowest == 2 || narrowest == 4 ? 16 / narrowest : 0;
}

// Whether some load inside the reduction loop (one that moves along a reduce axis: what the threads
// walk) is contiguous along axis a. A load read once per output (a label, a row's maximum) does not
// count: threads side by side along a read it coalesced, and still each walk a strided row.
bool loop_loaded_contiguously(const std::vector<Access>& accesses, int a, int outs) {
  for (const Access& x : accesses) {
    if (x.is_store || x.stride[a] != 1) continue;
    for (size_t r = outs; r < x.stride.size(); r++)
      if (x.stride[r] != 0) return true;
  }
  return false;
}

// GROUPTOP for a reduction whose threads would each walk their own strided row (no load of the
// reduction loop is contiguous along the first LOCAL axis, or there are no outputs to spread): a
// group of threads splits a reduce axis some load reads contiguously (coalesced) and combines in
// shared memory. Appends the Opts and returns the group's threads (1: none).
int64_t group_reduction(const std::vector<NodeRef>& axes, const std::vector<Access>& accesses, int outs, int first,
                        int64_t block, std::vector<Opt>& opts) {
  if (outs == static_cast<int>(axes.size()) || (first >= 0 && loop_loaded_contiguously(accesses, first, outs))) return 1;
  for (int a = static_cast<int>(axes.size()) - 1; a >= outs; a--) {
    int64_t n = axes[a]->src[0]->const_as_int();
    if (!loaded_contiguously(accesses, a) || n < 64) continue;
    if (n % 32 != 0) {
      opts.push_back({OptKind::PADTO, a, 32});
      n = (n + 31) / 32 * 32;
    }
    int g = largest_divisor(n, block, 32);
    opts.push_back({OptKind::GROUPTOP, a, g});
    return g;
  }
  return 1;
}

// LOCAL splits of the output axes (left: their trips), the first axis first, then the others from
// the last, while the block (already `threads` wide) has room. An axis with no divisor of at least
// 32 is padded first. Appends the Opts.
void block_axes(std::vector<int64_t>& left, int first, int64_t threads, int64_t block, std::vector<Opt>& opts) {
  std::vector<int> order{first};
  for (int a = static_cast<int>(left.size()) - 1; a >= 0; a--)
    if (a != first) order.push_back(a);
  std::vector<Opt> locals;
  for (int a : order) {
    int64_t room = block / threads;
    if (room < 2) break;
    if (a == first && left[a] >= 32 && left[a] % 32 != 0 && room >= 32) {
      opts.push_back({OptKind::PADTO, a, 32});
      left[a] = (left[a] + 31) / 32 * 32;
    }
    int n = left[a] <= room ? static_cast<int>(left[a]) : largest_divisor(left[a], room, 2);
    if (n < 2) continue;
    locals.push_back({OptKind::LOCAL, a, n});
    left[a] /= n;
    threads *= n;
  }
  // A later LOCAL gets a later range id, and the latest varies fastest across threads
  // (codegen/gpu_launch.h): apply the first axis's last.
  opts.insert(opts.end(), locals.rbegin(), locals.rend());
}

// The ranges a node reads that no REDUCE inside it binds (a REDUCE binds its own ranges).
using Free = std::unordered_map<const Node*, std::unordered_set<const Node*>>;
const std::unordered_set<const Node*>& free_ranges(const Node* n, Free& memo) {
  if (auto it = memo.find(n); it != memo.end()) return it->second;
  std::unordered_set<const Node*> f;
  if (n->op == Op::RANGE) f.insert(n);
  for (size_t i = 0; i < n->src.size(); i++)
    if (n->op != Op::REDUCE || i == 0)
      for (const Node* r : free_ranges(n->src[i].get(), memo)) f.insert(r);
  if (n->op == Op::REDUCE)
    for (size_t i = 1; i < n->src.size(); i++) f.erase(n->src[i].get());
  return memo[n] = std::move(f);
}

// A row kernel as the row schedule sees it (axes numbered as kernel_axes):
//   in_row   output axes some REDUCE does not read: the elements of a row (softmax's columns);
//   rows     the other output axes: one row per combination;
//   grouped  per row reduction (a REDUCE that reads only row axes), the reduce axis its group of
//            threads splits: the last one some load reads contiguously, else its last.
struct RowKernel {
  std::vector<int> rows, in_row, grouped;
};

// The kernel's row structure, or nothing when it is not a row kernel the row schedule handles: it
// has no output axes, a reduce axis of a row reduction is also one of another REDUCE's (its group
// range would open inside that reduction's loops), or its rows are single values (no REDUCE leaves
// an output axis out) and some row reduction is not read contiguously.
std::optional<RowKernel> row_kernel(const NodeRef& ast, const std::vector<NodeRef>& axes,
                                    const std::vector<Access>& accesses, int outs) {
  auto axis_of = [&](const Node* r) -> int {
    for (size_t a = 0; a < axes.size(); a++)
      if (axes[a].get() == r) return static_cast<int>(a);
    return -1;
  };
  Free memo;
  std::vector<const Node*> reduces;
  std::vector<bool> in_row(outs, false);
  for (const Node* n : toposort(ast)) {
    if (n->op != Op::REDUCE) continue;
    reduces.push_back(n);
    const auto& free = free_ranges(n, memo);
    for (int a = 0; a < outs; a++) in_row[a] = in_row[a] || !free.count(axes[a].get());
  }
  RowKernel k;
  for (int a = 0; a < outs; a++) (in_row[a] ? k.in_row : k.rows).push_back(a);
  if (k.in_row.empty() && k.rows.empty()) return std::nullopt;
  std::vector<int> owner(axes.size(), 0);  // REDUCEs listing each reduce axis
  std::vector<int> by_row(axes.size(), 0);  // ... of which row reductions
  for (const Node* n : reduces) {
    bool row = true;  // it reads row axes only
    for (const Node* r : free_ranges(n, memo)) {
      int a = axis_of(r);
      row = row && a >= 0 && a < outs && !in_row[a];
    }
    int pick = -1;
    for (size_t i = 1; i < n->src.size(); i++) {
      int a = axis_of(n->src[i].get());
      if (a < 0) return std::nullopt;  // a reduce range that is not a splittable axis
      owner[a]++;
      by_row[a] += row;
      if (row && (pick < 0 || loaded_contiguously(accesses, a) || !loaded_contiguously(accesses, pick))) pick = a;
    }
    if (row && std::find(k.grouped.begin(), k.grouped.end(), pick) == k.grouped.end()) k.grouped.push_back(pick);
  }
  for (size_t a = 0; a < axes.size(); a++)
    if (by_row[a] > 0 && by_row[a] != owner[a]) return std::nullopt;
  if (k.grouped.empty()) return std::nullopt;
  // Rows with no elements of their own (one value per row: a loss's per-token terms): a row kernel
  // only where every load along each split axis reads it contiguously (a group of threads
  // splitting a strided axis reads uncoalesced; the general schedule spreads the outputs instead).
  if (k.in_row.empty())
    for (int a : k.grouped)
      for (const Access& x : accesses)
        if (!x.is_store && x.stride[a] != 0 && x.stride[a] != 1) return std::nullopt;
  return k;
}

// The row schedule: one block per row (rows GLOBAL), whose group of G threads first runs each row
// reduction together (GROUPTOP: thread g reduces elements g, g+G, ..., then the group combines so
// that every thread holds the row's result) and then writes the row's elements (GROUPOUT on the
// last in-row axis the store writes contiguously: thread g writes elements g, g+G, ...; other
// in-row axes stay loops). The linearizer places the reductions before the loops over the row's
// elements (they read only the row axes), so each runs once per row: O(row) work per row instead
// of O(row^2) when every element recomputed them.
// G follows the row's elements: knobs.block_threads (256 by default), or the power of two (at least
// 32) that covers a shorter row. Each split axis is padded (masked) to a multiple of G; a short reduction (the last
// stage of a split one, 64 partial sums) then leaves most threads one masked element. Rows of
// fewer than 32 elements keep the general schedule: recomputing them is cheap, a mostly masked
// warp per row is not.
std::optional<std::vector<Opt>> row_schedule(const RowKernel& k, const std::vector<NodeRef>& axes,
                                             const std::vector<Access>& accesses, int64_t block) {
  auto size = [&](int a) { return axes[a]->src[0]->const_as_int(); };
  // lane: the in-row axis the group writes (GROUPOUT); none when a row is one value
  int lane = k.in_row.empty() ? -1 : k.in_row.back();
  for (int a : k.in_row)
    if (store_stride(accesses, a) == 1) lane = a;
  int64_t longest = lane < 0 ? 0 : size(lane);
  for (int a : k.grouped) longest = std::max(longest, size(a));
  if (longest < 32) return std::nullopt;
  int64_t g = 32;
  while (g < block && g < (lane < 0 ? longest : size(lane))) g *= 2;
  // Rows of one value: the largest group (of at least 32) that divides every split reduction, so
  // no element is masked (on an H200, 64 rows of 23 M elements took 19.5 ms padded to groups of
  // 256, against 11.8 ms unpadded in groups of 64 under the earlier schedule).
  if (lane < 0) {
    auto divides_all = [&](int64_t d) {
      return std::all_of(k.grouped.begin(), k.grouped.end(), [&](int a) { return size(a) % d == 0; });
    };
    int64_t d = g;
    while (d > 32 && !divides_all(d)) d /= 2;
    if (divides_all(d)) g = d;
  }
  std::vector<int> split = k.grouped;
  if (lane >= 0) split.push_back(lane);
  std::vector<Opt> opts;
  for (int a : split) {
    // 16 bytes per thread and step where that divides (thread g then reads elements u*g ..
    // u*g+u-1 of each slice of u*G: one vector access; u partial sums on a reduce axis), else a
    // multiple of G (padding is masked: those accesses stay scalar).
    if (int u = vector_elements(accesses, a); u > 1 && size(a) % (u * g) == 0) opts.push_back({OptKind::UPCAST, a, u});
    else if (size(a) % g != 0) opts.push_back({OptKind::PADTO, a, static_cast<int>(g)});
  }
  for (int a : k.grouped) opts.push_back({OptKind::GROUPTOP, a, static_cast<int>(g)});
  if (lane >= 0) opts.push_back({OptKind::GROUPOUT, lane, static_cast<int>(g)});
  for (int a : k.rows) opts.push_back({OptKind::GLOBAL, a});
  return opts;
}

}  // namespace

GpuKnobs GpuKnobs::defaults(bool tensor_cores, bool wgmma) {
  GpuKnobs k;
  k.tensor_cores = tensor_cores;
  k.tc = TcTiling::from_config();
  k.tc.wgmma = tensor_cores && wgmma;
  k.atomic_scatter = config().atomic_scatter;
  return k;
}

std::vector<Opt> gpu_heuristic_opts(const NodeRef& scheduled, const GpuKnobs& knobs) {
  LG_CHECK(knobs.block_threads >= 32 && knobs.block_threads <= kGpuMaxThreads, "GPU block of ", knobs.block_threads,
           " threads");
  if (is_attention_kernel(scheduled)) {  // one GPU block per kernel block; tensor cores where the device has them
    std::vector<Opt> opts{{OptKind::GLOBAL, 0}};
    if (knobs.tensor_cores) opts.push_back({OptKind::TC, 0, 0});
    return opts;
  }
  if (knobs.atomic_scatter) {
    NodeRef ast = rewrite(scheduled, pm_symbolic(), {.name = "initial symbolic"});  // as lower_kernel has it
    if (is_serial_scatter(ast)) {
      std::vector<Opt> opts{{OptKind::ATOMIC, 0}};
      std::vector<Opt> rest = gpu_heuristic_opts(apply_opts(ast, opts), knobs);
      opts.insert(opts.end(), rest.begin(), rest.end());
      return opts;
    }
  }
  if (knobs.tensor_cores)
    if (std::optional<std::vector<Opt>> tc = tc_heuristic_opts(scheduled, knobs.tc)) return *tc;
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
  if (auto row = row_kernel(ast, axes, accesses, outs))
    if (auto opts = row_schedule(*row, axes, accesses, knobs.block_threads)) return *opts;
  std::vector<Opt> opts;
  int64_t threads = group_reduction(axes, accesses, outs, first, knobs.block_threads, opts);
  if (outs == 0) return opts;
  // Register tile: a reduction's outputs along an axis where a load is reused, register_tile per
  // thread (where the axis has at least 4 times that). Not the first LOCAL axis, which keeps its
  // trips for the threads.
  int tile = knobs.register_tile;
  if (has_reduce && threads == 1 && tile > 1)
    for (int a = outs - 1; a >= 0; a--)
      if (a != first && reused_along(accesses, a) && left[a] % tile == 0 && left[a] >= 4 * tile) {
        opts.push_back({OptKind::UPCAST, a, tile});
        left[a] /= tile;
        break;
      }
  // Elementwise: a run of 16 bytes per thread along the contiguous axis (one vector load or
  // store each, gpu_vector_access.h), while the axis keeps a warp's worth of threads.
  if (knobs.vector && !has_reduce && store_stride(accesses, first) == 1)
    if (int u = vector_elements(accesses, first); u > 1 && left[first] % u == 0 && left[first] / u >= 32) {
      opts.push_back({OptKind::UPCAST, first, u});
      left[first] /= u;
    }
  block_axes(left, first, threads, knobs.block_threads, opts);
  // Every output axis (what LOCAL and UPCAST left of it) is a grid axis.
  for (int a = 0; a < outs; a++) opts.push_back({OptKind::GLOBAL, a});
  return opts;
}

}  // namespace lg
