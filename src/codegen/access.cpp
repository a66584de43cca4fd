#include "codegen/access.h"

#include <unordered_map>

#include "codegen/opt.h"
#include "ir/graph.h"
#include "rewrite/rewrite.h"
#include "rewrite/rules/symbolic.h"

namespace lg {
namespace {

// d(index)/d(axis) when the index is affine in the axis: sums and products by constants of RANGEs.
class StrideOf {
 public:
  explicit StrideOf(const Node* axis) : axis_(axis) {}

  int64_t operator()(const Node* n) {
    if (auto it = memo_.find(n); it != memo_.end()) return it->second;
    int64_t s = compute(n);
    memo_[n] = s;
    return s;
  }

 private:
  const Node* axis_;
  std::unordered_map<const Node*, int64_t> memo_;

  int64_t compute(const Node* n) {
    if (n == axis_) return 1;
    if (n->op == Op::RANGE || n->op == Op::CONST || n->op == Op::DEFINE_GLOBAL) return 0;
    if (n->op == Op::ADD || n->op == Op::MUL) {
      int64_t a = (*this)(n->src[0].get()), b = (*this)(n->src[1].get());
      if (a == kNonAffineStride || b == kNonAffineStride) return kNonAffineStride;
      if (n->op == Op::ADD) return a + b;
      if (a == 0 && b == 0) return 0;
      const Node* c = a == 0 ? n->src[0].get() : n->src[1].get();  // the factor not on the axis
      if (!c->is_const() || (a != 0 && b != 0)) return kNonAffineStride;
      return (a != 0 ? a : b) * c->const_as_int();
    }
    for (const NodeRef& s : n->src)
      if ((*this)(s.get()) != 0) return kNonAffineStride;
    return 0;
  }
};

}  // namespace

int64_t index_stride(const NodeRef& index, const Node* range) { return StrideOf(range)(index.get()); }

std::vector<Access> kernel_accesses(const NodeRef& scheduled) {
  // Movement ops leave index arithmetic like (r0*12 + r1) / 12; the strides are those of the folded
  // index that lower_kernel generates code from (folding changes no range).
  NodeRef ast = rewrite(scheduled, pm_symbolic(), {.name = "access symbolic"});
  std::vector<NodeRef> axes = kernel_axes(ast);
  std::vector<StrideOf> strides;
  for (const NodeRef& a : axes) strides.emplace_back(a.get());
  std::vector<Access> out;
  for (const Node* n : toposort(ast)) {
    if (n->op != Op::LOAD && n->op != Op::STORE) continue;
    const Node* idx = n->src[0].get();  // INDEX(DEFINE_GLOBAL, element[, gate])
    Access a{.is_store = n->op == Op::STORE, .slot = idx->src[0]->get_arg<int64_t>(),
             .dtype = n->op == Op::STORE ? n->src[1]->dtype : n->dtype};
    for (StrideOf& s : strides) a.stride.push_back(s(idx->src[1].get()));
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace lg
