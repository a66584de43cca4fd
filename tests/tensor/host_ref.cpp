#include "tensor/host_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace lg::ref {
namespace {

// A mistake in a test's reference (wrong rank, bad axis): fail loudly, it is never an op's fault.
[[noreturn]] void bad(const std::string& what) { throw std::logic_error("host_ref: " + what); }

int64_t rank_of(const Shape& s) { return static_cast<int64_t>(s.size()); }

int64_t norm_axis(int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    bad("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return a;
}

std::vector<int64_t> unravel(int64_t flat, const Shape& s) {
  std::vector<int64_t> idx(s.size(), 0);
  for (int64_t i = rank_of(s) - 1; i >= 0; i--) {
    idx[i] = flat % s[i];
    flat /= s[i];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t flat = 0;
  for (size_t i = 0; i < s.size(); i++) flat = flat * s[i] + idx[i];
  return flat;
}

// Element of a (broadcast to out_shape) at out_idx: a's axes align with out's trailing axes.
double broadcast_at(const HostArray& a, const std::vector<int64_t>& out_idx) {
  size_t off = out_idx.size() - a.shape.size();
  int64_t flat = 0;
  for (size_t i = 0; i < a.shape.size(); i++)
    flat = flat * a.shape[i] + (a.shape[i] == 1 ? 0 : out_idx[off + i]);
  return a.data[flat];
}

// Calls f(outer, inner) for each line along `axis`: element j of the line is at outer*n*inner + j*inner +
// inner_i.
template <class F>
HostArray along_axis(const HostArray& a, int64_t axis, F line_fn) {
  int64_t ax = norm_axis(axis, rank_of(a.shape));
  int64_t n = a.shape[ax], inner = 1, outer = 1;
  for (int64_t i = ax + 1; i < rank_of(a.shape); i++) inner *= a.shape[i];
  for (int64_t i = 0; i < ax; i++) outer *= a.shape[i];
  HostArray out = a;
  std::vector<double> line(n);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      for (int64_t j = 0; j < n; j++) line[j] = a.data[(o * n + j) * inner + in];
      line_fn(line);
      for (int64_t j = 0; j < n; j++) out.data[(o * n + j) * inner + in] = line[j];
    }
  return out;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

double HostArray::at(const std::vector<int64_t>& index) const {
  if (index.size() != shape.size()) bad("at: index rank differs from " + shape_str(shape));
  return data[ravel(index, shape)];
}

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < shape.size(); i++) os << (i ? ", " : "") << shape[i];
  os << ")";
  return os.str();
}

HostArray full(const Shape& shape, double value) {
  return HostArray{shape, std::vector<double>(static_cast<size_t>(numel(shape)), value)};
}

HostArray array(const Shape& shape, std::vector<double> data) {
  if (static_cast<int64_t>(data.size()) != numel(shape))
    bad("array: " + std::to_string(data.size()) + " values for shape " + shape_str(shape));
  return HostArray{shape, std::move(data)};
}

HostArray generate(const Shape& shape, const std::function<double(const std::vector<int64_t>&)>& f) {
  HostArray out = full(shape, 0);
  for (int64_t i = 0; i < out.numel(); i++) out.data[i] = f(unravel(i, shape));
  return out;
}

uint64_t seed_from_name(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

HostArray random_fill(const Shape& shape, Fill fill, DType dtype, uint64_t seed) {
  uint64_t state = seed;
  auto uniform = [&] { return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53; };  // [0, 1)
  auto integer = [&](int64_t lo, int64_t hi) {                                              // [lo, hi]
    return static_cast<double>(lo +
                               static_cast<int64_t>(splitmix64(state) % static_cast<uint64_t>(hi - lo + 1)));
  };
  HostArray out = full(shape, 0);
  for (double& v : out.data) {
    switch (fill) {
      case Fill::Signed: v = -2 + 4 * uniform(); break;
      case Fill::Positive: v = 0.25 + 3.75 * uniform(); break;
      case Fill::NonZero: v = (0.5 + 1.5 * uniform()) * (splitmix64(state) & 1 ? 1 : -1); break;
      case Fill::SmallInt: v = integer(-3, 3); break;
      case Fill::Int: v = integer(-20, 20); break;
      case Fill::IntNonZero: v = integer(1, 7) * (splitmix64(state) & 1 ? 1 : -1); break;
      case Fill::Bool: v = integer(0, 1); break;
    }
    if (is_unsigned(dtype)) v = std::abs(v);
    if (is_bool(dtype)) v = v != 0;
  }
  // Never all equal (so never all zeros): make the first two elements differ.
  if (out.numel() >= 2 &&
      std::all_of(out.data.begin(), out.data.end(), [&](double x) { return x == out.data[0]; })) {
    out.data[0] = fill == Fill::Bool || is_bool(dtype) ? 1 : out.data[0] + 1;
    out.data[1] = fill == Fill::Bool || is_bool(dtype) ? 0 : out.data[1];
  }
  return round_to_dtype(out, dtype);
}

HostArray round_to_dtype(const HostArray& a, DType dtype) {
  return map(a, [dtype](double x) {
    if (is_float(dtype)) return round_to_float_dtype(x, dtype);
    if (is_bool(dtype)) return x != 0 ? 1.0 : 0.0;
    if (!std::isfinite(x)) return x;  // a float reference that escaped an integer op: let the compare fail
    return static_cast<double>(wrap_to_int_dtype(static_cast<int64_t>(std::trunc(x)), dtype));
  });
}

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  int64_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, rank_of(s));
  Shape out(rank, 1);
  for (const Shape& s : shapes)
    for (int64_t i = 0; i < rank_of(s); i++) {
      int64_t& o = out[rank - rank_of(s) + i];
      int64_t d = s[i];
      if (d != 1 && o != 1 && d != o) bad("broadcast: incompatible " + shape_str(s));
      if (d != 1) o = d;
    }
  return out;
}

HostArray map(const HostArray& a, const std::function<double(double)>& f) {
  HostArray out = a;
  for (double& v : out.data) v = f(v);
  return out;
}

HostArray map2(const HostArray& a, const HostArray& b, const std::function<double(double, double)>& f) {
  return generate(broadcast_shapes({a.shape, b.shape}),
                  [&](const std::vector<int64_t>& i) { return f(broadcast_at(a, i), broadcast_at(b, i)); });
}

HostArray map3(const HostArray& a, const HostArray& b, const HostArray& c,
               const std::function<double(double, double, double)>& f) {
  return generate(broadcast_shapes({a.shape, b.shape, c.shape}), [&](const std::vector<int64_t>& i) {
    return f(broadcast_at(a, i), broadcast_at(b, i), broadcast_at(c, i));
  });
}

HostArray reshape(const HostArray& a, const Shape& shape) {
  Shape s = shape;
  auto infer = std::find(s.begin(), s.end(), -1);
  if (infer != s.end()) {
    *infer = 1;
    *infer = a.numel() / numel(s);
  }
  if (numel(s) != a.numel()) bad("reshape: " + shape_str(a.shape) + " to " + shape_str(shape));
  return HostArray{s, a.data};
}

HostArray permute(const HostArray& a, const std::vector<int64_t>& order) {
  if (order.size() != a.shape.size()) bad("permute: order rank");
  Shape s(order.size());
  for (size_t i = 0; i < order.size(); i++) s[i] = a.shape[norm_axis(order[i], rank_of(a.shape))];
  return generate(s, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> src(i.size());
    for (size_t k = 0; k < order.size(); k++) src[norm_axis(order[k], rank_of(a.shape))] = i[k];
    return a.at(src);
  });
}

HostArray transpose(const HostArray& a, int64_t x, int64_t y) {
  std::vector<int64_t> order(a.shape.size());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[norm_axis(x, rank_of(a.shape))], order[norm_axis(y, rank_of(a.shape))]);
  return permute(a, order);
}

HostArray expand(const HostArray& a, const Shape& shape) {
  Shape s = shape;
  size_t off = s.size() - a.shape.size();
  for (size_t i = 0; i < a.shape.size(); i++)
    if (s[off + i] == -1) s[off + i] = a.shape[i];
  if (broadcast_shapes({a.shape, s}) != s) bad("expand: " + shape_str(a.shape) + " to " + shape_str(shape));
  return generate(s, [&](const std::vector<int64_t>& i) { return broadcast_at(a, i); });
}

HostArray pad(const HostArray& a, const Pairs& pads, double value) {
  if (pads.size() != a.shape.size()) bad("pad: one pair per axis");
  Shape s = a.shape;
  for (size_t i = 0; i < s.size(); i++) s[i] += pads[i].first + pads[i].second;
  return generate(s, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> src(i.size());
    for (size_t k = 0; k < i.size(); k++) {
      src[k] = i[k] - pads[k].first;
      if (src[k] < 0 || src[k] >= a.shape[k]) return value;
    }
    return a.at(src);
  });
}

HostArray shrink(const HostArray& a, const Pairs& ranges) {
  if (ranges.size() != a.shape.size()) bad("shrink: one range per axis");
  Shape s(ranges.size());
  for (size_t i = 0; i < s.size(); i++) s[i] = ranges[i].second - ranges[i].first;
  return generate(s, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> src(i.size());
    for (size_t k = 0; k < i.size(); k++) src[k] = i[k] + ranges[k].first;
    return a.at(src);
  });
}

HostArray slice(const HostArray& a, int64_t axis, int64_t begin, int64_t end) {
  Pairs r;
  for (int64_t d : a.shape) r.push_back({0, d});
  r[norm_axis(axis, rank_of(a.shape))] = {begin, end};
  return shrink(a, r);
}

HostArray flip(const HostArray& a, const std::vector<int64_t>& axes) {
  std::vector<bool> flipped(a.shape.size(), false);
  for (int64_t ax : axes) flipped[norm_axis(ax, rank_of(a.shape))] = true;
  return generate(a.shape, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> src = i;
    for (size_t k = 0; k < i.size(); k++)
      if (flipped[k]) src[k] = a.shape[k] - 1 - i[k];
    return a.at(src);
  });
}

HostArray unsqueeze(const HostArray& a, int64_t axis) {
  Shape s = a.shape;
  s.insert(s.begin() + norm_axis(axis, rank_of(s) + 1), 1);
  return HostArray{s, a.data};
}

HostArray squeeze(const HostArray& a, int64_t axis) {
  Shape s = a.shape;
  int64_t ax = norm_axis(axis, rank_of(s));
  if (s[ax] != 1) bad("squeeze: axis is not size 1");
  s.erase(s.begin() + ax);
  return HostArray{s, a.data};
}

HostArray flatten(const HostArray& a, int64_t start, int64_t end) {
  if (a.shape.empty()) return HostArray{{1}, a.data};
  int64_t b = norm_axis(start, rank_of(a.shape)), e = norm_axis(end, rank_of(a.shape));
  Shape s(a.shape.begin(), a.shape.begin() + b);
  s.push_back(numel(Shape(a.shape.begin() + b, a.shape.begin() + e + 1)));
  s.insert(s.end(), a.shape.begin() + e + 1, a.shape.end());
  return HostArray{s, a.data};
}

HostArray cat(const std::vector<HostArray>& as, int64_t axis) {
  int64_t ax = norm_axis(axis, rank_of(as.at(0).shape));
  Shape s = as[0].shape;
  s[ax] = 0;
  std::vector<int64_t> starts;
  for (const HostArray& a : as) {
    starts.push_back(s[ax]);
    s[ax] += a.shape[ax];
  }
  return generate(s, [&](const std::vector<int64_t>& i) {
    size_t k = as.size() - 1;
    while (i[ax] < starts[k]) k--;
    std::vector<int64_t> src = i;
    src[ax] -= starts[k];
    return as[k].at(src);
  });
}

HostArray stack(const std::vector<HostArray>& as, int64_t axis) {
  std::vector<HostArray> us;
  for (const HostArray& a : as) us.push_back(unsqueeze(a, axis));
  return cat(us, axis);  // unsqueeze already placed the new axis; a negative axis means the same one
}

HostArray repeat(const HostArray& a, const std::vector<int64_t>& repeats) {
  if (repeats.size() < a.shape.size()) bad("repeat: fewer repeats than axes");
  HostArray x = reshape(a, [&] {
    Shape s(repeats.size() - a.shape.size(), 1);
    s.insert(s.end(), a.shape.begin(), a.shape.end());
    return s;
  }());
  Shape s = x.shape;
  for (size_t i = 0; i < s.size(); i++) s[i] *= repeats[i];
  return generate(s, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> src(i.size());
    for (size_t k = 0; k < i.size(); k++) src[k] = i[k] % x.shape[k];
    return x.at(src);
  });
}

HostArray gather(const HostArray& a, int64_t axis, const HostArray& index) {
  int64_t ax = norm_axis(axis, rank_of(a.shape));
  if (index.shape.size() != a.shape.size()) bad("gather: index rank differs");
  return generate(index.shape, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> src = i;
    src[ax] = static_cast<int64_t>(index.at(i));
    if (src[ax] < 0 || src[ax] >= a.shape[ax]) bad("gather: index out of range");
    return a.at(src);
  });
}

HostArray reduce(const HostArray& a, Reduce op, std::vector<int64_t> axes, bool keepdim) {
  int64_t rank = rank_of(a.shape);
  if (axes.empty())
    for (int64_t i = 0; i < rank; i++) axes.push_back(i);
  std::vector<bool> reduced(rank, false);
  for (int64_t ax : axes) reduced[norm_axis(ax, rank)] = true;
  Shape kept = a.shape;
  int64_t count = 1;
  for (int64_t i = 0; i < rank; i++)
    if (reduced[i]) {
      count *= kept[i];
      kept[i] = 1;
    }
  double init = op == Reduce::Prod  ? 1
                : op == Reduce::Max ? -std::numeric_limits<double>::infinity()
                : op == Reduce::Min ? std::numeric_limits<double>::infinity()
                                    : 0;
  HostArray out = full(kept, init);
  for (int64_t f = 0; f < a.numel(); f++) {
    std::vector<int64_t> i = unravel(f, a.shape);
    for (int64_t k = 0; k < rank; k++)
      if (reduced[k]) i[k] = 0;
    double& acc = out.data[ravel(i, kept)];
    double v = a.data[f];
    switch (op) {
      case Reduce::Sum:
      case Reduce::Mean: acc += v; break;
      case Reduce::Prod: acc *= v; break;
      case Reduce::Max: acc = nan_max(acc, v); break;
      case Reduce::Min: acc = nan_min(acc, v); break;
    }
  }
  if (op == Reduce::Mean)
    for (double& v : out.data) v /= static_cast<double>(count);
  if (!keepdim) {
    Shape s;
    for (int64_t i = 0; i < rank; i++)
      if (!reduced[i]) s.push_back(kept[i]);
    out.shape = s;
  }
  return out;
}

HostArray var(const HostArray& a, const std::vector<int64_t>& axes, bool keepdim, int64_t correction) {
  HostArray mean = reduce(a, Reduce::Mean, axes, true);
  HostArray sq = map2(a, mean, [](double x, double m) { return (x - m) * (x - m); });
  HostArray sum = reduce(sq, Reduce::Sum, axes, keepdim);
  double count = static_cast<double>(a.numel() / mean.numel());
  return map(sum, [&](double s) { return s / std::max(0.0, count - static_cast<double>(correction)); });
}

HostArray argmax(const HostArray& a, int64_t axis, bool keepdim) {
  HostArray idx = along_axis(a, axis, [](std::vector<double>& line) {
    size_t best = 0;
    for (size_t j = 1; j < line.size(); j++)
      if (line[j] > line[best]) best = j;
    std::fill(line.begin(), line.end(), static_cast<double>(best));
  });
  return reduce(idx, Reduce::Max, {axis}, keepdim);  // every entry of a line holds the same index
}

HostArray matmul(const HostArray& a0, const HostArray& b0) {
  bool a_vec = a0.shape.size() == 1, b_vec = b0.shape.size() == 1;
  HostArray a = a_vec ? unsqueeze(a0, 0) : a0;
  HostArray b = b_vec ? unsqueeze(b0, 1) : b0;
  int64_t n = a.shape[a.shape.size() - 2], k = a.shape.back(), m = b.shape.back();
  if (b.shape[b.shape.size() - 2] != k) bad("matmul: inner dimensions differ");
  Shape batch = broadcast_shapes(
      {Shape(a.shape.begin(), a.shape.end() - 2), Shape(b.shape.begin(), b.shape.end() - 2)});
  Shape s = batch;
  s.push_back(n);
  s.push_back(m);
  HostArray ae = expand(a, [&] {
    Shape t = batch;
    t.push_back(n);
    t.push_back(k);
    return t;
  }());
  HostArray be = expand(b, [&] {
    Shape t = batch;
    t.push_back(k);
    t.push_back(m);
    return t;
  }());
  HostArray out = generate(s, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> ai = i, bi = i;
    double acc = 0;
    for (int64_t j = 0; j < k; j++) {
      ai.back() = j;
      bi[bi.size() - 2] = j;
      acc += ae.at(ai) * be.at(bi);
    }
    return acc;
  });
  if (b_vec) out = squeeze(out, -1);
  if (a_vec) out = squeeze(out, -1 - (b_vec ? 0 : 1));
  return out;
}

HostArray softmax(const HostArray& a, int64_t axis) {
  return along_axis(a, axis, [](std::vector<double>& line) {
    double mx = *std::max_element(line.begin(), line.end()), sum = 0;
    for (double& v : line) sum += (v = std::exp(v - mx));
    for (double& v : line) v /= sum;
  });
}

HostArray log_softmax(const HostArray& a, int64_t axis) {
  return along_axis(a, axis, [](std::vector<double>& line) {
    double mx = *std::max_element(line.begin(), line.end()), sum = 0;
    for (double v : line) sum += std::exp(v - mx);
    for (double& v : line) v = v - mx - std::log(sum);
  });
}

HostArray logsumexp(const HostArray& a, int64_t axis, bool keepdim) {
  HostArray lse = along_axis(a, axis, [](std::vector<double>& line) {
    double mx = *std::max_element(line.begin(), line.end()), sum = 0;
    for (double v : line) sum += std::exp(v - mx);
    std::fill(line.begin(), line.end(), mx + std::log(sum));
  });
  return reduce(lse, Reduce::Max, {axis}, keepdim);
}

HostArray cross_entropy(const HostArray& logits, const HostArray& labels, const std::string& reduction,
                        int64_t ignore_index) {
  HostArray lsm = log_softmax(logits, -1);
  int64_t c = logits.shape.back();
  HostArray loss = full(labels.shape, 0);
  double count = 0;
  for (int64_t i = 0; i < labels.numel(); i++) {
    auto label = static_cast<int64_t>(labels.data[i]);
    if (label == ignore_index) continue;
    loss.data[i] = -lsm.data[i * c + label];
    count += 1;
  }
  if (reduction == "none") return loss;
  double sum = std::accumulate(loss.data.begin(), loss.data.end(), 0.0);
  if (reduction == "sum") return full({}, sum);
  if (reduction == "mean") return full({}, sum / count);
  bad("cross_entropy: reduction " + reduction);
}

HostArray rms_norm(const HostArray& a, int64_t axis, double eps) {
  return along_axis(a, axis, [eps](std::vector<double>& line) {
    double ms = 0;
    for (double v : line) ms += v * v;
    ms /= static_cast<double>(line.size());
    for (double& v : line) v /= std::sqrt(ms + eps);
  });
}

HostArray layer_norm(const HostArray& a, int64_t axis, double eps) {
  return along_axis(a, axis, [eps](std::vector<double>& line) {
    double n = static_cast<double>(line.size()), mean = 0, var = 0;
    for (double v : line) mean += v / n;
    for (double v : line) var += (v - mean) * (v - mean) / n;
    for (double& v : line) v = (v - mean) / std::sqrt(var + eps);
  });
}

HostArray one_hot(const HostArray& a, int64_t num_classes) {
  Shape s = a.shape;
  s.push_back(num_classes);
  return generate(s, [&](const std::vector<int64_t>& i) {
    std::vector<int64_t> src(i.begin(), i.end() - 1);
    return a.at(src) == static_cast<double>(i.back()) ? 1.0 : 0.0;
  });
}

HostArray triu(const HostArray& a, int64_t diagonal) {
  return generate(a.shape, [&](const std::vector<int64_t>& i) {
    return i[i.size() - 1] - i[i.size() - 2] >= diagonal ? a.at(i) : 0.0;
  });
}

HostArray tril(const HostArray& a, int64_t diagonal) {
  return generate(a.shape, [&](const std::vector<int64_t>& i) {
    return i[i.size() - 1] - i[i.size() - 2] <= diagonal ? a.at(i) : 0.0;
  });
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double silu(double x) { return x * sigmoid(x); }
double gelu_tanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}
double c_idiv(double a, double b) { return std::trunc(a / b); }
double c_mod(double a, double b) { return a - std::trunc(a / b) * b; }
double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }

}  // namespace lg::ref
