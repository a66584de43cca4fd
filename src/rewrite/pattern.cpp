#include "rewrite/pattern.h"

#include "base/error.h"

namespace lg {

Pat Pat::with(const std::function<void(Data&)>& f) const {
  auto d = std::make_shared<Data>(*d_);
  f(*d);
  return Pat(std::move(d));
}

Pat Pat::any(std::string_view name) {
  auto d = std::make_shared<Data>();
  d->name = name;
  return Pat(std::move(d));
}

Pat Pat::ops(OpSet ops, std::vector<Pat> src) {
  auto d = std::make_shared<Data>();
  d->ops = ops;
  d->any_op = false;
  bool comm = ops.count() > 0 && src.size() == 2;
  for (size_t i = 0; i < ops.size() && comm; i++)
    if (ops.test(i) && !is_commutative(static_cast<Op>(i))) comm = false;
  d->mode = comm ? SrcMode::Commutative : SrcMode::Ordered;
  d->src = std::move(src);
  return Pat(std::move(d));
}

Pat Pat::ops(OpSet ops) {
  auto d = std::make_shared<Data>();
  d->ops = ops;
  d->any_op = false;
  return Pat(std::move(d));
}

Pat Pat::op(Op op, std::vector<Pat> src) { return ops(op_set({op}), std::move(src)); }
Pat Pat::op(Op op) { return ops(op_set({op})); }
Pat Pat::cvar(std::string_view name) { return op(Op::CONST).named(name); }
Pat Pat::cnst(double value) {
  return op(Op::CONST).with([&](Data& d) {
    d.has_value = true;
    d.value = value;
  });
}

Pat Pat::named(std::string_view name) const {
  return with([&](Data& d) { d.name = name; });
}
Pat Pat::dtype(DType t) const {
  return with([&](Data& d) {
    d.has_dtype = true;
    d.dtype = t;
  });
}
Pat Pat::dtype_if(bool (*pred)(DType)) const {
  return with([&](Data& d) { d.dtype_pred = pred; });
}
Pat Pat::ordered() const {
  return with([](Data& d) {
    if (d.mode == SrcMode::Commutative) d.mode = SrcMode::Ordered;
  });
}
Pat Pat::prefix() const {
  return with([](Data& d) { d.mode = SrcMode::Prefix; });
}
Pat Pat::arg(Arg a) const {
  return with([&](Data& d) {
    d.has_arg = true;
    d.arg = a;
  });
}
Pat Pat::where(std::function<bool(const Node&)> pred) const {
  return with([&](Data& d) { d.pred = std::move(pred); });
}

OpSet Pat::root_ops() const { return d_->any_op ? OpSet().set() : d_->ops; }

bool Pat::match_src(const Node* n, Captures& caps) const {
  const auto& ps = d_->src;
  switch (d_->mode) {
    case SrcMode::Any: return true;
    case SrcMode::Ordered:
    case SrcMode::Prefix: {
      if (d_->mode == SrcMode::Ordered ? n->src.size() != ps.size() : n->src.size() < ps.size()) return false;
      for (size_t i = 0; i < ps.size(); i++)
        if (!ps[i].match(n->src[i].get(), caps)) return false;
      return true;
    }
    case SrcMode::Commutative: {
      if (n->src.size() != 2) return false;
      size_t mark = caps.items.size();
      if (ps[0].match(n->src[0].get(), caps) && ps[1].match(n->src[1].get(), caps)) return true;
      caps.items.resize(mark);
      return ps[0].match(n->src[1].get(), caps) && ps[1].match(n->src[0].get(), caps);
    }
  }
  return false;
}

bool Pat::match(const Node* n, Captures& caps) const {
  const Data& d = *d_;
  if (!d.any_op && !d.ops.test(static_cast<size_t>(n->op))) return false;
  if (d.has_dtype && !(n->dtype == d.dtype)) return false;
  if (d.dtype_pred && !d.dtype_pred(n->dtype)) return false;
  if (d.has_value && !n->is_const_value(d.value)) return false;
  if (d.has_arg && !arg_equal(n->arg, d.arg)) return false;
  if (!d.name.empty()) {
    if (const Node* prev = caps.find(d.name)) {
      if (prev != n) return false;
    }
  }
  size_t mark = caps.items.size();
  if (!d.name.empty() && !caps.find(d.name)) caps.items.emplace_back(d.name, n);
  if (!match_src(n, caps) || (d.pred && !d.pred(*n))) {
    caps.items.resize(mark);
    return false;
  }
  return true;
}

Pat operator+(const Pat& a, const Pat& b) { return Pat::op(Op::ADD, {a, b}); }
Pat operator*(const Pat& a, const Pat& b) { return Pat::op(Op::MUL, {a, b}); }
Pat operator/(const Pat& a, const Pat& b) { return Pat::op(Op::IDIV, {a, b}); }
Pat operator%(const Pat& a, const Pat& b) { return Pat::op(Op::MOD, {a, b}); }
Pat operator+(const Pat& a, double c) { return a + Pat::cnst(c); }
Pat operator*(const Pat& a, double c) { return a * Pat::cnst(c); }
Pat operator/(const Pat& a, double c) { return a / Pat::cnst(c); }
Pat operator%(const Pat& a, double c) { return a % Pat::cnst(c); }

}  // namespace lg
