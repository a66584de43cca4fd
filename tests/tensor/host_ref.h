#pragma once
// Host reference: the meaning of every Tensor operation written as plain C++ loops over row-major
// arrays of doubles. The op harness (op_harness_test.cpp) compares each lazygrad op against these.
// Nothing here knows about the IR, the scheduler or any device; shapes follow numpy.
//
// Conventions: axes may be negative (counted from the end); an empty axis list in a reduction means
// every axis; a 0-d array has shape () and one element.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/node.h"

namespace lg::ref {

struct HostArray {
  Shape shape;
  std::vector<double> data;  // row-major, numel(shape) entries

  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  double at(const std::vector<int64_t>& index) const;  // one index per axis
};

int64_t numel(const Shape& shape);
std::string shape_str(const Shape& shape);  // "(2, 3)"; "()" for 0-d

// ---- construction ----
HostArray full(const Shape& shape, double value);
HostArray array(const Shape& shape, std::vector<double> data);  // checks the element count
// out[index] = f(index) for every multi-index of shape.
HostArray generate(const Shape& shape, const std::function<double(const std::vector<int64_t>&)>& f);

// How a random input is drawn. Every fill is deterministic in its seed and never all zeros.
enum class Fill {
  Signed,      // uniform in [-2, 2]
  Positive,    // uniform in [0.25, 4]: safe for log, sqrt, rsqrt, pow bases
  NonZero,     // |x| uniform in [0.5, 2], random sign: safe denominators
  SmallInt,    // integers in [-3, 3] (in any dtype: makes ties and equalities likely)
  Int,         // integers in [-20, 20] (unsigned dtypes: [0, 20])
  IntNonZero,  // integers in [-7, -1] and [1, 7]: safe integer divisors
  Bool,        // 0 or 1, both present when there are two or more elements
};
// Random values for an input of `dtype`, already rounded to what that dtype holds.
HostArray random_fill(const Shape& shape, Fill fill, DType dtype, uint64_t seed);
// Rounds every value to what dtype holds: floats to the nearest representable value
// (lg::round_to_float_dtype), integers truncated toward zero then wrapped, bool as x != 0.
// Non-finite values pass through unchanged for float dtypes.
HostArray round_to_dtype(const HostArray& a, DType dtype);
uint64_t seed_from_name(const std::string& name);  // FNV-1a: stable across platforms

// ---- elementwise with numpy broadcasting ----
Shape broadcast_shapes(const std::vector<Shape>& shapes);
HostArray map(const HostArray& a, const std::function<double(double)>& f);
HostArray map2(const HostArray& a, const HostArray& b, const std::function<double(double, double)>& f);
HostArray map3(const HostArray& a, const HostArray& b, const HostArray& c,
               const std::function<double(double, double, double)>& f);

// ---- movement ----
HostArray reshape(const HostArray& a, const Shape& shape);  // one entry may be -1
HostArray permute(const HostArray& a, const std::vector<int64_t>& order);
HostArray transpose(const HostArray& a, int64_t x = -2, int64_t y = -1);
HostArray expand(const HostArray& a, const Shape& shape);  // -1 keeps an axis; new leading axes
HostArray pad(const HostArray& a, const Pairs& pads, double value = 0);
HostArray shrink(const HostArray& a, const Pairs& ranges);  // [begin, end) per axis
HostArray slice(const HostArray& a, int64_t axis, int64_t begin, int64_t end);
HostArray flip(const HostArray& a, const std::vector<int64_t>& axes);
HostArray unsqueeze(const HostArray& a, int64_t axis);
HostArray squeeze(const HostArray& a, int64_t axis);
HostArray flatten(const HostArray& a, int64_t start = 0, int64_t end = -1);
HostArray cat(const std::vector<HostArray>& as, int64_t axis);
HostArray stack(const std::vector<HostArray>& as, int64_t axis);
HostArray repeat(const HostArray& a, const std::vector<int64_t>& repeats);  // torch.Tensor.repeat
// out[..., i, ...] = a[..., index[..., i, ...], ...] along axis (index has a's rank).
HostArray gather(const HostArray& a, int64_t axis, const HostArray& index);

// ---- reductions ----
enum class Reduce { Sum, Prod, Max, Min, Mean };
HostArray reduce(const HostArray& a, Reduce op, std::vector<int64_t> axes = {}, bool keepdim = false);
HostArray var(const HostArray& a, const std::vector<int64_t>& axes, bool keepdim, int64_t correction);
HostArray argmax(const HostArray& a, int64_t axis, bool keepdim);  // first index of the maximum

// ---- linear algebra and composites ----
HostArray matmul(const HostArray& a, const HostArray& b);  // numpy matmul, 1-D operands included
HostArray softmax(const HostArray& a, int64_t axis);
HostArray log_softmax(const HostArray& a, int64_t axis);
HostArray logsumexp(const HostArray& a, int64_t axis, bool keepdim);
// logits (..., C), labels (...): loss = logsumexp(logits) - logits[label], ignored positions give 0
// and are left out of the mean's count. reduction: "mean", "sum" or "none".
HostArray cross_entropy(const HostArray& logits, const HostArray& labels, const std::string& reduction,
                        int64_t ignore_index);
HostArray rms_norm(const HostArray& a, int64_t axis, double eps);
HostArray layer_norm(const HostArray& a, int64_t axis, double eps);  // population variance
HostArray one_hot(const HostArray& a, int64_t num_classes);
HostArray triu(const HostArray& a, int64_t diagonal);  // last two axes: keeps col - row >= diagonal
HostArray tril(const HostArray& a, int64_t diagonal);  // keeps col - row <= diagonal

// ---- scalar functions with the formulas tensor.h documents ----
double sigmoid(double x);
double silu(double x);
double gelu_tanh(double x);          // 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)))
double c_idiv(double a, double b);   // integer quotient rounded toward zero (as C)
double c_mod(double a, double b);    // remainder with the dividend's sign (as C)
double nan_max(double a, double b);  // NaN if either is NaN
double nan_min(double a, double b);

}  // namespace lg::ref
