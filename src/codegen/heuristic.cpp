#include "codegen/heuristic.h"

namespace lg {

static int64_t axis_size(const NodeRef& r) { return r->src[0]->const_as_int(); }
static bool is_reduce(const NodeRef& r) { return r->get_arg<RangeArg>().type == AxisType::REDUCE; }

// The largest of `choices` (descending) that divides n, or 0.
static int pick(int64_t n, std::initializer_list<int> choices) {
  for (int c : choices)
    if (n % c == 0 && n > c) return c;
  return 0;
}

std::vector<Opt> cpu_heuristic_opts(const NodeRef& ast) {
  std::vector<NodeRef> axes = kernel_axes(ast);
  std::vector<int> out, red;
  for (int i = 0; i < static_cast<int>(axes.size()); i++) (is_reduce(axes[i]) ? red : out).push_back(i);
  std::vector<Opt> opts;
  if (red.empty()) {
    if (!out.empty())
      if (int u = pick(axis_size(axes[out.back()]), {8, 4})) opts.push_back({OptKind::UPCAST, out.back(), u});
    return opts;
  }
  if (!out.empty())
    if (int u = pick(axis_size(axes[out.back()]), {16, 8, 4})) opts.push_back({OptKind::UPCAST, out.back(), u});
  if (out.size() >= 2)
    if (int u = pick(axis_size(axes[out[out.size() - 2]]), {4, 2})) opts.push_back({OptKind::UPCAST, out[out.size() - 2], u});
  if (int u = pick(axis_size(axes[red.back()]), {4, 2})) opts.push_back({OptKind::UNROLL, red.back(), u});
  return opts;
}

}  // namespace lg
