#include "base/error.h"
#include "ir/graph.h"
#include "rewrite/rules/movement.h"
#include "schedule/kernelize.h"

namespace lg {

static OpSet alu_ops() {
  OpSet s;
  for (int i = 0; i < kNumOps; i++)
    if (is_alu(static_cast<Op>(i)) && static_cast<Op>(i) != Op::MULACC) s.set(i);
  return s;
}

const Spec& tensor_spec() {
  static const Spec spec{
      "tensor",
      {
          {Pat::ops(op_set({Op::SINK, Op::DEVICE, Op::BUFFER, Op::IOTA, Op::DEFINE_VAR, Op::CONTIGUOUS,
                            Op::REDUCE_AXIS})),
           nullptr},
          {Pat::op(Op::CONST), [](const Match& m) { return m.root()->src.size() == 1; }},
          {Pat::ops(alu_ops()), nullptr},
          {Pat::ops(op_set({Op::RESHAPE, Op::PERMUTE, Op::EXPAND, Op::PAD, Op::SHRINK, Op::FLIP})), nullptr},
          {Pat::op(Op::COPY, {Pat::any(), Pat::op(Op::DEVICE)}), nullptr},
          {Pat::op(Op::GATHER), nullptr},
          {Pat::ops(op_set({Op::FLASH_ATTENTION, Op::FLASH_ATTENTION_GRAD})), nullptr},
          {Pat::op(Op::SCATTER_ADD, {Pat::any("t"), Pat::any(), Pat::any()}),
           [](const Match& m) {
             const Node* t = m["t"].get();
             if (t->op == Op::ASSIGN) return true;
             if (t->op == Op::RESHAPE) t = t->src[0].get();
             return t->op == Op::BUFFER;
           }},
          {Pat::op(Op::ASSIGN, {Pat::any("t"), Pat::any()}),  // into a buffer or a run of one
           [](const Match& m) { return element_range(m["t"].get()).base->op == Op::BUFFER; }},
      },
      nullptr};
  return spec;
}

const Spec& kernel_spec() {
  static const Spec spec{
      "kernel",
      {
          {Pat::op(Op::SINK),
           [](const Match& m) {
             for (const NodeRef& s : m.root()->src)
               if (s->op != Op::STORE && s->op != Op::ATTENTION) return false;
             return true;
           }},
          {Pat::op(Op::ATTENTION), [](const Match& m) {  // (block RANGE, DEFINE_GLOBALs...)
             const NodeRef& a = m.root();
             if (a->src.empty() || a->src[0]->op != Op::RANGE) return false;
             for (size_t i = 1; i < a->src.size(); i++)
               if (a->src[i]->op != Op::DEFINE_GLOBAL) return false;
             return true;
           }},
          {Pat::op(Op::STORE, {Pat::op(Op::INDEX), Pat::any()}), nullptr},
          {Pat::op(Op::INDEX, {Pat::op(Op::DEFINE_GLOBAL), Pat::any().dtype(dtypes::index)}).prefix(),
           nullptr},
          {Pat::ops(op_set({Op::LOAD, Op::DEFINE_GLOBAL, Op::RANGE, Op::REDUCE, Op::DEFINE_VAR})), nullptr},
          {Pat::op(Op::CONST), [](const Match& m) { return m.root()->src.empty(); }},
          {Pat::ops(alu_ops() | op_set({Op::MULACC})),
           [](const Match& m) { return m.root()->shape.empty(); }},
      },
      [](const NodeRef& root) -> std::string {
        // every RANGE a value uses is either an output loop or closed by a REDUCE around it
        return root->op == Op::SINK ? "" : "a kernel's root must be a SINK";
      }};
  return spec;
}

}  // namespace lg
