// Counter-based random numbers: Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC 2011) written as tensor ops, so the compiler fuses it into the consuming kernel.
// Element i of the k-th random tensor since manual_seed(s) uses counter (offset_k + i) and key s,
// where offset_k is the number of elements drawn before it: the values do not depend on evaluation
// order or device. The key and offset enter the kernel as a small uploaded buffer, not as
// constants, so all random tensors of one shape and dtype share one compiled kernel (a model's
// initialization compiles a kernel per distinct shape, not per parameter).
#include <array>
#include <atomic>
#include <cmath>
#include <mutex>
#include <numbers>

#include "tensor/internal.h"

namespace lg {
namespace {

struct RngState {
  std::mutex mu;
  uint64_t seed = 0;
  uint64_t offset = 0;
};
RngState& rng() {
  static RngState s;
  return s;
}

constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;

Tensor u32(uint64_t v, const Tensor& like) {
  return detail::scalar(static_cast<double>(v), dtypes::uint32, NodeRef::share(like.node()->device));
}

// (hi, lo) 32-bit halves of the 64-bit product a * m.
std::pair<Tensor, Tensor> mulhilo(const Tensor& a, uint32_t m) {
  Tensor p = a.cast(dtypes::uint64).mul(u32(m, a).cast(dtypes::uint64));
  Tensor hi = Tensor(
      alu(Op::SHR, p.node(),
          detail::scalar(32, dtypes::uint64, NodeRef::share(a.node()->device)).expand(p.shape()).node()));
  return {hi.cast(dtypes::uint32), p.cast(dtypes::uint32)};
}

// The four 32-bit outputs of Philox4x32-10 for counters (c0, c1, 0, 0) and key (k0, k1) (0-d
// uint32 tensors; round r's key is k + r * Weyl constant, mod 2^32).
std::array<Tensor, 4> philox(Tensor c0, Tensor c1, const Tensor& k0, const Tensor& k1) {
  Tensor c2 = u32(0, c0).expand(c0.shape()), c3 = c2;
  uint32_t w0 = 0, w1 = 0;  // r * Weyl, wrapping
  for (int round = 0; round < 10; round++) {
    auto [hi0, lo0] = mulhilo(c0, kMul0);
    auto [hi1, lo1] = mulhilo(c2, kMul1);
    Tensor n0 = hi1.bitwise_xor(c1).bitwise_xor(round ? k0.add(u32(w0, c0)) : k0);
    Tensor n2 = hi0.bitwise_xor(c3).bitwise_xor(round ? k1.add(u32(w1, c0)) : k1);
    c0 = n0, c1 = lo1, c2 = n2, c3 = lo0;
    w0 += kWeyl0, w1 += kWeyl1;
  }
  return {c0, c1, c2, c3};
}

// Philox words for numel(shape) consecutive counters, reserved from the global stream.
std::array<Tensor, 4> random_words(const Shape& shape, const std::string& device) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  uint64_t seed, offset;
  {
    std::lock_guard lock(rng().mu);
    seed = rng().seed;
    offset = rng().offset;
    rng().offset += static_cast<uint64_t>(n);
  }
  Tensor idx(make(Op::IOTA, dtypes::uint64, {detail::device_of(device)}, n));
  Tensor position = Tensor::from_vector<uint64_t>({seed, offset}, {2}, device);  // (key, offset)
  Tensor key = position.slice(0, 0, 1).reshape({});
  Tensor counter = idx.add(position.slice(0, 1, 2).reshape({}));
  Tensor lo = counter.cast(dtypes::uint32);
  Tensor hi =
      Tensor(alu(Op::SHR, counter.node(),
                 detail::scalar(32, dtypes::uint64, NodeRef::share(idx.node()->device)).expand({n}).node()))
          .cast(dtypes::uint32);
  Tensor key_hi = Tensor(alu(Op::SHR, key.node(), detail::scalar(32, dtypes::uint64, NodeRef::share(key.node()->device)).node()));
  std::array<Tensor, 4> w = philox(lo, hi, key.cast(dtypes::uint32), key_hi.cast(dtypes::uint32));
  for (Tensor& t : w) t = t.reshape(shape);
  return w;
}

// A float in [0, 1) from the top bits of a word: as many bits as dtype's significand holds, so the
// value is exact in dtype and rounding can never reach 1.
Tensor unit_float(const Tensor& w, DType dtype) {
  int bits = dtype == dtypes::bfloat16 ? 8 : dtype == dtypes::float16 ? 11 : 24;
  Tensor top =
      Tensor(alu(Op::SHR, w.node(), u32(32 - bits, w).expand(w.shape()).node())).cast(dtypes::float32);
  return top.mul(top.scalar_like(std::ldexp(1.0, -bits))).cast(dtype);
}

}  // namespace

void Tensor::manual_seed(uint64_t seed) {
  std::lock_guard lock(rng().mu);
  rng().seed = seed;
  rng().offset = 0;
}

RngPosition Tensor::rng_position() {
  std::lock_guard lock(rng().mu);
  return {rng().seed, rng().offset};
}

void Tensor::set_rng_position(const RngPosition& p) {
  std::lock_guard lock(rng().mu);
  rng().seed = p.seed;
  rng().offset = p.offset;
}

Tensor Tensor::rand(const Shape& shape, DType dtype, const std::string& device) {
  LG_USER_CHECK(is_float(dtype), "rand: dtype must be a float, got ", name(dtype),
                "; use randint for integers");
  return unit_float(random_words(shape, device)[0], dtype);
}

Tensor Tensor::uniform(const Shape& shape, double low, double high, DType dtype, const std::string& device) {
  LG_USER_CHECK(is_float(dtype), "uniform: dtype must be a float, got ", name(dtype));
  Tensor u = unit_float(random_words(shape, device)[0], dtypes::float32);
  return u.mul(u.scalar_like(high - low)).add(u.scalar_like(low)).cast(dtype);
}

// Box-Muller: sqrt(-2 ln(1 - u1)) * cos(2 pi u2), with 1 - u1 in (0, 1].
Tensor Tensor::randn(const Shape& shape, DType dtype, const std::string& device) {
  LG_USER_CHECK(is_float(dtype), "randn: dtype must be a float, got ", name(dtype));
  std::array<Tensor, 4> w = random_words(shape, device);
  Tensor u1 = unit_float(w[0], dtypes::float32), u2 = unit_float(w[1], dtypes::float32);
  Tensor r = u1.scalar_like(1).sub(u1).log().mul(u1.scalar_like(-2)).sqrt();
  return r.mul(u2.mul(u2.scalar_like(2 * std::numbers::pi)).cos()).cast(dtype);
}

Tensor Tensor::randint(const Shape& shape, int64_t low, int64_t high, DType dtype,
                       const std::string& device) {
  LG_USER_CHECK(is_int(dtype), "randint: dtype must be an integer type, got ", name(dtype));
  LG_USER_CHECK(low < high, "randint: empty range [", low, ", ", high, ")");
  LG_USER_CHECK(high - low <= (int64_t{1} << 24), "randint: range wider than 2^24 is not supported");
  Tensor u = unit_float(random_words(shape, device)[0], dtypes::float32).cast(dtypes::float64);
  Tensor v = u.mul(u.scalar_like(static_cast<double>(high - low))).cast(dtypes::int64);
  return v.add(v.scalar_like(static_cast<double>(low))).cast(dtype);
}

}  // namespace lg
