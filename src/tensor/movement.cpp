// Movement operations (views: they only change how elements are indexed) and what is built on them.
#include <algorithm>
#include <numeric>

#include "tensor/internal.h"

namespace lg {

using detail::norm_axis;
using detail::shape_str;

Tensor Tensor::reshape(const Shape& want) const {
  Shape s = want;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == -1) {
      LG_USER_CHECK(infer < 0, "reshape: more than one -1 in ", shape_str(want));
      infer = static_cast<int64_t>(i);
    } else {
      LG_USER_CHECK(s[i] >= 0, "reshape: negative size in ", shape_str(want));
      known *= s[i];
    }
  }
  if (infer >= 0) {
    LG_USER_CHECK(known != 0 && numel() % known == 0, "reshape: cannot infer -1 of ", shape_str(want),
                  " for ", numel(), " elements");
    s[infer] = numel() / known;
  }
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  LG_USER_CHECK(n == numel(), "reshape: cannot reshape ", shape_str(shape()), " into ", shape_str(s),
                ": element counts differ (", numel(), " vs ", n, ")");
  if (s == shape()) return *this;
  return Tensor(make(Op::RESHAPE, dtype(), {node()}, s));
}

Tensor Tensor::permute(const std::vector<int64_t>& order) const {
  LG_USER_CHECK(static_cast<int64_t>(order.size()) == ndim(), "permute: ", order.size(),
                " axes given for a tensor of rank ", ndim());
  Shape p;
  std::vector<bool> seen(order.size(), false);
  for (int64_t a : order) {
    int64_t ax = norm_axis(a, ndim(), "permute");
    LG_USER_CHECK(!seen[ax], "permute: axis ", a, " appears twice");
    seen[ax] = true;
    p.push_back(ax);
  }
  return Tensor(make(Op::PERMUTE, dtype(), {node()}, p));
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  std::vector<int64_t> order(ndim());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[norm_axis(a, ndim(), "transpose")], order[norm_axis(b, ndim(), "transpose")]);
  return permute(order);
}

Tensor Tensor::expand(const Shape& want) const {
  LG_USER_CHECK(want.size() >= shape().size(), "expand: cannot expand ", shape_str(shape()),
                " to fewer axes ", shape_str(want));
  Shape s = want;
  size_t lead = want.size() - shape().size();
  Shape src(lead, 1);
  src.insert(src.end(), shape().begin(), shape().end());
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == -1) s[i] = src[i];
    LG_USER_CHECK(src[i] == s[i] || src[i] == 1, "expand: axis ", i, " of ", shape_str(shape()), " has size ",
                  src[i], ", which cannot expand to ", s[i], " (only size-1 axes expand)");
  }
  Tensor x = reshape(src);
  if (s == x.shape()) return x;
  return Tensor(make(Op::EXPAND, dtype(), {x.node()}, s));
}

Tensor Tensor::pad(const Pairs& pads, double value) const {
  LG_USER_CHECK(static_cast<int64_t>(pads.size()) == ndim(), "pad: ", pads.size(),
                " (before, after) pairs for rank ", ndim());
  for (auto [a, b] : pads) LG_USER_CHECK(a >= 0 && b >= 0, "pad: negative padding; use shrink to cut");
  Tensor padded(make(Op::PAD, dtype(), {node()}, pads));
  if (value == 0) return padded;
  Tensor mask = Tensor::full(shape(), 1, dtypes::boolean, device());
  mask = Tensor(make(Op::PAD, dtypes::boolean, {mask.node()}, pads));
  return mask.where(padded, padded.scalar_like(value).cast(dtype()));
}

Tensor Tensor::shrink(const Pairs& ranges) const {
  LG_USER_CHECK(static_cast<int64_t>(ranges.size()) == ndim(), "shrink: ", ranges.size(), " ranges for rank ",
                ndim());
  for (size_t i = 0; i < ranges.size(); i++)
    LG_USER_CHECK(
        0 <= ranges[i].first && ranges[i].first <= ranges[i].second && ranges[i].second <= shape()[i],
        "shrink: range [", ranges[i].first, ", ", ranges[i].second, ") is not inside axis ", i, " of size ",
        shape()[i]);
  return Tensor(make(Op::SHRINK, dtype(), {node()}, ranges));
}

Tensor Tensor::slice(int64_t axis, int64_t begin, int64_t end) const {
  int64_t a = norm_axis(axis, ndim(), "slice");
  Pairs r;
  for (int64_t i = 0; i < ndim(); i++) r.emplace_back(0, shape()[i]);
  r[a] = {begin, end};
  return shrink(r);
}

Tensor Tensor::flip(const std::vector<int64_t>& axes) const {
  Shape flags(ndim(), 0);
  for (int64_t a : axes) flags[norm_axis(a, ndim(), "flip")] = 1;
  return Tensor(make(Op::FLIP, dtype(), {node()}, flags));
}

Tensor Tensor::unsqueeze(int64_t axis) const {
  int64_t a = axis < 0 ? axis + ndim() + 1 : axis;
  LG_USER_CHECK(a >= 0 && a <= ndim(), "unsqueeze: axis ", axis, " out of range for rank ", ndim());
  Shape s = shape();
  s.insert(s.begin() + a, 1);
  return reshape(s);
}

Tensor Tensor::squeeze(int64_t axis) const {
  int64_t a = norm_axis(axis, ndim(), "squeeze");
  LG_USER_CHECK(shape()[a] == 1, "squeeze: axis ", axis, " has size ", shape()[a], ", not 1");
  Shape s = shape();
  s.erase(s.begin() + a);
  return reshape(s);
}

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  if (ndim() == 0) return reshape({1});
  int64_t a = norm_axis(start, ndim(), "flatten"), b = norm_axis(end, ndim(), "flatten");
  LG_USER_CHECK(a <= b, "flatten: start axis ", start, " is after end axis ", end);
  Shape s(shape().begin(), shape().begin() + a);
  int64_t n = 1;
  for (int64_t i = a; i <= b; i++) n *= shape()[i];
  s.push_back(n);
  s.insert(s.end(), shape().begin() + b + 1, shape().end());
  return reshape(s);
}

// Each input is padded to the full size along axis at its offset; the padded tensors add up.
Tensor Tensor::cat(const std::vector<Tensor>& ts, int64_t axis) {
  LG_USER_CHECK(!ts.empty(), "cat: no tensors given");
  int64_t nd = ts[0].ndim(), a = norm_axis(axis, nd, "cat");
  DType t = ts[0].dtype();
  int64_t total = 0;
  for (const Tensor& x : ts) {
    LG_USER_CHECK(x.ndim() == nd, "cat: tensors of rank ", nd, " and ", x.ndim());
    for (int64_t i = 0; i < nd; i++)
      LG_USER_CHECK(i == a || x.shape()[i] == ts[0].shape()[i], "cat: shapes ", shape_str(ts[0].shape()),
                    " and ", shape_str(x.shape()), " differ outside axis ", a);
    t = promote(t, x.dtype());
    total += x.shape()[a];
  }
  Tensor out;
  int64_t offset = 0;
  for (const Tensor& x : ts) {
    Pairs p(nd, {0, 0});
    p[a] = {offset, total - offset - x.shape()[a]};
    offset += x.shape()[a];
    Tensor part = x.cast(t).pad(p);
    out = out.defined() ? (is_bool(t) ? out.logical_or(part) : out.add(part)) : part;
  }
  return out;
}

Tensor Tensor::stack(const std::vector<Tensor>& ts, int64_t axis) {
  LG_USER_CHECK(!ts.empty(), "stack: no tensors given");
  std::vector<Tensor> u;
  for (const Tensor& x : ts) {
    LG_USER_CHECK(x.shape() == ts[0].shape(), "stack: shapes ", shape_str(ts[0].shape()), " and ",
                  shape_str(x.shape()), " differ");
    u.push_back(x.unsqueeze(axis));
  }
  return cat(u, axis);
}

std::vector<Tensor> Tensor::split(int64_t size, int64_t axis) const {
  LG_USER_CHECK(size > 0, "split: chunk size must be positive, got ", size);
  int64_t a = norm_axis(axis, ndim(), "split");
  std::vector<int64_t> sizes;
  for (int64_t at = 0; at < shape()[a]; at += size) sizes.push_back(std::min(size, shape()[a] - at));
  return split(sizes, a);
}

std::vector<Tensor> Tensor::split(const std::vector<int64_t>& sizes, int64_t axis) const {
  int64_t a = norm_axis(axis, ndim(), "split");
  int64_t sum = 0;
  for (int64_t s : sizes) sum += s;
  LG_USER_CHECK(sum == shape()[a], "split: sizes add up to ", sum, " but axis ", a, " has size ", shape()[a]);
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(a, at, at + s));
    at += s;
  }
  return out;
}

// (s0, s1) repeated (r0, r1): reshape to (1, s0, 1, s1), expand to (r0, s0, r1, s1), merge pairs.
Tensor Tensor::repeat(const std::vector<int64_t>& repeats) const {
  LG_USER_CHECK(static_cast<int64_t>(repeats.size()) >= ndim(), "repeat: ", repeats.size(),
                " repeats for rank ", ndim());
  Shape base(repeats.size() - ndim(), 1);
  base.insert(base.end(), shape().begin(), shape().end());
  Shape unit, expanded, merged;
  for (size_t i = 0; i < repeats.size(); i++) {
    LG_USER_CHECK(repeats[i] >= 0, "repeat: negative repeat count");
    unit.insert(unit.end(), {1, base[i]});
    expanded.insert(expanded.end(), {repeats[i], base[i]});
    merged.push_back(repeats[i] * base[i]);
  }
  return reshape(unit).expand(expanded).reshape(merged);
}

// gather: one GATHER node; the kernel loads the index, then the element it points at.
Tensor Tensor::gather(int64_t axis, const Tensor& index) const {
  int64_t a = norm_axis(axis, ndim(), "gather");
  LG_USER_CHECK(index.ndim() == ndim(), "gather: index has rank ", index.ndim(), ", tensor has rank ",
                ndim());
  LG_USER_CHECK(is_int(index.dtype()), "gather: index must be an integer tensor, got ", name(index.dtype()));
  LG_USER_CHECK(index.device() == device(), "gather: index is on ", index.device(), ", the tensor on ", device());
  for (int64_t i = 0; i < ndim(); i++)
    LG_USER_CHECK(i == a || index.shape()[i] <= shape()[i], "gather: index axis ", i, " (", index.shape()[i],
                  ") is larger than the tensor's (", shape()[i], ")");
  return Tensor(make(Op::GATHER, dtype(), {node(), index.node()}, a));
}

}  // namespace lg
