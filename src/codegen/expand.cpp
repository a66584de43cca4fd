// expand_upcasts: UPCAST and UNROLL ranges become copies of the code that uses them.
#include <algorithm>

#include "base/error.h"
#include "codegen/opt.h"
#include "ir/build.h"
#include "ir/graph.h"
#include "rewrite/rewrite.h"

namespace lg {
namespace {

std::vector<NodeRef> ranges_of_type(const NodeRef& ast, AxisType t) {
  std::vector<NodeRef> rs;
  for (const Node* n : toposort(ast))
    if (n->op == Op::RANGE && n->get_arg<RangeArg>().type == t) rs.push_back(NodeRef::share(n));
  std::sort(rs.begin(), rs.end(), [](const NodeRef& a, const NodeRef& b) {
    return a->get_arg<RangeArg>().id < b->get_arg<RangeArg>().id;
  });
  return rs;
}

// REDUCE(v, ..., u, ...) -> REDUCE(v[u=0] op v[u=1] op ..., ...): the unrolled updates of one loop trip.
NodeRef unroll(const NodeRef& ast, const NodeRef& u) {
  int64_t n = u->src[0]->const_as_int();
  PatternMatcher pm({{"unroll", Pat::op(Op::REDUCE), [&](const Match& m) -> NodeRef {
                        const NodeRef& red = m.root();
                        auto it = std::find(red->src.begin() + 1, red->src.end(), u);
                        if (it == red->src.end()) return {};
                        Op op = red->get_arg<Op>();
                        NodeRef folded;
                        for (int64_t k = 0; k < n; k++) {
                          NodeRef v = substitute(red->src[0], {{u, index_const(k)}});
                          folded = folded ? alu(op, folded, v) : v;
                        }
                        std::vector<NodeRef> src{folded};
                        for (auto s = red->src.begin() + 1; s != red->src.end(); ++s)
                          if (s != it) src.push_back(*s);
                        if (src.size() == 1) return folded;
                        return make(Op::REDUCE, red->dtype, std::move(src), red->arg);
                      }}});
  return rewrite(ast, pm, {.name = "expand unroll"});
}

bool is_reduce_range(const NodeRef& ast, const Node* u) {
  for (const Node* n : toposort(ast))
    if (n->op == Op::REDUCE && std::find(n->src.begin() + 1, n->src.end(), u) != n->src.end()) return true;
  return false;
}

// An UPCAST of a reduce axis: REDUCE(v, ..., u, ...) -> REDUCE(v[u=0], ...) op ... op REDUCE(v[u=n-1], ...):
// n partial accumulators over the remaining loops (one loop nest: linearize groups them), combined
// after the loops.
// A reduction split over a GPU thread group too (a GROUP range g among its loops: GROUPTOP) keeps
// g outside: REDUCE(REDUCE(v[u=0], loops - g) op ... op REDUCE(v[u=n-1], loops - g), g). Each
// thread folds its n partials first and the group combines one value (render_gpu.cpp
// combine_threads: shuffles and barriers once per reduction, not once per partial).
NodeRef split_accumulators(const NodeRef& ast, const NodeRef& u) {
  int64_t n = u->src[0]->const_as_int();
  PatternMatcher pm({{"split accumulators", Pat::op(Op::REDUCE), [&](const Match& m) -> NodeRef {
                        const NodeRef& red = m.root();
                        auto it = std::find(red->src.begin() + 1, red->src.end(), u);
                        if (it == red->src.end()) return {};
                        std::vector<NodeRef> loops, groups;
                        for (auto s = red->src.begin() + 1; s != red->src.end(); ++s) {
                          if (s == it) continue;
                          bool group = (*s)->get_arg<RangeArg>().type == AxisType::GROUP;
                          (group ? groups : loops).push_back(*s);
                        }
                        std::vector<NodeRef> parts;
                        for (int64_t k = 0; k < n; k++) {
                          std::vector<NodeRef> src{substitute(red->src[0], {{u, index_const(k)}})};
                          src.insert(src.end(), loops.begin(), loops.end());
                          parts.push_back(loops.empty() ? src[0] : make(Op::REDUCE, red->dtype, std::move(src), red->arg));
                        }
                        NodeRef folded = combine_pairwise(red->get_arg<Op>(), std::move(parts));
                        if (groups.empty()) return folded;
                        std::vector<NodeRef> src{folded};
                        src.insert(src.end(), groups.begin(), groups.end());
                        return make(Op::REDUCE, red->dtype, std::move(src), red->arg);
                      }}});
  return rewrite(ast, pm, {.name = "expand split accumulators"});
}

// SINK(stores...) -> each store that uses u, once per value of u.
NodeRef upcast(const NodeRef& ast, const NodeRef& u) {
  int64_t n = u->src[0]->const_as_int();
  std::vector<NodeRef> stores;
  for (const NodeRef& st : ast->src) {
    if (!depends_on(st, u.get())) {
      stores.push_back(st);
      continue;
    }
    for (int64_t k = 0; k < n; k++) stores.push_back(substitute(st, {{u, index_const(k)}}));
  }
  return make(Op::SINK, dtypes::void_, std::move(stores));
}

}  // namespace

NodeRef combine_pairwise(Op op, std::vector<NodeRef> v) {
  while (v.size() > 1) {
    std::vector<NodeRef> next;
    for (size_t i = 0; i < v.size(); i += 2) next.push_back(i + 1 < v.size() ? alu(op, v[i], v[i + 1]) : v[i]);
    v = std::move(next);
  }
  return v[0];
}

NodeRef expand_upcasts(const NodeRef& ast) {
  LG_CHECK(ast->op == Op::SINK, "expand_upcasts of ", op_name(ast->op));
  NodeRef k = ast;
  for (const NodeRef& u : ranges_of_type(k, AxisType::UPCAST))
    if (is_reduce_range(k, u.get())) k = split_accumulators(k, u);
  for (const NodeRef& u : ranges_of_type(k, AxisType::UNROLL)) k = unroll(k, u);
  for (const NodeRef& u : ranges_of_type(k, AxisType::UPCAST)) k = upcast(k, u);
  return k;
}

}  // namespace lg
