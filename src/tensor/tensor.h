#pragma once
// The lazy Tensor: a shape, a dtype, a device and a node of the IR. Every operation builds graph;
// nothing runs until realize() or a host read (to_vector / to_doubles). Movement operations are
// views (index arithmetic, never a copy). Composites (softmax, cross_entropy, matmul...) are built
// from primitive ops, so the compiler fuses and differentiates them like anything else.
//
// A Tensor is a handle: copies share one value, and realize()/assign() update it for every copy.
// Broadcasting follows numpy; dtype promotion follows ir/dtype.h's lattice; a C++ number operand is
// "weak": it takes the tensor's dtype (an integer tensor with a fractional number becomes float32).
// User mistakes (shapes, axes, dtypes) throw lg::Error naming the operation and the fix.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/node.h"

namespace lg {

struct TensorState;
struct RngPosition {
  uint64_t seed = 0, offset = 0;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(NodeRef node);

  // ---- creation (device "" means the default device, config().device) ----
  static Tensor empty(const Shape& shape, DType dtype = dtypes::float32, const std::string& device = "");
  static Tensor full(const Shape& shape, double value, DType dtype = dtypes::float32,
                     const std::string& device = "");
  static Tensor zeros(const Shape& shape, DType dtype = dtypes::float32, const std::string& device = "");
  static Tensor ones(const Shape& shape, DType dtype = dtypes::float32, const std::string& device = "");
  // start, start+step, ... < stop (> stop for negative step).
  static Tensor arange(int64_t start, int64_t stop, int64_t step = 1, DType dtype = dtypes::int32,
                       const std::string& device = "");
  static Tensor arange(int64_t stop) { return arange(0, stop); }
  // n x m identity (m = n when m < 0).
  static Tensor eye(int64_t n, int64_t m = -1, DType dtype = dtypes::float32, const std::string& device = "");
  // Copies host data (row-major, numel(shape) elements of dtype) into a new buffer.
  static Tensor from_bytes(const void* data, size_t nbytes, const Shape& shape, DType dtype,
                           const std::string& device = "");
  template <class T>
  static Tensor from_vector(const std::vector<T>& v, const Shape& shape, const std::string& device = "");
  // Uploads float64 values and converts them to dtype with a CAST (floats round to nearest even,
  // ints truncate toward zero).
  static Tensor from_doubles(const std::vector<double>& v, const Shape& shape, DType dtype,
                             const std::string& device = "");

  // Random tensors from a counter-based generator (Philox4x32-10): element i of the k-th random
  // tensor since manual_seed(s) depends only on (s, k, i), never on evaluation order or device.
  static void manual_seed(uint64_t seed);
  // The generator's position (seed, elements drawn since manual_seed); restoring it makes the next
  // random tensors the same as they were after the save (checkpoints use this).
  static RngPosition rng_position();
  static void set_rng_position(const RngPosition& p);
  static Tensor rand(const Shape& shape, DType dtype = dtypes::float32,
                     const std::string& device = "");  // [0, 1)
  static Tensor randn(const Shape& shape, DType dtype = dtypes::float32, const std::string& device = "");
  static Tensor uniform(const Shape& shape, double low, double high, DType dtype = dtypes::float32,
                        const std::string& device = "");
  static Tensor randint(const Shape& shape, int64_t low, int64_t high, DType dtype = dtypes::int32,
                        const std::string& device = "");  // [low, high)

  // ---- properties ----
  const NodeRef& node() const;
  const Shape& shape() const { return node()->shape; }
  int64_t ndim() const { return static_cast<int64_t>(shape().size()); }
  int64_t numel() const { return node()->numel(); }
  int64_t size(int64_t axis) const;
  DType dtype() const { return node()->dtype; }
  std::string device() const;
  bool defined() const { return state_ != nullptr; }

  // ---- elementwise (numpy broadcasting) ----
  Tensor add(const Tensor& o) const;
  Tensor sub(const Tensor& o) const;
  Tensor mul(const Tensor& o) const;
  Tensor div(const Tensor& o) const;   // true division; integers are promoted to float32
  Tensor idiv(const Tensor& o) const;  // integer division rounding toward zero
  Tensor mod(const Tensor& o) const;   // integer remainder with the dividend's sign
  Tensor pow(const Tensor& o) const;
  Tensor pow(double e) const;
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor neg() const;
  Tensor reciprocal() const;
  Tensor exp() const;
  Tensor exp2() const;
  Tensor log() const;
  Tensor log2() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor silu() const;
  Tensor gelu() const;  // tanh approximation: 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)))
  Tensor abs() const;
  Tensor square() const { return mul(*this); }
  // this ? a : b elementwise; this must be bool.
  Tensor where(const Tensor& a, const Tensor& b) const;
  Tensor where(double a, double b) const;
  Tensor lt(const Tensor& o) const;
  Tensor le(const Tensor& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor eq(const Tensor& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor logical_and(const Tensor& o) const;  // bool tensors
  Tensor logical_or(const Tensor& o) const;
  Tensor logical_xor(const Tensor& o) const;
  Tensor logical_not() const;
  Tensor bitwise_and(const Tensor& o) const;  // integer (or bool) tensors
  Tensor bitwise_or(const Tensor& o) const;
  Tensor bitwise_xor(const Tensor& o) const;
  Tensor cast(DType t) const;
  Tensor bitcast(DType t) const;  // same itemsize
  // A scalar made into a tensor like this one (dtype and device), for the operators below.
  Tensor scalar_like(double v) const;

  // ---- movement (views) ----
  Tensor reshape(const Shape& shape) const;  // one entry may be -1
  Tensor permute(const std::vector<int64_t>& order) const;
  Tensor transpose(int64_t a = -2, int64_t b = -1) const;
  Tensor expand(const Shape& shape) const;                // -1 keeps an axis; new leading axes allowed
  Tensor pad(const Pairs& pads, double value = 0) const;  // (before, after) per axis
  Tensor shrink(const Pairs& ranges) const;               // [begin, end) per axis
  Tensor slice(int64_t axis, int64_t begin, int64_t end) const;
  Tensor flip(const std::vector<int64_t>& axes) const;
  Tensor unsqueeze(int64_t axis) const;
  Tensor squeeze(int64_t axis) const;
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  static Tensor cat(const std::vector<Tensor>& ts, int64_t axis = 0);
  static Tensor stack(const std::vector<Tensor>& ts, int64_t axis = 0);
  std::vector<Tensor> split(int64_t size, int64_t axis = 0) const;  // chunks of `size` (last may be smaller)
  std::vector<Tensor> split(const std::vector<int64_t>& sizes, int64_t axis = 0) const;
  Tensor repeat(const std::vector<int64_t>& repeats) const;  // tiles, like torch.Tensor.repeat
  // out[..., i, ...] = this[..., index[..., i, ...], ...] along axis; index has this's rank.
  Tensor gather(int64_t axis, const Tensor& index) const;

  // ---- reductions (axes empty: all axes; negative axes count from the end) ----
  Tensor sum(const std::vector<int64_t>& axes = {}, bool keepdim = false) const;
  Tensor prod(const std::vector<int64_t>& axes = {}, bool keepdim = false) const;
  Tensor max(const std::vector<int64_t>& axes = {}, bool keepdim = false) const;
  Tensor min(const std::vector<int64_t>& axes = {}, bool keepdim = false) const;
  Tensor mean(const std::vector<int64_t>& axes = {}, bool keepdim = false) const;
  Tensor var(const std::vector<int64_t>& axes = {}, bool keepdim = false, int64_t correction = 1) const;
  Tensor argmax(int64_t axis, bool keepdim = false) const;  // first index of the maximum; int32
  Tensor sum(int64_t axis, bool keepdim = false) const { return sum(std::vector<int64_t>{axis}, keepdim); }
  Tensor max(int64_t axis, bool keepdim = false) const { return max(std::vector<int64_t>{axis}, keepdim); }
  Tensor mean(int64_t axis, bool keepdim = false) const { return mean(std::vector<int64_t>{axis}, keepdim); }

  // ---- linear algebra and composites ----
  // Batched, broadcasting matmul of (..., n, k) by (..., k, m); 1-D operands as in numpy.
  // Products and sums run in float32 for 16-bit float inputs (result in the promoted dtype).
  Tensor matmul(const Tensor& o) const;
  Tensor softmax(int64_t axis = -1) const;
  Tensor log_softmax(int64_t axis = -1) const;
  Tensor logsumexp(int64_t axis = -1, bool keepdim = false) const;
  // Cross-entropy of logits (..., C) against integer labels (...); positions whose label equals
  // ignore_index count neither in the sum nor in the mean. reduction: "mean", "sum" or "none".
  Tensor cross_entropy(const Tensor& labels, const std::string& reduction = "mean",
                       int64_t ignore_index = -100) const;
  // Scaled dot-product attention as one fused op (FLASH_ATTENTION, ir/attention.h): this is q
  // (B, H, S, D), k and v (B, KV, T, D) of q's float dtype, H a multiple of KV (grouped queries).
  // softmax(q k^T / sqrt(D)) v, with causal: key t > query s masked (needs S == T). Nothing of size
  // S x T is stored: the kernel recomputes the scores in the backward pass. Result (B, H, S, D) in
  // q's dtype (computed in float32).
  Tensor flash_attention(const Tensor& k, const Tensor& v, bool causal) const;
  Tensor rms_norm(int64_t axis = -1, double eps = 1e-6) const;
  Tensor layer_norm(int64_t axis = -1, double eps = 1e-5) const;
  Tensor one_hot(int64_t num_classes) const;  // integer tensor -> (..., num_classes) int32 of 0/1
  Tensor triu(int64_t diagonal = 0) const;    // last two axes
  Tensor tril(int64_t diagonal = 0) const;

  // ---- autograd (rules in tensor/gradient.h; docs/autograd.md) ----
  // Marks this tensor (every copy of the handle) as one whose gradient backward() fills.
  Tensor& requires_grad(bool on);
  bool requires_grad() const;
  // The gradient accumulated by backward() (undefined before); set_grad(Tensor()) clears it.
  Tensor grad() const;
  void set_grad(const Tensor& g);
  // For a one-element float loss: adds d(this)/dt to t.grad() for every live tensor t that requires
  // grad and that this depends on. Call it before realizing the loss (realize swaps the loss's graph
  // for its buffer); realize the loss and the gradients together to fuse forward and backward.
  void backward() const;
  // d(loss)/d(t) for each t (lazy; loss must have one element); a t that loss does not depend on is
  // a user error. Does not touch grad().
  static std::vector<Tensor> gradients(const Tensor& loss, const std::vector<Tensor>& wrt);
  // The same value with no gradient flowing back through it.
  Tensor detach() const;

  // ---- realization ----
  Tensor& realize();
  static void realize(const std::vector<Tensor>& ts);  // one schedule for all
  Tensor contiguous() const;
  Tensor to(const std::string& device) const;
  // Writes value into this tensor's buffer (same shape; cast to this dtype). Lazy like any op.
  // A view that is a run of a buffer's elements (flat.slice(0, a, b), optionally reshaped, of a
  // realized 1-D tensor) writes into that part of the buffer: every tensor viewing the buffer sees
  // it. Other views are first made contiguous (the write then goes to the copy).
  Tensor& assign(const Tensor& value);
  // assign(value) when overwrite, else assign(*this + value), in this tensor's dtype (value is cast;
  // same shape). A value that is values scattered into zeros (a GATHER's gradient, docs/autograd.md)
  // is scattered straight into this tensor's buffer instead (zeroed first when overwrite): no
  // buffer of value's size is filled and then copied, and the values are added in this dtype (a
  // bfloat16 embedding's gradient kept as its float32 sums, not rounded to bfloat16 first).
  // For gradient sums (llm/train_step.cpp). The scatter needs a view assign() writes in place (a
  // run of a buffer's elements); other views take assign()'s path.
  Tensor& accumulate(const Tensor& value, bool overwrite);
  // Makes this handle (every copy of it) hold value's graph instead of its own: same shape, dtype
  // and device (checked). Nothing is computed or written, and requires_grad and grad() are kept:
  // value must hold the same values (the caller's promise).
  // For moving realized tensors into shared storage (nn::FlatLayout: the optimizer makes its
  // parameters views of one flat buffer, and the model holding them sees the views).
  Tensor& replace(const Tensor& value);
  // Realizes and copies to the host. to_host gives the raw elements (row-major, the dtype's bytes);
  // to_vector requires T to be this dtype's C++ type.
  template <class T>
  std::vector<T> to_vector() const;
  // Any dtype, converted to float64 by a CAST (exact except for 64-bit integers beyond 2^53).
  std::vector<double> to_doubles() const;
  std::vector<uint8_t> to_host() const;

 private:
  std::shared_ptr<TensorState> state_;
};

// Operators: Tensor with Tensor or with a C++ number.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);

// The lazygrad dtype of a C++ element type.
template <class T>
constexpr DType dtype_of();

}  // namespace lg

#include "tensor/tensor_inl.h"
