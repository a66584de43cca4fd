#include "rewrite/rules/movement.h"

#include "ir/build.h"

namespace lg {

bool is_contiguous_buffer_view(const Node* n) {
  if (n->op == Op::RESHAPE) n = n->src[0].get();
  return n->op == Op::BUFFER;
}

ElementRange element_range(const Node* n) {
  const Node* x = n->op == Op::RESHAPE ? n->src[0].get() : n;
  if (x->op != Op::SHRINK) return {x, 0};  // a reshape keeps the row-major order
  const Node* v = x->src[0].get();
  if (v->shape.size() != 1) return {n, 0};
  if (v->op == Op::RESHAPE) v = v->src[0].get();  // a 1-D view of a value is its row-major order
  return {v, x->get_arg<Pairs>()[0].first};
}

static bool is_identity_perm(const Shape& p) {
  for (size_t i = 0; i < p.size(); i++)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

static bool all_zero(const Pairs& p) {
  for (auto [a, b] : p)
    if (a != 0 || b != 0) return false;
  return true;
}

static bool is_full(const Pairs& p, const Shape& s) {
  for (size_t i = 0; i < p.size(); i++)
    if (p[i].first != 0 || p[i].second != s[i]) return false;
  return true;
}

const PatternMatcher& pm_movement_cleanup() {
  Pat x = Pat::any("x");
  static const PatternMatcher pm({
      // a movement op that changes nothing is its source
      {"no-op movement", Pat::ops(op_set({Op::RESHAPE, Op::EXPAND}), {x}),
       [](const Match& m) { return m.root()->shape == m["x"]->shape ? m["x"] : NodeRef{}; }},
      {"identity permute", Pat::op(Op::PERMUTE, {x}),
       [](const Match& m) { return is_identity_perm(m.root()->get_arg<Shape>()) ? m["x"] : NodeRef{}; }},
      {"zero pad", Pat::op(Op::PAD, {x}),
       [](const Match& m) { return all_zero(m.root()->get_arg<Pairs>()) ? m["x"] : NodeRef{}; }},
      {"full shrink", Pat::op(Op::SHRINK, {x}),
       [](const Match& m) {
         return is_full(m.root()->get_arg<Pairs>(), m["x"]->shape) ? m["x"] : NodeRef{};
       }},
      {"no flip", Pat::op(Op::FLIP, {x}),
       [](const Match& m) {
         for (int64_t f : m.root()->get_arg<Shape>())
           if (f) return NodeRef{};
         return m["x"];
       }},
      // chains of the same movement op merge
      {"reshape of reshape", Pat::op(Op::RESHAPE, {Pat::op(Op::RESHAPE, {x})}),
       [](const Match& m) { return make(Op::RESHAPE, m.root()->dtype, {m["x"]}, m.root()->arg); }},
      {"expand of expand", Pat::op(Op::EXPAND, {Pat::op(Op::EXPAND, {x})}),
       [](const Match& m) { return make(Op::EXPAND, m.root()->dtype, {m["x"]}, m.root()->arg); }},
      {"permute of permute", Pat::op(Op::PERMUTE, {Pat::op(Op::PERMUTE, {x}).named("inner")}),
       [](const Match& m) {
         const Shape& outer = m.root()->get_arg<Shape>();
         const Shape& inner = m["inner"]->get_arg<Shape>();
         Shape p(outer.size());
         for (size_t i = 0; i < outer.size(); i++) p[i] = inner[outer[i]];
         return make(Op::PERMUTE, m.root()->dtype, {m["x"]}, p);
       }},
      // DETACH only stops gradients (tensor/gradient.h); the value is x's
      {"drop detach", Pat::op(Op::DETACH, {x}), [](const Match& m) { return m["x"]; }},
      // CONTIGUOUS of what already is contiguous in a buffer, or of a CONTIGUOUS
      {"contiguous of contiguous", Pat::op(Op::CONTIGUOUS, {x}),
       [](const Match& m) {
         const NodeRef& v = m["x"];
         return is_contiguous_buffer_view(v.get()) || v->op == Op::CONTIGUOUS ? v : NodeRef{};
       }},
  });
  return pm;
}

}  // namespace lg
