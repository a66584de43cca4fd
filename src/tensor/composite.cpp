// Composites built from primitive ops: softmax family, losses, norms, masks.
#include "ir/attention.h"
#include "tensor/internal.h"

namespace lg {

// The row maximum m only keeps exp() in range: softmax, log_softmax and logsumexp do not depend on
// it (their derivative with respect to m is exactly 0), so it is detached. Its gradient path would
// otherwise compute a mask of the maxima and keep x itself alive for the backward pass (for
// attention, an S x S float32 buffer per layer) to add what sums to zero.
static Tensor row_max(const Tensor& x, int64_t axis) { return x.max(axis, true).detach(); }

Tensor Tensor::softmax(int64_t axis) const {
  Tensor x = is_float(dtype()) ? *this : cast(dtypes::default_float);
  Tensor e = x.sub(row_max(x, axis)).exp();
  return e.div(e.sum(axis, true));
}

Tensor Tensor::log_softmax(int64_t axis) const {
  Tensor x = is_float(dtype()) ? *this : cast(dtypes::default_float);
  Tensor shifted = x.sub(row_max(x, axis));
  return shifted.sub(shifted.exp().sum(axis, true).log());
}

Tensor Tensor::logsumexp(int64_t axis, bool keepdim) const {
  Tensor x = is_float(dtype()) ? *this : cast(dtypes::default_float);
  Tensor m = row_max(x, axis);
  Tensor r = x.sub(m).exp().sum(axis, true).log().add(m);
  return keepdim ? r : r.squeeze(axis);
}

Tensor Tensor::cross_entropy(const Tensor& labels, const std::string& reduction, int64_t ignore_index) const {
  LG_USER_CHECK(ndim() >= 1 && labels.ndim() == ndim() - 1, "cross_entropy: logits ",
                detail::shape_str(shape()), " need labels of shape ",
                detail::shape_str(Shape(shape().begin(), shape().end() - 1)), ", got ",
                detail::shape_str(labels.shape()));
  LG_USER_CHECK(is_int(labels.dtype()), "cross_entropy: labels must be integers, got ", name(labels.dtype()));
  LG_USER_CHECK(reduction == "mean" || reduction == "sum" || reduction == "none",
                "cross_entropy: reduction must be \"mean\", \"sum\" or \"none\", got \"", reduction, "\"");
  // loss = log(sum(exp(shifted))) - shifted[label], with shifted = x - max(x) per row: the value of
  // -log_softmax(x)[label] (the same subtraction with its sign flipped, which rounds alike), but the
  // label's term is picked from shifted rather than from the log-probabilities. So the gradient is
  // elementwise, exp(shifted) * g / sum - (label == column ? g : 0): one pass over the logits with
  // no reduction over the row (the log-softmax's gradient sums the row's one-hot gradient back up),
  // and no log-probabilities of the vocabulary's size are formed. The label's term is a gather (one
  // element a row, not a pass over the row), whose gradient is that one-hot select (gradient.cpp);
  // a label outside the row (ignore_index) gathers 0, and its row's loss is masked below.
  Tensor x = is_float(dtype()) ? *this : cast(dtypes::default_float);
  Tensor shifted = x.sub(row_max(x, -1));
  Tensor log_sum = shifted.exp().sum(-1).log();
  Tensor picked = shifted.gather(-1, labels.unsqueeze(-1)).squeeze(-1);
  Tensor valid = labels.ne(labels.scalar_like(static_cast<double>(ignore_index)));
  Tensor loss = valid.where(log_sum.sub(picked), picked.scalar_like(0));
  if (reduction == "none") return loss;
  // The loss per row is realized before it is summed: a row value that reads the row's max and sum,
  // it joins the kernel of their row passes over the logits (schedule/multi_output.h), so a chunk's
  // logits are read by that kernel alone (their gradient, in a training step, joins it too) and
  // are freed before the next chunk's are made. Else the sum over rows would read them again.
  loss = loss.contiguous();
  if (reduction == "sum") return loss.sum();
  Tensor count = valid.cast(loss.dtype()).sum();
  return loss.sum().div(count);
}

Tensor Tensor::rms_norm(int64_t axis, double eps) const {
  Tensor x = is_float(dtype()) ? *this : cast(dtypes::default_float);
  return x.mul(x.square().mean(axis, true).add(x.scalar_like(eps)).rsqrt());
}

Tensor Tensor::layer_norm(int64_t axis, double eps) const {
  Tensor x = is_float(dtype()) ? *this : cast(dtypes::default_float);
  Tensor centered = x.sub(x.mean(axis, true));
  return centered.mul(x.var({axis}, true, 0).add(x.scalar_like(eps)).rsqrt());
}

Tensor Tensor::flash_attention(const Tensor& k, const Tensor& v, bool causal) const {
  auto shape_of = [](const Tensor& t) { return detail::shape_str(t.shape()); };
  LG_USER_CHECK(ndim() == 4 && k.ndim() == 4 && v.shape() == k.shape(), "flash_attention: needs q (B, H, S, D) and k, v ",
                "(B, KV, T, D), got q ", shape_of(*this), ", k ", shape_of(k), ", v ", shape_of(v));
  int64_t B = size(0), H = size(1), S = size(2), D = size(3), KV = k.size(1), T = k.size(2);
  LG_USER_CHECK(k.size(0) == B && k.size(3) == D, "flash_attention: k ", shape_of(k), " does not match q ", shape_of(*this),
                " in batch or head dim");
  LG_USER_CHECK(KV > 0 && H % KV == 0, "flash_attention: ", H, " query heads are not a multiple of ", KV, " kv heads");
  LG_USER_CHECK(T > 0 && D > 0, "flash_attention: needs at least one key and a head dim, got k ", shape_of(k));
  LG_USER_CHECK(!causal || S == T, "flash_attention: causal attention needs as many keys as queries, got S ", S, ", T ", T);
  LG_USER_CHECK(is_float(dtype()) && k.dtype() == dtype() && v.dtype() == dtype(), "flash_attention: q, k, v must share ",
                "one float dtype, got ", name(dtype()), ", ", name(k.dtype()), ", ", name(v.dtype()));
  LG_USER_CHECK(k.device() == device() && v.device() == device(), "flash_attention: q, k, v are on different devices");
  int64_t flags = causal ? kAttentionCausal : 0;
  Tensor both(make(Op::FLASH_ATTENTION, dtypes::float32, {node(), k.node(), v.node()}, flags));
  return both.slice(-1, 0, D).cast(dtype());
}

Tensor Tensor::one_hot(int64_t num_classes) const {
  LG_USER_CHECK(is_int(dtype()), "one_hot: needs an integer tensor, got ", name(dtype()));
  LG_USER_CHECK(num_classes > 0, "one_hot: num_classes must be positive, got ", num_classes);
  return unsqueeze(-1).eq(Tensor::arange(0, num_classes, 1, dtype(), device())).cast(dtypes::int32);
}

// Keeps elements with column - row >= diagonal (triu) or <= diagonal (tril) on the last two axes.
static Tensor band(const Tensor& x, int64_t diagonal, bool upper) {
  LG_USER_CHECK(x.ndim() >= 2, upper ? "triu" : "tril", ": needs at least 2 axes, got ",
                detail::shape_str(x.shape()));
  int64_t n = x.shape()[x.ndim() - 2], m = x.shape().back();
  Tensor rows = Tensor::arange(0, n, 1, dtypes::int64, x.device()).reshape({n, 1});
  Tensor cols = Tensor::arange(0, m, 1, dtypes::int64, x.device()).reshape({1, m});
  Tensor d = cols.sub(rows);
  Tensor keep = upper ? d.ge(d.scalar_like(static_cast<double>(diagonal)))
                      : d.le(d.scalar_like(static_cast<double>(diagonal)));
  return keep.where(x, x.scalar_like(0).cast(x.dtype()));
}

Tensor Tensor::triu(int64_t diagonal) const { return band(*this, diagonal, true); }
Tensor Tensor::tril(int64_t diagonal) const { return band(*this, diagonal, false); }

}  // namespace lg
