#include "schedule/kernel_cost.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>

#include "ir/attention.h"
#include "ir/graph.h"
#include "ir/ops.h"

namespace lg {
namespace {

using Loops = std::vector<const Node*>;  // RANGE nodes, sorted by address

Loops merged(const Loops& a, const Loops& b) {
  Loops out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// Trips of a loop: its constant size, or a variable size's largest value.
double trips(const Node* range) {
  const Node& n = *range->src[0];
  if (n.op == Op::DEFINE_VAR) return static_cast<double>(n.get_arg<VarArg>().max);
  return static_cast<double>(n.const_as_int());
}

double product(const Loops& loops) {
  double p = 1;
  for (const Node* r : loops) p *= trips(r);
  return p;
}

// The float operations of one execution of n (0 for integer index arithmetic).
double flops_of(const Node& n) {
  if (n.op == Op::REDUCE) return is_float(n.dtype) ? 1 : 0;
  if (!is_alu(n.op) || n.op == Op::CAST || n.op == Op::BITCAST) return 0;
  bool floats = is_float(n.dtype);
  for (const NodeRef& s : n.src) floats = floats || is_float(s->dtype);
  return floats ? (n.op == Op::MULACC ? 2 : 1) : 0;
}

KernelCost attention_cost(const Node& op, const std::vector<int64_t>& sizes,
                          const std::vector<DType>& dtypes) {
  AttentionKernel a = AttentionKernel::from_arg(op.get_arg<Shape>());
  double products = a.kind == AttentionKind::Forward ? 2 : a.kind == AttentionKind::GradQ ? 3 : 4;
  double pairs = static_cast<double>(a.S) * static_cast<double>(a.T);
  if (a.causal) pairs = static_cast<double>(a.S) * static_cast<double>(a.S + 1) / 2;
  KernelCost c;
  c.flops = 2 * products * static_cast<double>(a.B * a.H * a.D) * pairs;
  for (size_t k = 0; k < sizes.size(); k++) c.bytes += static_cast<double>(sizes[k]) * itemsize(dtypes[k]);
  return c;
}

}  // namespace

KernelCost kernel_cost(const NodeRef& ast, const std::vector<int64_t>& sizes) {
  std::vector<const Node*> order = toposort(ast);
  // Element dtype of every slot (a DEFINE_GLOBAL's dtype is a pointer to it).
  std::vector<DType> slot_dtype(sizes.size(), dtypes::uint8);
  for (const Node* n : order)
    if (n->op == Op::DEFINE_GLOBAL) {
      size_t k = static_cast<size_t>(n->get_arg<int64_t>());
      if (k < slot_dtype.size()) slot_dtype[k] = DType{n->dtype.scalar, n->dtype.count, false};
    }
  if (is_attention_kernel(ast)) return attention_cost(*ast->src[0], sizes, slot_dtype);

  std::unordered_map<const Node*, Loops> loops;  // the loops each node's value depends on
  std::vector<double> loaded(sizes.size(), 0);   // elements addressed per slot
  KernelCost c;
  for (const Node* n : order) {
    Loops l;
    if (n->op == Op::RANGE) l = {n};
    for (const NodeRef& s : n->src) l = merged(l, loops.at(s.get()));
    double runs = product(l);  // a REDUCE runs once per iteration of its loops and its source's
    if (n->op == Op::REDUCE) {
      Loops own(n->src.size() - 1);
      for (size_t i = 1; i < n->src.size(); i++) own[i - 1] = n->src[i].get();
      std::sort(own.begin(), own.end());
      Loops outer;
      std::set_difference(l.begin(), l.end(), own.begin(), own.end(), std::back_inserter(outer));
      l = std::move(outer);
    }
    loops.emplace(n, std::move(l));
    c.flops += flops_of(*n) * runs;
    if ((n->op == Op::LOAD || n->op == Op::STORE) && n->src[0]->op == Op::INDEX &&
        n->src[0]->src[0]->op == Op::DEFINE_GLOBAL) {
      const Node& index = *n->src[0];
      size_t k = static_cast<size_t>(index.src[0]->get_arg<int64_t>());
      double elements = product(loops.at(&index));
      if (n->op == Op::STORE)
        c.bytes += elements * itemsize(slot_dtype.at(k));
      else if (k < loaded.size())
        loaded[k] += elements;
    }
  }
  for (size_t k = 0; k < loaded.size(); k++)
    c.bytes += std::min(loaded[k], static_cast<double>(sizes[k])) * itemsize(slot_dtype[k]);
  return c;
}

KernelCost kernel_cost(const ScheduleItem& item) {
  std::vector<int64_t> sizes;
  for (size_t k = 0; k < item.buffers.size(); k++)
    sizes.push_back(item.buffers[k]->get_arg<BufferArg>().size -
                    (k < item.offsets.size() ? item.offsets[k] : 0));
  return kernel_cost(item.ast, sizes);
}

}  // namespace lg
