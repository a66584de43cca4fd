#include "codegen/gpu_launch.h"

#include <algorithm>
#include <unordered_set>

#include "base/error.h"
#include "codegen/block_mma.h"
#include "codegen/render_attention.h"

namespace lg {
namespace {

// The grid: one block per combination of the GLOBAL ranges, 2-D past 2^31-1 blocks.
void set_grid(LaunchDims& d, const std::string& name) {
  constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1, kWideGridX = int64_t{1} << 30, kMaxGridY = 65535;
  if (d.blocks <= kMaxGridX) {
    d.grid[0] = static_cast<uint32_t>(d.blocks);
    return;
  }
  int64_t y = (d.blocks + kWideGridX - 1) / kWideGridX;
  LG_CHECK(y <= kMaxGridY, name, ": ", d.blocks, " blocks do not fit a grid");
  d.grid[0] = static_cast<uint32_t>(kWideGridX);
  d.grid[1] = static_cast<uint32_t>(y);
  d.grid_padded = kWideGridX * y != d.blocks;
}

}  // namespace

void cap_persistent_grid(LaunchDims& d, int64_t resident) {
  if (!d.persistent) return;
  LG_CHECK(resident >= 1, "a persistent kernel with ", resident, " resident blocks");
  // whole clusters: a cluster's blocks walk neighbouring tiles together (codegen/block_mma.h)
  const int64_t blocks = std::min(d.blocks, std::min(resident, int64_t{1} << 30));
  d.grid[0] = static_cast<uint32_t>(std::max(blocks / d.cluster, int64_t{1}) * d.cluster);
  d.grid[1] = d.grid[2] = 1;
  d.grid_padded = false;
}

LaunchDims gpu_launch_dims(const LinearProgram& prog) {
  LaunchDims d;
  std::unordered_set<const Node*> reduced;  // ranges some accumulator reduces over
  for (const NodeRef& n : prog.ops)
    if (n->op == Op::DEFINE_ACC)
      for (size_t i = 1; i < n->src.size(); i++) reduced.insert(n->src[i].get());
  bool in_prefix = true;                // only arguments, constants and loop heads seen so far
  const Node* open_group = nullptr;     // the GROUP range open now
  for (const NodeRef& n : prog.ops) {
    if (n->op != Op::DEFINE_GLOBAL && n->op != Op::CONST && n->op != Op::RANGE) in_prefix = false;
    if (n->op == Op::END && n->src[0].get() == open_group) open_group = nullptr;
    if (n->op != Op::RANGE) continue;
    AxisType t = n->get_arg<RangeArg>().type;
    if (t != AxisType::GLOBAL && t != AxisType::LOCAL && t != AxisType::GROUP) continue;
    LG_CHECK(n->src[0]->is_const(), prog.name, ": a ", axis_type_name(t), " range with a variable bound");
    int64_t size = n->src[0]->const_as_int();
    bool group = t == AxisType::GROUP;
    if (group) {
      LG_CHECK(!open_group, prog.name, ": GROUP ranges nest (they share the group's threads)");
      LG_CHECK(d.group == 1 || d.group == size, prog.name, ": GROUP ranges of ", d.group, " and ", size, " threads");
      open_group = n.get();
      d.group = size;
    } else {
      LG_CHECK(in_prefix, prog.name, ": a ", axis_type_name(t), " range after the outer loop nest");
    }
    d.axes.push_back({n.get(), t != AxisType::GLOBAL, group, group && reduced.count(n.get()) > 0, size, 1});
  }
  // Strides: the group axis fastest, then the LOCAL and GLOBAL ranges, the last met fastest.
  d.threads = d.group;
  for (size_t i = d.axes.size(); i-- > 0;) {
    GpuAxis& a = d.axes[i];
    if (a.group) continue;
    int64_t& total = a.local ? d.threads : d.blocks;
    a.stride = total;
    total *= a.size;
  }
  // A hand-written attention kernel's block (codegen/render_attention.h): its threads, no others.
  if (std::any_of(prog.ops.begin(), prog.ops.end(), [](const NodeRef& n) { return n->op == Op::ATTENTION; })) {
    LG_CHECK(d.threads == 1, prog.name, ": an attention kernel with thread ranges");
    d.threads = kAttentionThreads;
  }
  bool producers = false;
  for (const NodeRef& n : prog.ops) {
    if (n->op == Op::BLOCK_MMA) {
      const BlockMmaTiling t = BlockMmaArg::from_shape(n->get_arg<Shape>()).tiling;
      d.shared_bytes = std::max(d.shared_bytes, block_mma_shared_bytes(t));
      producers = producers || t.specialized;
      d.persistent = d.persistent || t.persistent;
      d.cluster = std::max<int64_t>(d.cluster, t.cluster);
      if (t.tma && d.tensor_maps.empty()) d.tensor_maps = block_mma_tensor_maps(*n);
    }
    if (n->op == Op::ATTENTION)
      d.shared_bytes = std::max(d.shared_bytes, attention_cuda_shared_bytes(AttentionKernel::from_arg(n->get_arg<Shape>()),
                                                                            n->src[2]->dtype.base()));
  }
  // A warp-specialized main loop's producer threads: after the ranges' threads, in no range.
  if (producers) d.threads += kBlockMmaProducerThreads;
  LG_CHECK(d.threads <= kGpuMaxThreads, prog.name, ": ", d.threads, " threads per block (at most ", kGpuMaxThreads, ")");
  d.block[0] = static_cast<uint32_t>(d.threads);
  set_grid(d, prog.name);
  LG_CHECK(d.cluster == 1 || (d.grid[1] == 1 && d.blocks % d.cluster == 0), prog.name, ": ", d.blocks,
           " blocks do not form clusters of ", d.cluster);
  return d;
}

TensorMapEncoding tensor_map_encoding(const GpuTensorMap& m, int64_t elements) {
  LG_CHECK(m.ld > 0 && elements > 0 && m.box_rows > 0, "a tensor map of ", elements, " elements in rows of ",
           m.ld);
  TensorMapEncoding e;
  e.dims[0] = static_cast<uint64_t>(m.ld);
  e.dims[1] = static_cast<uint64_t>((elements + m.ld - 1) / m.ld);
  e.row_stride_bytes = static_cast<uint64_t>(m.ld) * 2;
  e.box[0] = 64;
  e.box[1] = static_cast<uint32_t>(m.box_rows);
  return e;
}

std::string tensor_map_violation(const TensorMapEncoding& e, uintptr_t address) {
  constexpr uint64_t kElementBytes = 2, kSwizzleSpan = 128;
  if (address % 16 != 0) return str("the buffer's address ", address, " is not 16-byte aligned");
  for (int i = 0; i < 2; i++)
    if (e.dims[i] == 0 || e.dims[i] > (uint64_t{1} << 32))
      return str("dimension ", i, " is ", e.dims[i], " elements, not 1 to 2^32");
  if (e.row_stride_bytes % 16 != 0 || e.row_stride_bytes >= (uint64_t{1} << 40))
    return str("the row stride of ", e.row_stride_bytes, " bytes is not a multiple of 16 below 2^40");
  if (e.row_stride_bytes < e.dims[0] * kElementBytes)
    return str("the row stride of ", e.row_stride_bytes, " bytes is shorter than a row of ", e.dims[0],
               " elements");
  for (int i = 0; i < 2; i++)
    if (e.box[i] == 0 || e.box[i] > 256)
      return str("box dimension ", i, " is ", e.box[i], " elements, not 1 to 256");
  if (e.box[0] * kElementBytes % 16 != 0 || e.box[0] * kElementBytes > kSwizzleSpan)
    return str("the box's row of ", e.box[0] * kElementBytes, " bytes is not a multiple of 16 of at most ",
               kSwizzleSpan, " (the swizzle's span)");
  return "";
}

}  // namespace lg
