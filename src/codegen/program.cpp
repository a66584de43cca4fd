#include "codegen/program.h"

#include <algorithm>
#include <unordered_set>

#include "base/error.h"
#include "ir/graph.h"
#include "rewrite/spec.h"

namespace lg {

const Spec& program_spec() {
  static const Spec spec{
      "program",
      {
          {Pat::op(Op::SINK), nullptr},
          {Pat::op(Op::STORE, {Pat::op(Op::INDEX), Pat::any()}), nullptr},
          {Pat::op(Op::INDEX, {Pat::ops(op_set({Op::DEFINE_GLOBAL, Op::DEFINE_LOCAL, Op::BARRIER})),
                               Pat::any().dtype(dtypes::index)}).prefix(),
           nullptr},
          {Pat::op(Op::BARRIER), [](const Match& m) {  // (DEFINE_LOCAL, STOREs into it) (codegen/smem.h)
             const NodeRef& b = m.root();
             if (b->src.empty() || b->src[0]->op != Op::DEFINE_LOCAL) return false;
             for (size_t i = 1; i < b->src.size(); i++)
               if (b->src[i]->op != Op::STORE || b->src[i]->src[0]->src[0] != b->src[0]) return false;
             return true;
           }},
          {Pat::ops(op_set({Op::LOAD, Op::DEFINE_GLOBAL, Op::DEFINE_LOCAL, Op::RANGE, Op::DEFINE_VAR, Op::VECTORIZE, Op::GEP, Op::WMMA, Op::BLOCK_MMA, Op::ATTENTION})), nullptr},
          {Pat::op(Op::DEFINE_ACC),
           [](const Match& m) {
             for (size_t i = 1; i < m.root()->src.size(); i++)
               if (m.root()->src[i]->op != Op::RANGE) return false;
             return m.root()->src[0]->op == Op::CONST;
           }},
          {Pat::op(Op::ACCUMULATE, {Pat::op(Op::DEFINE_ACC), Pat::any()}), nullptr},
          {Pat::op(Op::CONST), [](const Match& m) { return m.root()->src.empty(); }},
          {Pat::any().where([](const Node& n) { return is_alu(n.op) && n.shape.empty(); }), nullptr},
      },
      nullptr};
  return spec;
}

std::string check_linear(const LinearProgram& prog) {
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> loops;
  std::unordered_set<const Node*> closed;
  for (size_t i = 0; i < prog.ops.size(); i++) {
    const Node* n = prog.ops[i].get();
    // A DEFINE_ACC names the loops it accumulates over; they open right after it.
    size_t checked = n->op == Op::DEFINE_ACC ? 1 : n->src.size();
    for (size_t k = 0; k < checked; k++) {
      const NodeRef& s = n->src[k];
      if (!seen.count(s.get()))
        return str("op ", i, " (", op_name(n->op), ") uses a value not computed before it");
      if (s->op == Op::RANGE && closed.count(s.get()) && n->op != Op::END)
        return str("op ", i, " (", op_name(n->op), ") uses a loop variable after its loop closed");
    }
    if (n->op == Op::RANGE) loops.push_back(n);
    if (n->op == Op::END) {
      if (loops.empty() || loops.back() != n->src[0].get())
        return str("op ", i, " closes a loop that is not innermost");
      closed.insert(loops.back());
      loops.pop_back();
    }
    seen.insert(n);
  }
  if (!loops.empty()) return str(loops.size(), " loops never close");
  return "";
}

std::string to_string(const LinearProgram& prog) {
  std::vector<std::pair<const Node*, int>> names;
  for (size_t i = 0; i < prog.ops.size(); i++) names.emplace_back(prog.ops[i].get(), static_cast<int>(i));
  std::sort(names.begin(), names.end());
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < prog.ops.size(); i++) {
    const Node& n = *prog.ops[i];
    if (n.op == Op::END) depth--;
    out += str("%", i, " ", std::string(2 * std::max(depth, 0), ' '), node_line(n, names), "\n");
    if (n.op == Op::RANGE) depth++;
  }
  return out;
}

}  // namespace lg
