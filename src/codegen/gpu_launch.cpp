#include "codegen/gpu_launch.h"

#include <unordered_set>

#include "base/error.h"

namespace lg {

LaunchDims gpu_launch_dims(const LinearProgram& prog) {
  LaunchDims d;
  std::unordered_set<const Node*> reduced;  // ranges some accumulator reduces over
  for (const NodeRef& n : prog.ops)
    if (n->op == Op::DEFINE_ACC)
      for (size_t i = 1; i < n->src.size(); i++) reduced.insert(n->src[i].get());
  bool in_prefix = true;  // only arguments, constants and loop heads seen so far
  for (const NodeRef& n : prog.ops) {
    if (n->op != Op::DEFINE_GLOBAL && n->op != Op::CONST && n->op != Op::RANGE) in_prefix = false;
    if (n->op != Op::RANGE) continue;
    AxisType t = n->get_arg<RangeArg>().type;
    if (t != AxisType::GLOBAL && t != AxisType::LOCAL) continue;
    bool red = t == AxisType::LOCAL && reduced.count(n.get());
    LG_CHECK(in_prefix || red, prog.name, ": a ", axis_type_name(t), " range after the outer loop nest");
    LG_CHECK(n->src[0]->is_const(), prog.name, ": a ", axis_type_name(t), " range with a variable bound");
    d.axes.push_back({n.get(), t == AxisType::LOCAL, red, n->src[0]->const_as_int(), 1});
  }
  // Strides: the last axis of each kind varies fastest.
  for (size_t i = d.axes.size(); i-- > 0;) {
    GpuAxis& a = d.axes[i];
    int64_t& total = a.local ? d.threads : d.blocks;
    a.stride = total;
    total *= a.size;
  }
  LG_CHECK(d.threads <= kGpuMaxThreads, prog.name, ": ", d.threads, " threads per block (at most ", kGpuMaxThreads, ")");
  d.block[0] = static_cast<uint32_t>(d.threads);
  constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1, kWideGridX = int64_t{1} << 30, kMaxGridY = 65535;
  if (d.blocks <= kMaxGridX) {
    d.grid[0] = static_cast<uint32_t>(d.blocks);
  } else {
    int64_t y = (d.blocks + kWideGridX - 1) / kWideGridX;
    LG_CHECK(y <= kMaxGridY, prog.name, ": ", d.blocks, " blocks do not fit a grid");
    d.grid[0] = static_cast<uint32_t>(kWideGridX);
    d.grid[1] = static_cast<uint32_t>(y);
    d.grid_padded = kWideGridX * y != d.blocks;
  }
  return d;
}

}  // namespace lg
