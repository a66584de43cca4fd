#include "codegen/heuristic.h"

#include <algorithm>

#include "base/config.h"
#include "codegen/access.h"
#include "codegen/opt.h"
#include "ir/attention.h"
#include "ir/graph.h"

namespace lg {
namespace {

constexpr int kVectorLanes = 16;      // fp32 lanes of a 512-bit register
constexpr int64_t kParallelTrips = 16;  // outer-loop trips that split evenly enough over the cores
constexpr int64_t kPanelsPerThread = 4;  // fewer parallel trips, where each is a whole panel
constexpr int64_t kPanelReuse = 16;      // row tiles that read a panel packed inside the parallel loop

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
  // an output axis the store writes contiguously). A store that does not move along an output axis
  // (a row's value in a kernel that also writes the row: schedule/multi_output.h) is outside its
  // loop and does not count.
  bool vectorizable(int a) const {
    bool contiguous = false;
    for (const Access& x : access) {
      if (x.is_store && !reduce[a] && x.stride[a] == 0) continue;
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
  // Some load that is contiguous along the vector axis v also moves along a.
  bool moves_vectors_along(int a, int v) const {
    for (const Access& x : access)
      if (!x.is_store && x.stride[v] == 1 && x.stride[a] != 0) return true;
    return false;
  }
  // Some load that is contiguous along the vector axis v does not move along a: copies of the body
  // along a share its loaded vectors (a register tile's reuse).
  bool reuses_vectors_along(int a, int v) const {
    for (const Access& x : access)
      if (!x.is_store && x.stride[v] == 1 && x.stride[a] == 0) return true;
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

constexpr int64_t kBlockOperandBytes = 256 << 10;  // an operand's part per reduction block: in L2
constexpr int64_t kBlockOutputBytes = 128 << 10;   // a chunk of output tiles, added to per block

// K blocking (KBLOCK, opt.h) of an output-vector reduction whose operands outrun L2 (the LM head's
// weight gradient dW = dlogits^T @ h: each tile of 8 vocabulary rows walked all of h, 1 MB, so h
// came from L3 for every tile): the outermost output loop (axis 0, split across threads) is cut
// into chunks of C trips (LOCAL), and the reduction into blocks of B steps run in turn inside each
// chunk, so the block's part of the operands that do not move along axis 0 (B x their bytes per
// step, at most kBlockOperandBytes) is read from L2 by every tile of the chunk, and the chunk's
// outputs (at most kBlockOutputBytes) stay in cache between blocks. Nothing when the operands fit
// L2 whole, or no amounts divide the axes. Measured on the `mini` model's LM-head weight gradient
// (docs/performance.md): C = 32 (of 8-row tiles), B = 256, 1.45x on the kernel.
void block_reduction(const KernelShape& k, const std::vector<int64_t>& left, std::vector<Opt>& opts) {
  int red = -1;
  for (int a = 0; a < k.axes(); a++)
    if (k.reduce[a]) {
      if (red >= 0) return;  // one reduce axis
      red = a;
    }
  if (red < 0) return;
  int64_t step_bytes = 0,
          trip_bytes = 0;  // per reduction step of the reused operands; output per trip of axis 0
  for (const Access& x : k.access) {
    if (!x.is_store && (x.stride[0] != 0 || x.stride[red] == 0)) continue;
    int64_t bytes = itemsize(x.dtype);
    for (int a = 1; a < k.axes(); a++)
      if (!k.reduce[a] && x.stride[a] != 0) bytes *= k.size[a];
    if (x.is_store)
      trip_bytes += bytes * (k.size[0] / left[0]);
    else
      step_bytes += bytes;
  }
  if (step_bytes == 0 || step_bytes * k.size[red] <= 2 * kBlockOperandBytes || trip_bytes == 0) return;
  int64_t block = 0, chunk = 0;
  for (int64_t b : {512, 256, 128, 64})
    if (!block && k.size[red] % b == 0 && k.size[red] > b && b * step_bytes <= kBlockOperandBytes) block = b;
  for (int64_t c : {32, 16, 8, 4, 2})
    if (!chunk && left[0] % c == 0 && left[0] / c >= kParallelTrips && c * trip_bytes <= kBlockOutputBytes)
      chunk = c;
  if (!block || !chunk) return;
  opts.push_back({OptKind::LOCAL, 0, static_cast<int>(chunk)});
  opts.push_back({OptKind::KBLOCK, red, static_cast<int>(block)});
}

constexpr int64_t kStreamedOperandBytes = 64 << 20;  // more than a last-level cache holds
constexpr int64_t kL1RowBytes = 32 << 10;            // a packed row block that stays in L1 (48 KiB)

// The bytes a load reads when it moves a page or more per step of its innermost reduction (a TN
// matmul's transposed operand), else 0.
int64_t page_strided_load_bytes(const KernelShape& k, const Access& x) {
  int inner = last_axis(k, true, [&](int a) { return x.stride[a] != 0; });
  if (x.is_store || inner < 0 || x.stride[inner] == kNonAffineStride ||
      std::abs(x.stride[inner]) * itemsize(x.dtype) < 4096)
    return 0;
  int64_t bytes = itemsize(x.dtype);
  for (int a = 0; a < k.axes(); a++)
    if (x.stride[a] != 0) bytes *= k.size[a];
  return bytes;
}

// The bytes of the loads a register tile broadcasts across the vector axis (stride 0 along vec)
// that move a page or more per step of their innermost reduction.
int64_t page_strided_bytes(const KernelShape& k, int vec) {
  int64_t total = 0;
  for (const Access& x : k.access)
    if (x.stride[vec] == 0) total += page_strided_load_bytes(k, x);
  return total;
}

// Packing (PACK, codegen/pack.h) of the vector operands of a panel-ordered matmul: each load that
// is contiguous along the vector axis, shared by the register tile's rows and read along a
// reduction whose innermost step does not move by exactly the panel's width (so the panel's rows
// are not adjacent in memory: a weight read as dX = dY @ W, an activation read as dW = dY^T @ X;
// the forward product's panels, tensor/reduce.cpp, are adjacent already). The Opt checks the rest
// (one load, an output loop inside the copy, the array's size); cpu_heuristic_opts drops a PACK
// that does not apply.
void pack_panels(const KernelShape& k, int vec, int tile, int64_t width, std::vector<Opt>& opts) {
  for (const Access& x : k.access) {
    if (x.is_store || x.stride[vec] != 1 || (tile >= 0 && x.stride[tile] != 0)) continue;
    int inner = last_axis(k, true, [&](int a) { return x.stride[a] != 0; });
    if (inner < 0 || x.stride[inner] == kNonAffineStride || x.stride[inner] == width) continue;
    Opt p{OptKind::PACK, static_cast<int>(x.slot)};
    if (std::find(opts.begin(), opts.end(), p) == opts.end()) opts.push_back(p);
  }
}

// Packing of the 16-bit operands a register tile broadcasts: a bf16 element becomes a float32
// vector through a scalar shift and a broadcast from a general register (two ALU operations, one on
// the shuffle port the FMAs share), one per row of the tile and reduction step. PACK widens it
// (codegen/pack.h) into the tile's own float32 array, copied once per tile in the source's order
// (vector loads, shifts and stores), read by broadcasts from memory, which take a load port only.
// Only an operand contiguous along the tile's rows (dY^T of a weight gradient) or along its
// reduction (X of a forward product, dY of an input gradient): another would be copied an
// element at a time. Rows contiguous along the tile's rows are read 8 elements a row of the
// source apart, and their copy pays (a layer's dW: +40%), except where they jump a page per
// reduction step and outgrow the last-level cache (dlogits^T at a 128k vocabulary: 525 MB; the
// copy, a page per step without the kernel's prefetches, render_c.cpp, made the head's dW 30%
// slower). Rows contiguous along the reduction stream well in place: their copy pays only while
// the array stays in L1 (kL1RowBytes; FFN dX at d 768: +11%, logits at d 256: +25%; the head's
// dX, 171-256 KB: 0 to -9%).
void pack_broadcast_rows(const KernelShape& k, int vec, int tile, int64_t rows, std::vector<Opt>& opts) {
  if (tile < 0) return;
  for (const Access& x : k.access) {
    if (x.is_store || !is_float(x.dtype) || itemsize(x.dtype) != 2 || x.stride[vec] != 0 ||
        x.stride[tile] == 0)
      continue;
    int inner = last_axis(k, true, [&](int a) { return x.stride[a] != 0; });
    if (x.stride[tile] == 1) {
      if (page_strided_load_bytes(k, x) > kStreamedOperandBytes) continue;  // streamed from memory
    } else {
      if (inner < 0 || x.stride[inner] != 1) continue;
      int64_t bytes = 4 * rows;  // the float32 array: the tile's rows times the reduction
      for (int a = 0; a < k.axes(); a++)
        if (k.reduce[a] && x.stride[a] != 0) bytes *= k.size[a];
      if (bytes > kL1RowBytes) continue;
    }
    Opt p{OptKind::PACK, static_cast<int>(x.slot)};
    if (std::find(opts.begin(), opts.end(), p) == opts.end()) opts.push_back(p);
  }
}

// Register tiles for a reduction, from the access strides. The renderer turns the first UPCAST of
// kVectorLanes trips into vector values (codegen/vectorize.h); the other UPCASTs copy that vector
// code. Two shapes:
//   output-vector: an output axis is contiguous in the store and every load (NN and TN matmul,
//     column sums, embedding lookups): one vector along it, 3 or 2 vectors wide, times up to 8
//     copies along an output axis some load broadcasts over: 16-24 vector accumulators, each
//     loaded vector feeding 8 FMAs and each broadcast scalar 2-3 (measured best on AVX-512: 4 x 4
//     and 2 x 16 were slower, 4 x 8 spills);
//   reduce-vector: only a reduce axis is contiguous (NT matmul, row sums, full sums): one vector of
//     partial accumulators along it, times 4 x 4 outputs along two reused output axes (each loaded
//     vector feeds 4 FMAs); with no reused axis, 4 vectors of partials to hide the add latency.
// kblock: K blocking may replace the panel order (block_reduction); the caller asks again without
// it when the kernel's store refuses KBLOCK.
std::vector<Opt> reduce_opts(const KernelShape& k, bool kblock) {
  std::vector<Opt> opts;
  std::vector<int64_t> left = k.size;  // loop trips left on each axis
  // amounts that divide the trips left; whole_ok: may use them all up (a vector axis's last copies)
  auto upcast = [&](int a, std::initializer_list<int> amounts, bool whole_ok = false) {
    if (int u = whole_ok && left[a] > 1 && std::find(amounts.begin(), amounts.end(), left[a]) != amounts.end() ? static_cast<int>(left[a]) : pick(left[a], amounts)) {
      opts.push_back({OptKind::UPCAST, a, u});
      left[a] /= u;
    }
  };
  auto vector_axis = [&](bool reduce) {
    return last_axis(k, reduce, [&](int a) { return k.vectorizable(a) && pick(k.size[a], {kVectorLanes}); });
  };
  if (int vec = vector_axis(false); vec >= 0) {
    int tile = last_axis(k, false, [&](int a) { return a != vec && k.reuses_vectors_along(a, vec) && pick(k.size[a], {8, 4, 2}); });
    upcast(vec, {kVectorLanes});
    upcast(vec, tile >= 0 ? std::initializer_list<int>{3, 2} : std::initializer_list<int>{4, 2}, true);
    if (tile >= 0) upcast(tile, {8, 4, 2});
    // Loop order for cache reuse: the outermost (parallel) loop runs over the column panels of the
    // operand loaded as vectors, so each panel is read from cache by every row tile in turn.
    int panel = last_axis(k, false, [&](int a) { return a != tile && left[a] >= kParallelTrips && k.moves_vectors_along(a, vec); });
    // Except when the operand the tile broadcasts is large and jumps a page per reduction step (the
    // head's dW = dlogits^T @ h: 8 floats of a 128 KB row per step): panels in the outer loop read
    // all of it once per panel from memory, and K blocking reads it once.
    size_t before = opts.size();
    if (panel > 0 && kblock && left[0] >= kParallelTrips &&
        page_strided_bytes(k, vec) > kStreamedOperandBytes)
      block_reduction(k, left, opts);
    if (panel > 0 && opts.size() == before) {
      opts.push_back({OptKind::THREAD, panel});
    } else if (panel <= 0 && kblock && left[0] >= kParallelTrips) {
      block_reduction(k, left, opts);
    }
    if ((panel > 0 || opts.size() > before) && config().pack)
      pack_panels(k, vec, tile, k.size[vec] / left[vec], opts);
    // Not in a K-blocked kernel: its chunk's tiles run inside the panel loop, so a tile's rows
    // would be copied once per panel (the bf16 head's dW of config A: 60 ms against 33 unblocked).
    bool blocked =
        std::any_of(opts.begin(), opts.end(), [](const Opt& o) { return o.kind == OptKind::KBLOCK; });
    if (config().pack && !blocked)
      pack_broadcast_rows(k, vec, tile, tile >= 0 ? k.size[tile] / left[tile] : 1, opts);
    if (panel > 0) return opts;
  } else if (int red = vector_axis(true); red >= 0) {
    upcast(red, {kVectorLanes});
    int tiles = 0;
    for (int a = k.axes() - 1; a >= 0; a--)
      if (!k.reduce[a] && k.reuses_vectors_along(a, red) && tiles < 2 && pick(left[a], {4, 2})) upcast(a, {4, 2}), tiles++;
    if (tiles == 0) upcast(red, {4, 2});
  } else {  // no contiguous axis: a small scalar tile
    if (int out = last_axis(k, false, [](int) { return true; }); out >= 0) upcast(out, {4, 2});
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

// An NT matmul (attention's scores q @ k^T and dP = dO @ v^T; in bf16, a layer's dX = dY @ W read
// through the forward's weight panels) as an output-vector kernel through packing. As a
// reduce-vector kernel, each output's 16 partial sums take K/16 FMAs and then about 30 scalar ops
// to add up (at a head dim of 64: 4 FMAs). Instead: the vector axis is the output axis the store
// writes contiguously (the keys) although an operand (k, read along its head dim) is strided along
// it; that operand is PACKed (codegen/pack.h lays its panel out with the vector lanes innermost: a
// transposing copy, contiguous where it is read), the other operand (q) is broadcast along it, and
// the tile's rows are the axis along which the packed operand is reused. Empty when the kernel is
// not of that form or no axis can be the panel; cpu_heuristic_opts takes it only if every PACK
// applies (the panel fits kPackBytes: a reduction of at most 4096 float32 steps). row_packs gets
// the PACKs of 16-bit broadcast rows (pack_broadcast_rows), each kept if it applies.
std::vector<Opt> transposed_panel_opts(const KernelShape& k, std::vector<Opt>& row_packs) {
  auto reduce_moving = [&](const Access& x) {
    for (int a = 0; a < k.axes(); a++)
      if (k.reduce[a] && x.stride[a] != 0) return true;
    return false;
  };
  auto strided = [&](const Access& x, int v) { return x.stride[v] != 0 && x.stride[v] != 1; };
  int vec = last_axis(k, false, [&](int v) {
    if (!pick(k.size[v], {kVectorLanes})) return false;
    bool packs = false;
    for (const Access& x : k.access) {
      if (x.is_store ? x.stride[v] != 1
                     : strided(x, v) && (x.stride[v] == kNonAffineStride || !reduce_moving(x)))
        return false;
      packs = packs || (!x.is_store && strided(x, v));
    }
    return packs;
  });
  if (vec < 0) return {};
  // the rows: an output axis every packed operand is reused along and some other load moves along
  int tile = last_axis(k, false, [&](int a) {
    if (a == vec || !pick(k.size[a], {8, 4, 2})) return false;
    bool moves = false;
    for (const Access& x : k.access) {
      if (x.is_store) continue;
      if (strided(x, vec) && x.stride[a] != 0) return false;
      moves = moves || (!strided(x, vec) && x.stride[a] != 0);
    }
    return moves;
  });
  if (tile < 0) return {};
  std::vector<Opt> opts;
  std::vector<int64_t> left = k.size;
  opts.push_back({OptKind::UPCAST, vec, kVectorLanes});
  left[vec] /= kVectorLanes;
  // The panels are the parallel loop, the copy inside it: enough of them for the threads. A panel
  // of two vectors halves the broadcast loads per FMA and how often the other operand is streamed
  // (the head's dX at d 256 in bf16: 8 panels of 32 took 25 ms on 2 cores, 16 of 16 took 37).
  // Too few panels (attention's dQ = dS @ K over a head dim of 32, K stored transposed): the
  // outermost loop (batch) stays the parallel one when every packed operand moves along it, so
  // each of its trips packs its own panels (per head) and reuses them over the rows inside, at
  // least kPanelReuse row tiles (a copy per 8 rows' FMAs costs as much as they do).
  int64_t panels = std::min<int64_t>(kParallelTrips, kPanelsPerThread * cpu_threads());
  bool outer = left[vec] < panels && vec > 0 && tile > 0 && !k.reduce[0] && left[0] >= panels;
  int t = pick(left[tile], {8, 4, 2});  // the tile's rows
  int64_t reuse = 1;
  for (int a = 1; a < k.axes(); a++) {
    bool packed_moves = false;
    for (const Access& x : k.access)
      packed_moves = packed_moves || (!x.is_store && strided(x, vec) && x.stride[a] != 0);
    if (!k.reduce[a] && a != vec && !packed_moves) reuse *= a == tile ? left[a] / t : left[a];
  }
  for (const Access& x : k.access)
    if (outer && !x.is_store && strided(x, vec)) outer = x.stride[0] != 0;
  outer = outer && reuse >= kPanelReuse;
  if (int u = outer && left[vec] == 2 ? 2 : pick(left[vec], {2}); u && (outer || left[vec] / u >= panels))
    opts.push_back({OptKind::UPCAST, vec, u}), left[vec] /= u;
  opts.push_back({OptKind::UPCAST, tile, t});
  left[tile] /= t;
  if (!outer) {
    if (left[vec] < panels) return {};
    if (vec > 0) opts.push_back({OptKind::THREAD, vec});
  }
  for (const Access& x : k.access)
    if (!x.is_store && strided(x, vec)) {
      Opt p{OptKind::PACK, static_cast<int>(x.slot)};
      if (std::find(opts.begin(), opts.end(), p) == opts.end()) opts.push_back(p);
    }
  pack_broadcast_rows(k, vec, tile, t, row_packs);
  return opts;
}

// Whether some REDUCE of the kernel does not depend on an output axis: the kernel reduces rows
// (a softmax's max and sum, once per row) and then writes every element of the row, so the
// reductions sit inside the outer output loops but outside the inner ones (codegen/linearize.h).
bool has_row_reductions(const NodeRef& ast) {
  std::vector<const Node*> outputs;
  for (const NodeRef& r : kernel_axes(ast))
    if (!is_reduce(r)) outputs.push_back(r.get());
  for (const Node* n : toposort(ast)) {
    if (n->op != Op::REDUCE) continue;
    const NodeRef reduce = NodeRef::share(n);
    std::vector<const Node*> inside = toposort(reduce);
    for (const Node* o : outputs)
      if (std::find(inside.begin(), inside.end(), o) == inside.end()) return true;
  }
  return false;
}

// Whether the kernel reduces each row several times into values per row: one output axis (the
// rows) and a reduce axis per reduction (a row's max and its sum of exponentials, one kernel of
// two outputs: schedule/multi_output.h). Each reduction's loop is a row kernel's. One reduction
// over several axes (a norm weight's gradient: a column sum over batch and sequence) is not one.
bool reduces_each_row_several_times(const NodeRef& ast, const KernelShape& k) {
  int outputs = 0, reduces = 0, reductions = 0;
  for (int a = 0; a < k.axes(); a++) (k.reduce[a] ? reduces : outputs)++;
  for (const Node* n : toposort(ast)) reductions += n->op == Op::REDUCE;
  return outputs == 1 && !k.reduce[0] && reduces >= 2 && reductions >= 2;
}

// A row kernel: every reduce axis along which the loads are contiguous gets one vector of partial
// results times up to 4 (the add latency), the last output axis one vector (the row's elements),
// and the outer (row) loop stays the parallel one, so each row's reductions run once, next to the
// loop that writes it, while the row is in cache.
std::vector<Opt> row_opts(const KernelShape& k) {
  std::vector<Opt> opts;
  for (int a = 0; a < k.axes(); a++) {
    if (!k.reduce[a] || !k.vectorizable(a) || !pick(k.size[a], {kVectorLanes})) continue;
    opts.push_back({OptKind::UPCAST, a, kVectorLanes});
    if (int u = pick(k.size[a] / kVectorLanes, {4, 2})) opts.push_back({OptKind::UPCAST, a, u});
  }
  int last = last_axis(k, false, [](int) { return true; });
  if (last > 0) {  // axis 0 is the rows
    int u = k.vectorizable(last) ? pick(k.size[last], {kVectorLanes}) : 0;
    if (!u) u = pick(k.size[last], {4, 2});
    if (u) opts.push_back({OptKind::UPCAST, last, u});
  }
  return opts;
}

}  // namespace

std::vector<Opt> cpu_heuristic_opts(const NodeRef& ast) {
  if (is_attention_kernel(ast)) return {};  // its block loop is the one split across threads
  KernelShape k(ast);
  bool has_reduce = std::find(k.reduce.begin(), k.reduce.end(), true) != k.reduce.end();
  if (has_reduce && (has_row_reductions(ast) || reduces_each_row_several_times(ast, k))) return row_opts(k);
  // Appends each PACK that applies after the Opts before it.
  auto append_packs = [&](std::vector<Opt>& opts, const std::vector<Opt>& packs) {
    for (const Opt& p : packs) {
      opts.push_back(p);
      try {
        apply_opts(ast, opts);
      } catch (const OptError&) {
        opts.pop_back();
      }
    }
  };
  if (has_reduce && config().pack) {  // all of its panel PACKs apply, or the usual tiling
    std::vector<Opt> row_packs;
    std::vector<Opt> t = transposed_panel_opts(k, row_packs);
    try {
      if (!t.empty()) {
        apply_opts(ast, t);
        append_packs(t, row_packs);
        return t;
      }
    } catch (const OptError&) {
    }
  }
  if (has_reduce) {
    auto split_packs = [](std::vector<Opt>& opts) {  // removes the trailing PACKs and returns them
      auto first =
          std::find_if(opts.begin(), opts.end(), [](const Opt& o) { return o.kind == OptKind::PACK; });
      std::vector<Opt> packs(first, opts.end());
      opts.erase(first, opts.end());
      return packs;
    };
    std::vector<Opt> opts = reduce_opts(k, config().kblock);
    std::vector<Opt> packs = split_packs(opts);
    if (!opts.empty() && opts.back().kind == OptKind::KBLOCK) {  // the store's form allows it, or the
      try {                                                      // plan without K blocking
        apply_opts(ast, opts);
      } catch (const OptError&) {
        opts = reduce_opts(k, false);
        packs = split_packs(opts);
      }
    }
    append_packs(opts, packs);  // each PACK (the last Opts) stays if it applies
    return opts;
  }
  // Elementwise: one vector along the last axis when every access is contiguous or broadcast along
  // it (copies, casts, the matmul's panel packing), else a scalar UPCAST by 8 or 4.
  std::vector<Opt> opts;
  int last = k.axes() - 1;
  if (last < 0) return opts;
  int u = k.vectorizable(last) ? pick(k.size[last], {kVectorLanes}) : 0;
  if (!u) u = pick(k.size[last], {8, 4});
  if (u) opts.push_back({OptKind::UPCAST, last, u});
  return opts;
}

}  // namespace lg
