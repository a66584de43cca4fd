#include "codegen/heuristic.h"

#include <algorithm>

#include "codegen/access.h"

namespace lg {
namespace {

constexpr int kVectorLanes = 16;      // fp32 lanes of a 512-bit register
constexpr int64_t kParallelTrips = 16;  // outer-loop trips that split evenly enough over the cores

int64_t axis_size(const NodeRef& r) { return r->src[0]->const_as_int(); }
bool is_reduce(const NodeRef& r) { return r->get_arg<RangeArg>().type == AxisType::REDUCE; }

// The largest of `choices` (descending) that divides n and leaves a loop of at least 2, or 0.
int pick(int64_t n, std::initializer_list<int> choices) {
  for (int c : choices)
    if (n % c == 0 && n > c) return c;
  return 0;
}

// The kernel as the heuristic sees it: axis sizes and kinds, and how each access strides along them.
struct KernelShape {
  std::vector<int64_t> size;
  std::vector<bool> reduce;
  std::vector<Access> access;

  explicit KernelShape(const NodeRef& ast) : access(kernel_accesses(ast)) {
    for (const NodeRef& r : kernel_axes(ast)) {
      size.push_back(axis_size(r));
      reduce.push_back(is_reduce(r));
    }
  }
  int axes() const { return static_cast<int>(size.size()); }

  // Every load along a is either a broadcast or contiguous, and at least one is contiguous (or it is
  // an output axis the store writes contiguously).
  bool vectorizable(int a) const {
    bool contiguous = false;
    for (const Access& x : access) {
      if (x.is_store) {
        if (!reduce[a] && x.stride[a] != 1) return false;
        contiguous = contiguous || !reduce[a];
      } else if (x.stride[a] != 0 && x.stride[a] != 1) {
        return false;
      } else {
        contiguous = contiguous || x.stride[a] == 1;
      }
    }
    return contiguous;
  }
  // Some load that moves along other axes does not move along a: copies of the body along a share
  // that load's value (a register tile's reuse).
  bool reused_along(int a) const {
    for (const Access& x : access) {
      if (x.is_store || x.stride[a] != 0) continue;
      for (int b = 0; b < axes(); b++)
        if (b != a && x.stride[b] != 0) return true;
    }
    return false;
  }
};

// The last axis of the wanted kind (reduce or output) that satisfies ok, or -1.
template <class F>
int last_axis(const KernelShape& k, bool reduce, F ok) {
  for (int a = k.axes() - 1; a >= 0; a--)
    if (k.reduce[a] == reduce && ok(a)) return a;
  return -1;
}

// A register tile: `columns` lanes along the vector axis times `rows` copies along a reused axis.
struct Tile {
  int columns, rows;
};

// The first tile of the table whose sizes divide the axes. Measured on AVX-512 (docs/performance.md):
// clang's SLP vectorizer packs the scalar copies into 4 x 3 or 4 x 2 zmm accumulators well, and
// falls back to scalar code or spills for larger tiles (4 x 4, 8 x 3).
Tile pick_tile(int64_t columns, int64_t rows) {
  for (Tile t : {Tile{3 * kVectorLanes, 4}, Tile{2 * kVectorLanes, 4}, Tile{kVectorLanes, 8}, Tile{kVectorLanes, 4}, Tile{kVectorLanes, 2}})
    if (pick(columns, {t.columns}) && pick(rows, {t.rows})) return t;
  return {pick(columns, {kVectorLanes}), 0};
}

// Register tiles for a reduction. Two shapes, from the access strides:
//   output-vector: an output axis is contiguous in the store and every load (NN, TN matmul, column
//     sums, embedding lookups): UPCAST it by a vector (two vectors wide) and UPCAST an output axis
//     that some load broadcasts over by up to 8, so each loaded vector feeds 8 FMAs;
//   reduce-vector: only a reduce axis is contiguous (NT matmul, row sums, full sums): UPCAST it into
//     16 partial accumulators per output (one vector), and UPCAST up to two reused output axes by 4.
std::vector<Opt> reduce_opts(const KernelShape& k) {
  std::vector<Opt> opts;
  std::vector<int64_t> left = k.size;  // loop trips left on each axis
  auto upcast = [&](int a, int amount) {
    opts.push_back({OptKind::UPCAST, a, amount});
    left[a] /= amount;
  };
  int vec = last_axis(k, false, [&](int a) { return k.vectorizable(a) && pick(k.size[a], {kVectorLanes}); });
  if (vec >= 0) {
    int tile = last_axis(k, false, [&](int a) { return a != vec && k.reused_along(a) && pick(k.size[a], {8, 4, 2}); });
    Tile t = tile >= 0 ? pick_tile(k.size[vec], k.size[tile]) : Tile{pick(k.size[vec], {4 * kVectorLanes, 2 * kVectorLanes, kVectorLanes}), 0};
    upcast(vec, t.columns);
    if (t.rows) upcast(tile, t.rows);
  } else if (int red = last_axis(k, true, [&](int a) { return k.vectorizable(a) && pick(k.size[a], {kVectorLanes}); }); red >= 0) {
    upcast(red, kVectorLanes);
  } else {  // no contiguous axis: a small scalar tile
    int out = last_axis(k, false, [](int) { return true; });
    if (out >= 0)
      if (int u = pick(k.size[out], {4, 2})) upcast(out, u);
  }
  // The outermost output loop (axis 0: output axes come first) is split over the cores: make it one
  // with enough trips.
  if (k.axes() > 0 && !k.reduce[0] && left[0] < kParallelTrips) {
    int best = 0;
    for (int a = 1; a < k.axes() && !k.reduce[a]; a++)
      if (left[a] > left[best]) best = a;
    if (best != 0) opts.push_back({OptKind::THREAD, best});
  }
  return opts;
}

}  // namespace

std::vector<Opt> cpu_heuristic_opts(const NodeRef& ast) {
  KernelShape k(ast);
  bool has_reduce = std::find(k.reduce.begin(), k.reduce.end(), true) != k.reduce.end();
  if (has_reduce) return reduce_opts(k);
  std::vector<Opt> opts;  // elementwise: a vector-width UPCAST of the last axis
  if (k.axes() > 0)
    if (int u = pick(k.size.back(), {8, 4})) opts.push_back({OptKind::UPCAST, k.axes() - 1, u});
  return opts;
}

}  // namespace lg
