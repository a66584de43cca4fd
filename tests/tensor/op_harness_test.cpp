// The op harness (house style rule 11): every Tensor operation of tensor.h, checked against a plain
// C++ loop from host_ref.h through ONE table. Adding an op is adding a line to kCases below.
//
// Each line: name, inputs (shape, dtype, how to fill), the lazygrad expression over the input tensors
// t[i], the reference over the host arrays h[i], the result dtype, and the tolerance. The harness
// draws the inputs deterministically from the case name, rounds them to their dtype (so a float16
// input is exactly what the tensor holds), builds the tensors with from_doubles, runs the expression,
// reads it back with to_doubles and compares elementwise: |got - want| <= atol + rtol * |want|,
// NaN must match NaN, infinities must match in sign. The reference is rounded to the result dtype
// (integers wrap, as ops.def says integer arithmetic does).
//
// Random creation ops have no exact reference; tensor_api_test.cpp checks their ranges, statistics
// and determinism instead. This file is longer than the ~600 lines of rule 15 because the table is
// the specification: splitting it would split the one place that lists every op.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>

#include "base/error.h"
#include "tensor/host_ref.h"
#include "tensor/tensor.h"

namespace lg {
namespace {

using namespace lg::ref;
using Ts = std::vector<Tensor>;
using Hs = std::vector<HostArray>;

const DType F32 = dtypes::float32, F16 = dtypes::float16, BF16 = dtypes::bfloat16, F64 = dtypes::float64;
const DType I8 = dtypes::int8, U8 = dtypes::uint8, I16 = dtypes::int16, I32 = dtypes::int32,
            I64 = dtypes::int64;
const DType BOOL = dtypes::boolean;

struct Tol {
  double atol, rtol;
};
const Tol EXACT{0, 0};
const Tol TOL32{1e-5, 1e-5};      // float32 arithmetic
const Tol TRANSC{1e-5, 1e-4};     // float32 transcendentals (exp, log, sin, pow...) and composites
const Tol TOL16{2e-3, 2e-3};      // float16: 11-bit significand
const Tol TOLBF{1.6e-2, 1.6e-2};  // bfloat16: 8-bit significand

struct Input {
  Shape shape;
  DType dtype;
  Fill fill;
  std::vector<double> values;  // used verbatim (rounded to dtype) when not empty
};
Input typed(Shape s, DType t, Fill f) { return Input{std::move(s), t, f, {}}; }
Input f32(Shape s, Fill f = Fill::Signed) { return typed(std::move(s), F32, f); }
Input f16(Shape s, Fill f = Fill::Signed) { return typed(std::move(s), F16, f); }
Input bf16(Shape s, Fill f = Fill::Signed) { return typed(std::move(s), BF16, f); }
Input i32(Shape s, Fill f = Fill::Int) { return typed(std::move(s), I32, f); }
Input boolean(Shape s) { return typed(std::move(s), BOOL, Fill::Bool); }
Input vals(Shape s, DType t, std::vector<double> v) {
  return Input{std::move(s), t, Fill::Signed, std::move(v)};
}

struct OpCase {
  std::string name;
  std::vector<Input> inputs;
  std::function<Tensor(const Ts&)> build;
  std::function<HostArray(const Hs&)> reference;
  DType out;  // the result dtype tensor.h promises
  Tol tol;
};

// Table shorthands: BUILD(expr over t), REF(expr over h), REF1(expr over x: map of h[0]),
// REF2(expr over a, b: broadcast map of h[0], h[1]), REF3(expr over x, y, z: map of h[0..2]).
#define BUILD(...) []([[maybe_unused]] const Ts& t) -> Tensor { return __VA_ARGS__; }
#define REF(...) []([[maybe_unused]] const Hs& h) -> HostArray { return __VA_ARGS__; }
#define REF1(...) REF(map(h[0], []([[maybe_unused]] double x) -> double { return __VA_ARGS__; }))
#define REF2(...)      \
  REF(map2(h[0], h[1], \
           []([[maybe_unused]] double a, [[maybe_unused]] double b) -> double { return __VA_ARGS__; }))
#define REF3(...) \
  REF(map3(h[0], h[1], h[2], [](double x, double y, double z) -> double { return __VA_ARGS__; }))

const double INF = std::numeric_limits<double>::infinity();
const double NaN = std::numeric_limits<double>::quiet_NaN();

double float_bits_as_int(double x) {
  float f = static_cast<float>(x);
  int32_t i = 0;
  std::memcpy(&i, &f, sizeof i);
  return i;
}
double int_bits_as_float(double x) {
  auto i = static_cast<int32_t>(x);
  float f = 0;
  std::memcpy(&f, &i, sizeof f);
  return f;
}

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = {
      // ---- creation ----
      {"zeros_2x3", {}, BUILD(Tensor::zeros({2, 3})), REF(full({2, 3}, 0)), F32, EXACT},
      {"zeros_int32_0d", {}, BUILD(Tensor::zeros({}, I32)), REF(full({}, 0)), I32, EXACT},
      {"ones_f16_3x1x4", {}, BUILD(Tensor::ones({3, 1, 4}, F16)), REF(full({3, 1, 4}, 1)), F16, EXACT},
      {"full_f32", {}, BUILD(Tensor::full({2, 5}, -1.25)), REF(full({2, 5}, -1.25)), F32, EXACT},
      {"full_int32", {}, BUILD(Tensor::full({4}, 7, I32)), REF(full({4}, 7)), I32, EXACT},
      {"full_bool", {}, BUILD(Tensor::full({2, 2}, 1, BOOL)), REF(full({2, 2}, 1)), BOOL, EXACT},
      {"full_0d", {}, BUILD(Tensor::full({}, 3.5)), REF(full({}, 3.5)), F32, EXACT},
      {"full_bf16_rounds_value", {}, BUILD(Tensor::full({3}, 1.0 / 3, BF16)), REF(full({3}, 1.0 / 3)), BF16, EXACT},
      {"arange_stop", {}, BUILD(Tensor::arange(7)), REF(array({7}, {0, 1, 2, 3, 4, 5, 6})), I32, EXACT},
      {"arange_positive_step", {}, BUILD(Tensor::arange(2, 15, 4)), REF(array({4}, {2, 6, 10, 14})), I32, EXACT},
      {"arange_step_not_dividing", {}, BUILD(Tensor::arange(0, 10, 3)), REF(array({4}, {0, 3, 6, 9})), I32, EXACT},
      {"arange_negative_step", {}, BUILD(Tensor::arange(5, -6, -2)), REF(array({6}, {5, 3, 1, -1, -3, -5})), I32,
       EXACT},
      {"arange_float32", {}, BUILD(Tensor::arange(-3, 3, 1, F32)), REF(array({6}, {-3, -2, -1, 0, 1, 2})), F32, EXACT},
      {"arange_int64", {}, BUILD(Tensor::arange(10, 0, -4, I64)), REF(array({3}, {10, 6, 2})), I64, EXACT},
      {"eye_square", {}, BUILD(Tensor::eye(4)), REF(generate({4, 4}, [](auto& i) { return i[0] == i[1] ? 1.0 : 0.0; })),
       F32, EXACT},
      {"eye_wide", {}, BUILD(Tensor::eye(2, 5)), REF(generate({2, 5}, [](auto& i) { return i[0] == i[1] ? 1.0 : 0.0; })),
       F32, EXACT},
      {"eye_tall_int32", {}, BUILD(Tensor::eye(5, 3, I32)),
       REF(generate({5, 3}, [](auto& i) { return i[0] == i[1] ? 1.0 : 0.0; })), I32, EXACT},
      {"from_doubles_roundtrip_f32", {vals({2, 3}, F32, {1.5, -0.0, 1e-3, -7, 3e30, 0.1})}, BUILD(t[0]), REF(h[0]), F32,
       EXACT},
      {"from_doubles_rounds_to_f16", {}, BUILD(Tensor::from_doubles({0.1, 1.0 / 3, 65504, 1e-7}, {4}, F16)),
       REF(array({4}, {0.1, 1.0 / 3, 65504, 1e-7})), F16, EXACT},  // the harness rounds the reference to f16
      {"from_doubles_truncates_to_int32", {}, BUILD(Tensor::from_doubles({1.9, -1.9, 0.5, -0.5}, {4}, I32)),
       REF(array({4}, {1, -1, 0, 0})), I32, EXACT},
      {"from_vector_int32", {}, BUILD(Tensor::from_vector<int32_t>({1, -2, 3, -4, 5, -6}, {2, 3})),
       REF(array({2, 3}, {1, -2, 3, -4, 5, -6})), I32, EXACT},
      {"from_vector_uint8", {}, BUILD(Tensor::from_vector<uint8_t>({0, 255, 128}, {3})), REF(array({3}, {0, 255, 128})),
       U8, EXACT},
      {"from_vector_bool", {}, BUILD(Tensor::from_vector<bool>({true, false, true}, {3})), REF(array({3}, {1, 0, 1})),
       BOOL, EXACT},
      {"from_bytes_f32", {},
       [](const Ts&) {
         const float v[] = {1.5f, -2.f, 0.25f, 8.f};
         return Tensor::from_bytes(v, sizeof v, {2, 2}, F32);
       },
       REF(array({2, 2}, {1.5, -2, 0.25, 8})), F32, EXACT},

      // ---- elementwise arithmetic ----
      {"add_3x5x7", {f32({3, 5, 7}), f32({3, 5, 7})}, BUILD(t[0] + t[1]), REF2(a + b), F32, TOL32},
      {"add_method_0d", {f32({}), f32({})}, BUILD(t[0].add(t[1])), REF2(a + b), F32, TOL32},
      {"add_f16", {f16({4, 8}), f16({4, 8})}, BUILD(t[0] + t[1]), REF2(a + b), F16, TOL16},
      {"add_bf16", {bf16({4, 8}), bf16({4, 8})}, BUILD(t[0] + t[1]), REF2(a + b), BF16, TOLBF},
      {"add_int32", {i32({3, 4}), i32({3, 4})}, BUILD(t[0] + t[1]), REF2(a + b), I32, EXACT},
      {"add_int8_wraps", {vals({3}, I8, {100, -100, 5}), vals({3}, I8, {100, -100, 6})}, BUILD(t[0] + t[1]),
       REF(array({3}, {-56, 56, 11})), I8, EXACT},
      {"sub_2x3", {f32({2, 3}), f32({2, 3})}, BUILD(t[0].sub(t[1])), REF2(a - b), F32, TOL32},
      {"sub_operator_f16", {f16({5, 3}), f16({5, 3})}, BUILD(t[0] - t[1]), REF2(a - b), F16, TOL16},
      {"sub_int32", {i32({7}), i32({7})}, BUILD(t[0] - t[1]), REF2(a - b), I32, EXACT},
      {"mul_3x5x7", {f32({3, 5, 7}), f32({3, 5, 7})}, BUILD(t[0] * t[1]), REF2(a * b), F32, TOL32},
      {"mul_f16", {f16({4, 8}), f16({4, 8})}, BUILD(t[0].mul(t[1])), REF2(a * b), F16, TOL16},
      {"mul_bf16", {bf16({4, 8}), bf16({4, 8})}, BUILD(t[0] * t[1]), REF2(a * b), BF16, TOLBF},
      {"mul_int32", {i32({3, 4}), i32({3, 4})}, BUILD(t[0] * t[1]), REF2(a * b), I32, EXACT},
      {"div_3x5", {f32({3, 5}), f32({3, 5}, Fill::NonZero)}, BUILD(t[0] / t[1]), REF2(a / b), F32, TOL32},
      {"div_f16", {f16({4, 8}), f16({4, 8}, Fill::NonZero)}, BUILD(t[0].div(t[1])), REF2(a / b), F16, TOL16},
      {"div_bf16", {bf16({4, 8}), bf16({4, 8}, Fill::NonZero)}, BUILD(t[0] / t[1]), REF2(a / b), BF16, TOLBF},
      {"div_int_by_int_is_float32", {i32({3, 4}), i32({3, 4}, Fill::IntNonZero)}, BUILD(t[0].div(t[1])), REF2(a / b),
       F32, TOL32},
      {"div_by_zero_is_inf_or_nan", {vals({4}, F32, {1, -1, 0, 2}), vals({4}, F32, {0, 0, 0, 4})}, BUILD(t[0] / t[1]),
       REF(array({4}, {INF, -INF, NaN, 0.5})), F32, TOL32},
      {"idiv_truncates_toward_zero",
       {vals({8}, I32, {7, -7, 7, -7, 0, 13, -13, 5}), vals({8}, I32, {2, 2, -2, -2, 3, -4, 4, 7})},
       BUILD(t[0].idiv(t[1])), REF(array({8}, {3, -3, -3, 3, 0, -3, -3, 0})), I32, EXACT},
      {"idiv_int32_random", {i32({4, 5}), i32({4, 5}, Fill::IntNonZero)}, BUILD(t[0].idiv(t[1])), REF2(c_idiv(a, b)),
       I32, EXACT},
      {"idiv_int8_random", {typed({9}, I8, Fill::Int), typed({9}, I8, Fill::IntNonZero)}, BUILD(t[0].idiv(t[1])),
       REF2(c_idiv(a, b)), I8, EXACT},
      {"idiv_uint8", {vals({4}, U8, {200, 7, 255, 0}), vals({4}, U8, {7, 200, 16, 3})}, BUILD(t[0].idiv(t[1])),
       REF(array({4}, {28, 0, 15, 0})), U8, EXACT},
      {"mod_has_dividend_sign",
       {vals({8}, I32, {7, -7, 7, -7, 0, 13, -13, 5}), vals({8}, I32, {2, 2, -2, -2, 3, -4, 4, 7})},
       BUILD(t[0].mod(t[1])), REF(array({8}, {1, -1, 1, -1, 0, 1, -1, 5})), I32, EXACT},
      {"mod_int32_random", {i32({4, 5}), i32({4, 5}, Fill::IntNonZero)}, BUILD(t[0].mod(t[1])), REF2(c_mod(a, b)), I32,
       EXACT},
      {"neg_f32", {f32({3, 5})}, BUILD(t[0].neg()), REF1(-x), F32, EXACT},
      {"neg_operator_bf16", {bf16({6})}, BUILD(-t[0]), REF1(-x), BF16, EXACT},
      {"neg_int32", {i32({6})}, BUILD(t[0].neg()), REF1(-x), I32, EXACT},
      {"neg_int8_wraps_min", {vals({3}, I8, {-128, 127, -5})}, BUILD(t[0].neg()), REF(array({3}, {-128, -127, 5})), I8,
       EXACT},
      {"reciprocal", {f32({3, 5}, Fill::NonZero)}, BUILD(t[0].reciprocal()), REF1(1 / x), F32, TOL32},
      {"reciprocal_of_zero_is_inf", {vals({3}, F32, {0, 2, -4})}, BUILD(t[0].reciprocal()),
       REF(array({3}, {INF, 0.5, -0.25})), F32, TOL32},
      {"reciprocal_f16", {f16({8}, Fill::NonZero)}, BUILD(t[0].reciprocal()), REF1(1 / x), F16, TOL16},
      {"square", {f32({3, 5})}, BUILD(t[0].square()), REF1(x * x), F32, TOL32},

      // ---- transcendental and activation functions ----
      {"exp", {f32({3, 5, 7})}, BUILD(t[0].exp()), REF1(std::exp(x)), F32, TRANSC},
      {"exp_f16", {f16({4, 8})}, BUILD(t[0].exp()), REF1(std::exp(x)), F16, TOL16},
      {"exp_bf16", {bf16({4, 8})}, BUILD(t[0].exp()), REF1(std::exp(x)), BF16, TOLBF},
      {"exp_overflow_is_inf_underflow_is_zero", {vals({3}, F32, {100, -200, 0})}, BUILD(t[0].exp()),
       REF1(std::exp(x)), F32, TRANSC},
      {"exp2", {f32({3, 5})}, BUILD(t[0].exp2()), REF1(std::exp2(x)), F32, TRANSC},
      {"exp2_of_integers", {f32({9}, Fill::SmallInt)}, BUILD(t[0].exp2()), REF1(std::exp2(x)), F32, TRANSC},
      {"log", {f32({3, 5, 7}, Fill::Positive)}, BUILD(t[0].log()), REF1(std::log(x)), F32, TRANSC},
      {"log_f16", {f16({4, 8}, Fill::Positive)}, BUILD(t[0].log()), REF1(std::log(x)), F16, TOL16},
      {"log_of_zero_negative_inf", {vals({4}, F32, {0, -1, 1, INF})}, BUILD(t[0].log()),
       REF(array({4}, {-INF, NaN, 0, INF})), F32, TRANSC},
      {"log2", {f32({3, 5}, Fill::Positive)}, BUILD(t[0].log2()), REF1(std::log2(x)), F32, TRANSC},
      {"log2_of_powers_of_two", {vals({5}, F32, {1, 2, 4, 0.5, 1024})}, BUILD(t[0].log2()),
       REF(array({5}, {0, 1, 2, -1, 10})), F32, TRANSC},
      {"sqrt", {f32({3, 5, 7}, Fill::Positive)}, BUILD(t[0].sqrt()), REF1(std::sqrt(x)), F32, TOL32},
      {"sqrt_bf16", {bf16({4, 8}, Fill::Positive)}, BUILD(t[0].sqrt()), REF1(std::sqrt(x)), BF16, TOLBF},
      {"sqrt_special_values", {vals({4}, F32, {0, -1, 4, INF})}, BUILD(t[0].sqrt()), REF(array({4}, {0, NaN, 2, INF})),
       F32, TOL32},
      {"rsqrt", {f32({3, 5}, Fill::Positive)}, BUILD(t[0].rsqrt()), REF1(1 / std::sqrt(x)), F32, TRANSC},
      {"sin", {f32({3, 5, 7})}, BUILD(t[0].sin()), REF1(std::sin(x)), F32, TRANSC},
      {"sin_wide_range", {f32({40})}, BUILD((t[0] * 5).sin()), REF1(std::sin(static_cast<float>(x * 5))), F32, TRANSC},
      {"sin_f16", {f16({4, 8})}, BUILD(t[0].sin()), REF1(std::sin(x)), F16, TOL16},
      {"cos", {f32({3, 5, 7})}, BUILD(t[0].cos()), REF1(std::cos(x)), F32, TRANSC},
      {"cos_bf16", {bf16({4, 8})}, BUILD(t[0].cos()), REF1(std::cos(x)), BF16, TOLBF},
      {"tanh", {f32({3, 5, 7})}, BUILD(t[0].tanh()), REF1(std::tanh(x)), F32, TRANSC},
      {"tanh_saturates", {vals({5}, F32, {-100, 100, 0, 1e-3, -20})}, BUILD(t[0].tanh()), REF1(std::tanh(x)), F32,
       TRANSC},
      {"tanh_f16", {f16({4, 8})}, BUILD(t[0].tanh()), REF1(std::tanh(x)), F16, TOL16},
      {"sigmoid", {f32({3, 5, 7})}, BUILD(t[0].sigmoid()), REF1(sigmoid(x)), F32, TRANSC},
      {"sigmoid_extremes", {vals({3}, F32, {-100, 100, 0})}, BUILD(t[0].sigmoid()), REF1(sigmoid(x)), F32, TRANSC},
      {"sigmoid_f16", {f16({4, 8})}, BUILD(t[0].sigmoid()), REF1(sigmoid(x)), F16, TOL16},
      {"relu", {f32({3, 5, 7})}, BUILD(t[0].relu()), REF1(x > 0 ? x : 0), F32, EXACT},
      {"relu_int32", {i32({9})}, BUILD(t[0].relu()), REF1(x > 0 ? x : 0), I32, EXACT},
      {"relu_bf16", {bf16({9})}, BUILD(t[0].relu()), REF1(x > 0 ? x : 0), BF16, EXACT},
      {"silu", {f32({3, 5, 7})}, BUILD(t[0].silu()), REF1(silu(x)), F32, TRANSC},
      {"silu_bf16", {bf16({4, 8})}, BUILD(t[0].silu()), REF1(silu(x)), BF16, TOLBF},
      {"gelu_tanh_approximation", {f32({3, 5, 7})}, BUILD(t[0].gelu()), REF1(gelu_tanh(x)), F32, TRANSC},
      {"gelu_f16", {f16({4, 8})}, BUILD(t[0].gelu()), REF1(gelu_tanh(x)), F16, TOL16},
      {"abs", {f32({3, 5})}, BUILD(t[0].abs()), REF1(std::abs(x)), F32, EXACT},
      {"abs_int32", {i32({9})}, BUILD(t[0].abs()), REF1(std::abs(x)), I32, EXACT},
      {"abs_f16", {f16({9})}, BUILD(t[0].abs()), REF1(std::abs(x)), F16, EXACT},

      // ---- maximum, minimum, pow ----
      {"maximum", {f32({3, 5}), f32({3, 5})}, BUILD(t[0].maximum(t[1])), REF2(std::max(a, b)), F32, EXACT},
      {"maximum_broadcast", {f32({3, 1}), f32({1, 4})}, BUILD(t[0].maximum(t[1])), REF2(std::max(a, b)), F32, EXACT},
      {"maximum_int32", {i32({9}), i32({9})}, BUILD(t[0].maximum(t[1])), REF2(std::max(a, b)), I32, EXACT},
      {"maximum_propagates_nan", {vals({4}, F32, {NaN, 1, -INF, 2}), vals({4}, F32, {0, NaN, 3, INF})},
       BUILD(t[0].maximum(t[1])), REF(array({4}, {NaN, NaN, 3, INF})), F32, EXACT},
      {"minimum", {f32({3, 5}), f32({3, 5})}, BUILD(t[0].minimum(t[1])), REF2(std::min(a, b)), F32, EXACT},
      {"minimum_f16", {f16({8}), f16({8})}, BUILD(t[0].minimum(t[1])), REF2(std::min(a, b)), F16, EXACT},
      {"minimum_int32", {i32({9}), i32({9})}, BUILD(t[0].minimum(t[1])), REF2(std::min(a, b)), I32, EXACT},
      {"minimum_propagates_nan", {vals({4}, F32, {NaN, 1, -INF, 2}), vals({4}, F32, {0, NaN, 3, INF})},
       BUILD(t[0].minimum(t[1])), REF(array({4}, {NaN, NaN, -INF, 2})), F32, EXACT},
      {"pow_positive_base_fractional_exponent", {f32({3, 5}, Fill::Positive), f32({3, 5})}, BUILD(t[0].pow(t[1])),
       REF2(std::pow(a, b)), F32, TRANSC},
      {"pow_negative_base_integer_exponent",
       {vals({6}, F32, {-2, -2, -3, -1.5, -2, -0.5}), vals({6}, F32, {2, 3, -1, 2, 0, -3})}, BUILD(t[0].pow(t[1])),
       REF(array({6}, {4, -8, -1.0 / 3, 2.25, 1, -8})), F32, TRANSC},
      {"pow_zero_to_zero_is_one", {vals({3}, F32, {0, 0, 2}), vals({3}, F32, {0, 2, 0})}, BUILD(t[0].pow(t[1])),
       REF(array({3}, {1, 0, 1})), F32, TRANSC},
      {"pow_scalar_cube_of_signed", {f32({3, 5})}, BUILD(t[0].pow(3.0)), REF1(x * x * x), F32, TRANSC},
      {"pow_scalar_square_of_negative", {f32({3, 5})}, BUILD(t[0].pow(2.0)), REF1(x * x), F32, TRANSC},
      {"pow_scalar_half_is_sqrt", {f32({3, 5}, Fill::Positive)}, BUILD(t[0].pow(0.5)), REF1(std::sqrt(x)), F32, TRANSC},
      {"pow_scalar_negative_two", {f32({3, 5}, Fill::NonZero)}, BUILD(t[0].pow(-2.0)), REF1(1 / (x * x)), F32, TRANSC},
      {"pow_scalar_zero_is_one", {f32({4})}, BUILD(t[0].pow(0.0)), REF1(1.0), F32, EXACT},
      {"pow_f16", {f16({4, 8}, Fill::Positive), f16({4, 8})}, BUILD(t[0].pow(t[1])), REF2(std::pow(a, b)), F16, TOL16},

      // ---- where, comparisons, logic ----
      {"where", {boolean({3, 4}), f32({3, 4}), f32({3, 4})}, BUILD(t[0].where(t[1], t[2])), REF3(x != 0 ? y : z), F32,
       EXACT},
      {"where_broadcast", {boolean({3, 1}), f32({1, 4}), f32({})}, BUILD(t[0].where(t[1], t[2])), REF3(x != 0 ? y : z),
       F32, EXACT},
      {"where_int32", {boolean({7}), i32({7}), i32({7})}, BUILD(t[0].where(t[1], t[2])), REF3(x != 0 ? y : z), I32,
       EXACT},
      {"where_f16", {boolean({7}), f16({7}), f16({7})}, BUILD(t[0].where(t[1], t[2])), REF3(x != 0 ? y : z), F16,
       EXACT},
      {"where_numbers_is_float32", {boolean({2, 3})}, BUILD(t[0].where(2.5, -1.5)), REF1(x != 0 ? 2.5 : -1.5), F32,
       EXACT},
      {"where_from_comparison", {f32({3, 5}), f32({3, 5})}, BUILD(t[0].lt(t[1]).where(t[0], t[1])),
       REF2(a < b ? a : b), F32, EXACT},
      {"lt", {f32({4, 5}, Fill::SmallInt), f32({4, 5}, Fill::SmallInt)}, BUILD(t[0].lt(t[1])), REF2(a < b), BOOL, EXACT},
      {"le", {f32({4, 5}, Fill::SmallInt), f32({4, 5}, Fill::SmallInt)}, BUILD(t[0].le(t[1])), REF2(a <= b), BOOL,
       EXACT},
      {"gt", {f32({4, 5}, Fill::SmallInt), f32({4, 5}, Fill::SmallInt)}, BUILD(t[0].gt(t[1])), REF2(a > b), BOOL, EXACT},
      {"ge", {f32({4, 5}, Fill::SmallInt), f32({4, 5}, Fill::SmallInt)}, BUILD(t[0].ge(t[1])), REF2(a >= b), BOOL,
       EXACT},
      {"eq", {f32({4, 5}, Fill::SmallInt), f32({4, 5}, Fill::SmallInt)}, BUILD(t[0].eq(t[1])), REF2(a == b), BOOL,
       EXACT},
      {"ne", {f32({4, 5}, Fill::SmallInt), f32({4, 5}, Fill::SmallInt)}, BUILD(t[0].ne(t[1])), REF2(a != b), BOOL,
       EXACT},
      {"lt_broadcast", {f32({3, 1}, Fill::SmallInt), f32({4}, Fill::SmallInt)}, BUILD(t[0].lt(t[1])), REF2(a < b), BOOL,
       EXACT},
      {"lt_int32_vs_f32_promotes", {i32({9}, Fill::SmallInt), f32({9})}, BUILD(t[0].lt(t[1])), REF2(a < b), BOOL, EXACT},
      {"exp_of_0d", {f32({})}, BUILD(t[0].exp()), REF1(std::exp(x)), F32, TRANSC},
      {"le_int32", {i32({4, 5}, Fill::SmallInt), i32({4, 5}, Fill::SmallInt)}, BUILD(t[0].le(t[1])), REF2(a <= b),
       BOOL, EXACT},
      {"ge_f16", {f16({4, 5}, Fill::SmallInt), f16({4, 5}, Fill::SmallInt)}, BUILD(t[0].ge(t[1])), REF2(a >= b), BOOL,
       EXACT},
      {"eq_int32", {i32({4, 5}, Fill::SmallInt), i32({4, 5}, Fill::SmallInt)}, BUILD(t[0].eq(t[1])), REF2(a == b),
       BOOL, EXACT},
      {"eq_with_nan_is_false", {vals({3}, F32, {NaN, 1, NaN}), vals({3}, F32, {NaN, 1, 2})}, BUILD(t[0].eq(t[1])),
       REF(array({3}, {0, 1, 0})), BOOL, EXACT},
      {"ne_with_nan_is_true", {vals({3}, F32, {NaN, 1, NaN}), vals({3}, F32, {NaN, 1, 2})}, BUILD(t[0].ne(t[1])),
       REF(array({3}, {1, 0, 1})), BOOL, EXACT},
      {"lt_with_nan_is_false", {vals({3}, F32, {NaN, 1, 3}), vals({3}, F32, {1, NaN, 2})}, BUILD(t[0].lt(t[1])),
       REF(array({3}, {0, 0, 0})), BOOL, EXACT},
      {"logical_and", {boolean({4, 5}), boolean({4, 5})}, BUILD(t[0].logical_and(t[1])), REF2(a != 0 && b != 0), BOOL,
       EXACT},
      {"logical_or", {boolean({4, 5}), boolean({4, 5})}, BUILD(t[0].logical_or(t[1])), REF2(a != 0 || b != 0), BOOL,
       EXACT},
      {"logical_xor", {boolean({4, 5}), boolean({4, 5})}, BUILD(t[0].logical_xor(t[1])), REF2((a != 0) != (b != 0)),
       BOOL, EXACT},
      {"logical_not", {boolean({4, 5})}, BUILD(t[0].logical_not()), REF1(x == 0), BOOL, EXACT},
      {"logical_and_broadcast", {boolean({3, 1}), boolean({1, 4})}, BUILD(t[0].logical_and(t[1])),
       REF2(a != 0 && b != 0), BOOL, EXACT},
      {"bitwise_and_int32", {i32({4, 5}), i32({4, 5})}, BUILD(t[0].bitwise_and(t[1])),
       REF2(static_cast<int32_t>(a) & static_cast<int32_t>(b)), I32, EXACT},
      {"bitwise_or_int32", {i32({4, 5}), i32({4, 5})}, BUILD(t[0].bitwise_or(t[1])),
       REF2(static_cast<int32_t>(a) | static_cast<int32_t>(b)), I32, EXACT},
      {"bitwise_xor_int32", {i32({4, 5}), i32({4, 5})}, BUILD(t[0].bitwise_xor(t[1])),
       REF2(static_cast<int32_t>(a) ^ static_cast<int32_t>(b)), I32, EXACT},
      {"bitwise_and_uint8", {vals({4}, U8, {255, 170, 15, 128}), vals({4}, U8, {15, 85, 255, 129})},
       BUILD(t[0].bitwise_and(t[1])), REF(array({4}, {15, 0, 15, 128})), U8, EXACT},
      {"bitwise_xor_uint8", {vals({4}, U8, {255, 170, 15, 128}), vals({4}, U8, {15, 85, 255, 129})},
       BUILD(t[0].bitwise_xor(t[1])), REF(array({4}, {240, 255, 240, 1})), U8, EXACT},
      {"bitwise_or_bool", {boolean({9}), boolean({9})}, BUILD(t[0].bitwise_or(t[1])), REF2(a != 0 || b != 0), BOOL,
       EXACT},

      // ---- cast and bitcast ----
      {"cast_f32_to_f16", {f32({4, 8})}, BUILD(t[0].cast(F16)), REF(h[0]), F16, EXACT},
      {"cast_f32_to_f16_overflow_is_inf", {vals({4}, F32, {1e5, 0.1, 65504, -7e4})}, BUILD(t[0].cast(F16)),
       REF(array({4}, {INF, 0.1, 65504, -INF})), F16, EXACT},
      {"cast_f32_to_bf16", {f32({4, 8})}, BUILD(t[0].cast(BF16)), REF(h[0]), BF16, EXACT},
      {"cast_f16_to_f32", {f16({4, 8})}, BUILD(t[0].cast(F32)), REF(h[0]), F32, EXACT},
      {"cast_bf16_to_f32", {bf16({4, 8})}, BUILD(t[0].cast(F32)), REF(h[0]), F32, EXACT},
      {"cast_f16_to_bf16", {f16({4, 8})}, BUILD(t[0].cast(BF16)), REF(h[0]), BF16, EXACT},
      {"cast_f32_to_f64", {f32({9})}, BUILD(t[0].cast(F64)), REF(h[0]), F64, EXACT},
      {"cast_f64_to_f32", {vals({3}, F64, {0.1, 1.0 / 3, -2.5e10})}, BUILD(t[0].cast(F32)), REF(h[0]), F32, EXACT},
      {"cast_f32_to_int32_truncates", {vals({8}, F32, {1.9, -1.9, 2.5, -2.5, 0.2, -0.2, 100.7, -100.7})},
       BUILD(t[0].cast(I32)), REF(array({8}, {1, -1, 2, -2, 0, 0, 100, -100})), I32, EXACT},
      {"cast_f32_to_int8", {vals({4}, F32, {-127.9, 127.9, 3.5, -3.5})}, BUILD(t[0].cast(I8)),
       REF(array({4}, {-127, 127, 3, -3})), I8, EXACT},
      {"cast_f32_to_uint8", {vals({4}, F32, {0, 1.5, 254.9, 128.2})}, BUILD(t[0].cast(U8)),
       REF(array({4}, {0, 1, 254, 128})), U8, EXACT},
      {"cast_f32_to_bool_is_nonzero", {vals({5}, F32, {0, -0.0, 0.5, -2, NaN})}, BUILD(t[0].cast(BOOL)),
       REF(array({5}, {0, 0, 1, 1, 1})), BOOL, EXACT},
      {"cast_f16_to_int32", {f16({9}, Fill::Signed)}, BUILD((t[0] * 10).cast(I32)),
       REF1(std::trunc(round_to_float_dtype(x * 10, F16))), I32, EXACT},
      {"cast_int32_to_f32", {i32({9})}, BUILD(t[0].cast(F32)), REF(h[0]), F32, EXACT},
      {"cast_int32_to_f16", {i32({9})}, BUILD(t[0].cast(F16)), REF(h[0]), F16, EXACT},
      {"cast_int32_to_int8_wraps", {vals({5}, I32, {200, -129, 127, -128, 300})}, BUILD(t[0].cast(I8)),
       REF(array({5}, {-56, 127, 127, -128, 44})), I8, EXACT},
      {"cast_int32_to_int64", {i32({9})}, BUILD(t[0].cast(I64)), REF(h[0]), I64, EXACT},
      {"cast_int64_to_int32_wraps", {vals({3}, I64, {4294967301.0, -1, 7})}, BUILD(t[0].cast(I32)),
       REF(array({3}, {5, -1, 7})), I32, EXACT},
      {"cast_int64_to_f64", {vals({3}, I64, {1e15, -3, 0})}, BUILD(t[0].cast(F64)), REF(h[0]), F64, EXACT},
      {"cast_int32_to_bool", {vals({3}, I32, {0, 3, -1})}, BUILD(t[0].cast(BOOL)), REF(array({3}, {0, 1, 1})), BOOL,
       EXACT},
      {"cast_bool_to_f32", {boolean({9})}, BUILD(t[0].cast(F32)), REF(h[0]), F32, EXACT},
      {"cast_bool_to_int32", {boolean({9})}, BUILD(t[0].cast(I32)), REF(h[0]), I32, EXACT},
      {"cast_uint8_to_int32", {vals({3}, U8, {0, 200, 255})}, BUILD(t[0].cast(I32)), REF(h[0]), I32, EXACT},
      {"cast_int8_to_uint8_wraps", {vals({3}, I8, {-1, -128, 5})}, BUILD(t[0].cast(U8)), REF(array({3}, {255, 128, 5})),
       U8, EXACT},
      {"bitcast_f32_to_int32", {vals({4}, F32, {1.0, -2.0, 0.0, 0.5})}, BUILD(t[0].bitcast(I32)),
       REF(array({4}, {1065353216, -1073741824, 0, 1056964608})), I32, EXACT},
      {"bitcast_f32_to_int32_random", {f32({3, 4})}, BUILD(t[0].bitcast(I32)), REF1(float_bits_as_int(x)), I32, EXACT},
      {"bitcast_int32_to_f32", {vals({4}, I32, {1065353216, -1073741824, 0, 1056964608})}, BUILD(t[0].bitcast(F32)),
       REF1(int_bits_as_float(x)), F32, EXACT},
      {"bitcast_f16_to_int16", {vals({3}, F16, {1.0, -2.0, 0.5})}, BUILD(t[0].bitcast(I16)),
       REF(array({3}, {0x3c00, -16384, 0x3800})), I16, EXACT},

      // ---- C++ number operands (weak: they take the tensor's dtype) ----
      {"scalar_add_right", {f32({3, 4})}, BUILD(t[0] + 2.0), REF1(x + 2), F32, TOL32},
      {"scalar_add_left", {f32({3, 4})}, BUILD(2.0 + t[0]), REF1(2 + x), F32, TOL32},
      {"scalar_sub_right", {f32({3, 4})}, BUILD(t[0] - 1.5), REF1(x - 1.5), F32, TOL32},
      {"scalar_sub_left", {f32({3, 4})}, BUILD(2.0 - t[0]), REF1(2 - x), F32, TOL32},
      {"scalar_mul_left", {f32({3, 4})}, BUILD(3.0 * t[0]), REF1(3 * x), F32, TOL32},
      {"scalar_mul_right", {f32({3, 4})}, BUILD(t[0] * -0.5), REF1(x * -0.5), F32, TOL32},
      {"scalar_div_right", {f32({3, 4})}, BUILD(t[0] / 4.0), REF1(x / 4), F32, TOL32},
      {"scalar_div_left", {f32({3, 4}, Fill::NonZero)}, BUILD(2.0 / t[0]), REF1(2 / x), F32, TOL32},
      {"scalar_int32_plus_half_is_float32", {i32({3, 4})}, BUILD(t[0] + 0.5), REF1(x + 0.5), F32, TOL32},
      {"scalar_int32_times_two_stays_int32", {i32({3, 4})}, BUILD(t[0] * 2.0), REF1(x * 2), I32, EXACT},
      {"scalar_int32_divided_by_number_is_float32", {i32({3, 4})}, BUILD(t[0] / 4.0), REF1(x / 4), F32, TOL32},
      {"scalar_f16_plus_number_stays_f16", {f16({3, 4})}, BUILD(t[0] + 2.0), REF1(x + 2), F16, TOL16},
      {"scalar_bf16_times_number_stays_bf16", {bf16({3, 4})}, BUILD(t[0] * 3.0), REF1(x * 3), BF16, TOLBF},
      {"scalar_like_takes_dtype", {f16({5})}, BUILD(t[0] * t[0].scalar_like(0.5)), REF1(x * 0.5), F16, EXACT},

      // ---- numpy broadcasting and dtype promotion ----
      {"broadcast_3x1_plus_1x4", {f32({3, 1}), f32({1, 4})}, BUILD(t[0] + t[1]), REF2(a + b), F32, TOL32},
      {"broadcast_2x3x4_plus_4", {f32({2, 3, 4}), f32({4})}, BUILD(t[0] + t[1]), REF2(a + b), F32, TOL32},
      {"broadcast_0d_times_2x3", {f32({}), f32({2, 3})}, BUILD(t[0] * t[1]), REF2(a * b), F32, TOL32},
      {"broadcast_5x1x3_minus_4x1", {f32({5, 1, 3}), f32({4, 1})}, BUILD(t[0] - t[1]), REF2(a - b), F32, TOL32},
      {"broadcast_f16_3x1_plus_1x4", {f16({3, 1}), f16({1, 4})}, BUILD(t[0] + t[1]), REF2(a + b), F16, TOL16},
      {"broadcast_int32_div_4_by_3x1", {i32({4}), i32({3, 1}, Fill::IntNonZero)}, BUILD(t[0].idiv(t[1])),
       REF2(c_idiv(a, b)), I32, EXACT},
      {"promote_f16_plus_f32_is_f32", {f16({6}), f32({6})}, BUILD(t[0] + t[1]), REF2(a + b), F32, TOL32},
      {"promote_int32_plus_f16_is_f16", {i32({6}), f16({6})}, BUILD(t[0] + t[1]), REF2(a + b), F16, TOL16},
      {"promote_int8_plus_int32_is_int32", {typed({6}, I8, Fill::Int), i32({6})}, BUILD(t[0] + t[1]), REF2(a + b), I32,
       EXACT},
      {"promote_uint8_plus_int8_is_int16", {typed({6}, U8, Fill::Int), typed({6}, I8, Fill::Int)}, BUILD(t[0] + t[1]),
       REF2(a + b), I16, EXACT},
      {"promote_bool_plus_int32_is_int32", {boolean({6}), i32({6})}, BUILD(t[0] + t[1]), REF2(a + b), I32, EXACT},

      // ---- movement (views) ----
      {"reshape_3x5x7_to_15x7", {f32({3, 5, 7})}, BUILD(t[0].reshape({15, 7})), REF(reshape(h[0], {15, 7})), F32, EXACT},
      {"reshape_infers_minus_one", {f32({3, 5, 7})}, BUILD(t[0].reshape({5, -1})), REF(reshape(h[0], {5, 21})), F32,
       EXACT},
      {"reshape_to_0d", {f32({1, 1})}, BUILD(t[0].reshape({})), REF(reshape(h[0], {})), F32, EXACT},
      {"reshape_from_0d", {f32({})}, BUILD(t[0].reshape({1, 1, 1})), REF(reshape(h[0], {1, 1, 1})), F32, EXACT},
      {"permute_3d", {f32({3, 5, 7})}, BUILD(t[0].permute({2, 0, 1})), REF(permute(h[0], {2, 0, 1})), F32, EXACT},
      {"permute_negative_axes", {f32({2, 3, 4})}, BUILD(t[0].permute({-1, 0, -2})), REF(permute(h[0], {2, 0, 1})), F32,
       EXACT},
      {"permute_then_reshape", {f32({3, 4, 5})}, BUILD(t[0].permute({1, 0, 2}).reshape({4, 15})),
       REF(reshape(permute(h[0], {1, 0, 2}), {4, 15})), F32, EXACT},
      {"permute_then_reshape_then_add", {f32({3, 4, 5}), f32({4, 15})},
       BUILD(t[0].permute({1, 2, 0}).reshape({4, 15}) + t[1]),
       REF(map2(reshape(permute(h[0], {1, 2, 0}), {4, 15}), h[1], [](double a, double b) { return a + b; })), F32,
       TOL32},
      {"transpose_default_last_two", {f32({2, 3, 5})}, BUILD(t[0].transpose()), REF(transpose(h[0], -2, -1)), F32,
       EXACT},
      {"transpose_axes_0_2", {f32({2, 3, 4})}, BUILD(t[0].transpose(0, 2)), REF(transpose(h[0], 0, 2)), F32, EXACT},
      {"expand_size1_axis", {f32({3, 1})}, BUILD(t[0].expand({3, 4})), REF(expand(h[0], {3, 4})), F32, EXACT},
      {"expand_new_leading_axes_keep_minus_one", {f32({3, 1})}, BUILD(t[0].expand({2, -1, 4})),
       REF(expand(h[0], {2, 3, 4})), F32, EXACT},
      {"expand_0d", {f32({})}, BUILD(t[0].expand({2, 3})), REF(expand(h[0], {2, 3})), F32, EXACT},
      {"expand_then_add", {f32({1, 4}), f32({3, 4})}, BUILD(t[0].expand({3, 4}) + t[1]), REF2(a + b), F32, TOL32},
      {"expand_then_sum", {f32({3, 1})}, BUILD(t[0].expand({3, 5}).sum(1)),
       REF(reduce(expand(h[0], {3, 5}), Reduce::Sum, {1})), F32, TOL32},
      {"pad_zeros", {f32({3, 4})}, BUILD(t[0].pad({{1, 2}, {0, 3}})), REF(pad(h[0], {{1, 2}, {0, 3}})), F32, EXACT},
      {"pad_value", {f32({2, 3})}, BUILD(t[0].pad({{2, 0}, {1, 1}}, -7.5)), REF(pad(h[0], {{2, 0}, {1, 1}}, -7.5)), F32,
       EXACT},
      {"pad_int32_value", {i32({2, 3})}, BUILD(t[0].pad({{0, 1}, {2, 0}}, 4)), REF(pad(h[0], {{0, 1}, {2, 0}}, 4)), I32,
       EXACT},
      {"pad_f16", {f16({2, 3})}, BUILD(t[0].pad({{1, 1}, {1, 1}}, 1.5)), REF(pad(h[0], {{1, 1}, {1, 1}}, 1.5)), F16,
       EXACT},
      {"shrink", {f32({5, 6})}, BUILD(t[0].shrink({{1, 4}, {2, 5}})), REF(shrink(h[0], {{1, 4}, {2, 5}})), F32, EXACT},
      {"shrink_to_single_element", {f32({3, 4})}, BUILD(t[0].shrink({{2, 3}, {1, 2}})),
       REF(shrink(h[0], {{2, 3}, {1, 2}})), F32, EXACT},
      {"slice_axis1", {f32({3, 5, 7})}, BUILD(t[0].slice(1, 1, 4)), REF(slice(h[0], 1, 1, 4)), F32, EXACT},
      {"slice_negative_axis", {f32({3, 5, 7})}, BUILD(t[0].slice(-1, 2, 7)), REF(slice(h[0], -1, 2, 7)), F32, EXACT},
      {"flip_one_axis", {f32({3, 5})}, BUILD(t[0].flip({1})), REF(flip(h[0], {1})), F32, EXACT},
      {"flip_two_axes", {f32({3, 4, 5})}, BUILD(t[0].flip({0, -1})), REF(flip(h[0], {0, 2})), F32, EXACT},
      {"flip_then_pad", {f32({3, 4})}, BUILD(t[0].flip({0}).pad({{1, 0}, {0, 2}}, 9)),
       REF(pad(flip(h[0], {0}), {{1, 0}, {0, 2}}, 9)), F32, EXACT},
      {"pad_then_flip", {f32({3, 4})}, BUILD(t[0].pad({{1, 0}, {0, 2}}).flip({1})),
       REF(flip(pad(h[0], {{1, 0}, {0, 2}}), {1})), F32, EXACT},
      {"shrink_then_permute_then_sum", {f32({4, 5, 6})}, BUILD(t[0].shrink({{1, 3}, {0, 5}, {2, 6}}).permute({2, 0, 1}).sum(2)),
       REF(reduce(permute(shrink(h[0], {{1, 3}, {0, 5}, {2, 6}}), {2, 0, 1}), Reduce::Sum, {2})), F32, TOL32},
      {"pad_then_max", {f32({3, 4})}, BUILD(t[0].pad({{0, 0}, {2, 2}}, 5).max(1)),
       REF(reduce(pad(h[0], {{0, 0}, {2, 2}}, 5), Reduce::Max, {1})), F32, EXACT},
      {"unsqueeze_front", {f32({3, 4})}, BUILD(t[0].unsqueeze(0)), REF(unsqueeze(h[0], 0)), F32, EXACT},
      {"unsqueeze_negative_is_last", {f32({3, 4})}, BUILD(t[0].unsqueeze(-1)), REF(unsqueeze(h[0], 2)), F32, EXACT},
      {"unsqueeze_0d", {f32({})}, BUILD(t[0].unsqueeze(0)), REF(unsqueeze(h[0], 0)), F32, EXACT},
      {"squeeze_middle", {f32({3, 1, 4})}, BUILD(t[0].squeeze(1)), REF(squeeze(h[0], 1)), F32, EXACT},
      {"squeeze_negative", {f32({3, 4, 1})}, BUILD(t[0].squeeze(-1)), REF(squeeze(h[0], 2)), F32, EXACT},
      {"flatten_all", {f32({3, 4, 5})}, BUILD(t[0].flatten()), REF(flatten(h[0])), F32, EXACT},
      {"flatten_middle_axes", {f32({2, 3, 4, 5})}, BUILD(t[0].flatten(1, 2)), REF(flatten(h[0], 1, 2)), F32, EXACT},
      {"permute_then_flatten", {f32({3, 4, 5})}, BUILD(t[0].permute({2, 1, 0}).flatten()),
       REF(flatten(permute(h[0], {2, 1, 0}))), F32, EXACT},
      {"contiguous_of_permute", {f32({3, 4, 5})}, BUILD(t[0].permute({2, 0, 1}).contiguous()),
       REF(permute(h[0], {2, 0, 1})), F32, EXACT},
      {"cat_three_middle_axis", {f32({2, 3, 4}), f32({2, 1, 4}), f32({2, 5, 4})},
       BUILD(Tensor::cat({t[0], t[1], t[2]}, 1)), REF(cat({h[0], h[1], h[2]}, 1)), F32, EXACT},
      {"cat_axis0_default", {f32({2, 3}), f32({4, 3})}, BUILD(Tensor::cat({t[0], t[1]})), REF(cat({h[0], h[1]}, 0)), F32,
       EXACT},
      {"cat_negative_axis_int32", {i32({2, 3}), i32({2, 2})}, BUILD(Tensor::cat({t[0], t[1]}, -1)),
       REF(cat({h[0], h[1]}, 1)), I32, EXACT},
      {"cat_of_views", {f32({3, 4}), f32({2, 3})}, BUILD(Tensor::cat({t[0].transpose(), t[1].flip({0})}, 0)),
       REF(cat({transpose(h[0]), flip(h[1], {0})}, 0)), F32, EXACT},
      {"stack_axis0", {f32({3, 4}), f32({3, 4})}, BUILD(Tensor::stack({t[0], t[1]})), REF(stack({h[0], h[1]}, 0)), F32,
       EXACT},
      {"stack_three_axis1", {f32({3, 4}), f32({3, 4}), f32({3, 4})}, BUILD(Tensor::stack({t[0], t[1], t[2]}, 1)),
       REF(stack({h[0], h[1], h[2]}, 1)), F32, EXACT},
      {"stack_last_axis", {f32({3, 2}), f32({3, 2})}, BUILD(Tensor::stack({t[0], t[1]}, -1)),
       REF(stack({h[0], h[1]}, 2)), F32, EXACT},
      {"split_equal_chunks_middle", {f32({6, 4})}, BUILD(t[0].split(2, 0)[1]), REF(slice(h[0], 0, 2, 4)), F32, EXACT},
      {"split_last_chunk_smaller", {f32({7, 3})}, BUILD(t[0].split(3, 0)[2]), REF(slice(h[0], 0, 6, 7)), F32, EXACT},
      {"split_sizes_list_middle", {f32({3, 9})}, BUILD(t[0].split(std::vector<int64_t>{2, 3, 4}, 1)[1]),
       REF(slice(h[0], 1, 2, 5)), F32, EXACT},
      {"split_sizes_list_last", {f32({3, 9})}, BUILD(t[0].split(std::vector<int64_t>{2, 3, 4}, -1)[2]),
       REF(slice(h[0], 1, 5, 9)), F32, EXACT},
      {"repeat_2d", {f32({2, 3})}, BUILD(t[0].repeat({2, 3})), REF(repeat(h[0], {2, 3})), F32, EXACT},
      {"repeat_adds_leading_axis", {f32({3})}, BUILD(t[0].repeat({2, 2})), REF(repeat(h[0], {2, 2})), F32, EXACT},
      {"repeat_ones_is_identity", {f32({2, 3})}, BUILD(t[0].repeat({1, 1})), REF(h[0]), F32, EXACT},
      {"gather_axis0", {f32({4, 3}), vals({2, 3}, I32, {3, 0, 1, 0, 2, 3})}, BUILD(t[0].gather(0, t[1])),
       REF(gather(h[0], 0, h[1])), F32, EXACT},
      {"gather_last_axis", {f32({3, 5}), vals({3, 2}, I32, {4, 0, 2, 2, 1, 3})}, BUILD(t[0].gather(-1, t[1])),
       REF(gather(h[0], 1, h[1])), F32, EXACT},
      {"gather_3d_middle_axis", {f32({2, 4, 3}), vals({2, 2, 3}, I32, {0, 1, 2, 3, 3, 3, 1, 1, 0, 2, 0, 3})},
       BUILD(t[0].gather(1, t[1])), REF(gather(h[0], 1, h[1])), F32, EXACT},

      {"reshape_of_expand", {f32({3, 1})}, BUILD(t[0].expand({3, 4}).reshape({2, 6})),
       REF(reshape(expand(h[0], {3, 4}), {2, 6})), F32, EXACT},
      {"pad_then_reshape", {f32({3, 4})}, BUILD(t[0].pad({{1, 0}, {1, 1}}, 2).reshape({6, 4})),
       REF(reshape(pad(h[0], {{1, 0}, {1, 1}}, 2), {6, 4})), F32, EXACT},
      {"shrink_then_flip_then_reshape", {f32({4, 6})}, BUILD(t[0].shrink({{1, 3}, {0, 6}}).flip({1}).reshape({3, 4})),
       REF(reshape(flip(shrink(h[0], {{1, 3}, {0, 6}}), {1}), {3, 4})), F32, EXACT},
      {"split_chunks_added", {f32({4, 3})}, BUILD(t[0].split(2, 0)[0] + t[0].split(2, 0)[1]),
       REF(map2(slice(h[0], 0, 0, 2), slice(h[0], 0, 2, 4), [](double a, double b) { return a + b; })), F32, TOL32},
      // ---- reductions ----
      {"sum_all_is_0d", {f32({3, 5, 7})}, BUILD(t[0].sum()), REF(reduce(h[0], Reduce::Sum)), F32, TOL32},
      {"sum_axis1", {f32({3, 5, 7})}, BUILD(t[0].sum(1)), REF(reduce(h[0], Reduce::Sum, {1})), F32, TOL32},
      {"sum_axis1_keepdim", {f32({3, 5, 7})}, BUILD(t[0].sum(1, true)), REF(reduce(h[0], Reduce::Sum, {1}, true)), F32,
       TOL32},
      {"sum_axes_0_2", {f32({3, 5, 7})}, BUILD(t[0].sum({0, 2})), REF(reduce(h[0], Reduce::Sum, {0, 2})), F32, TOL32},
      {"sum_axes_0_2_keepdim", {f32({3, 5, 7})}, BUILD(t[0].sum({0, 2}, true)),
       REF(reduce(h[0], Reduce::Sum, {0, 2}, true)), F32, TOL32},
      {"sum_negative_axis", {f32({3, 5, 7})}, BUILD(t[0].sum(-1)), REF(reduce(h[0], Reduce::Sum, {2})), F32, TOL32},
      {"sum_all_keepdim", {f32({3, 4})}, BUILD(t[0].sum(std::vector<int64_t>{}, true)), REF(reduce(h[0], Reduce::Sum, {}, true)), F32, TOL32},
      {"sum_size1_axis", {f32({3, 1, 4})}, BUILD(t[0].sum(1)), REF(reduce(h[0], Reduce::Sum, {1})), F32, TOL32},
      {"sum_of_0d", {f32({})}, BUILD(t[0].sum()), REF(h[0]), F32, TOL32},
      {"sum_f16", {f16({4, 16})}, BUILD(t[0].sum(1)), REF(reduce(h[0], Reduce::Sum, {1})), F16, TOL16},
      {"sum_bf16", {bf16({4, 16})}, BUILD(t[0].sum(1)), REF(reduce(h[0], Reduce::Sum, {1})), BF16, TOLBF},
      {"sum_int32", {i32({4, 6})}, BUILD(t[0].sum(0)), REF(reduce(h[0], Reduce::Sum, {0})), I32, EXACT},
      {"prod_axis0", {f32({3, 5})}, BUILD(t[0].prod({0})), REF(reduce(h[0], Reduce::Prod, {0})), F32, TOL32},
      {"prod_all", {f32({2, 3})}, BUILD(t[0].prod()), REF(reduce(h[0], Reduce::Prod)), F32, TOL32},
      {"prod_negative_axis_keepdim", {f32({3, 4})}, BUILD(t[0].prod({-1}, true)),
       REF(reduce(h[0], Reduce::Prod, {1}, true)), F32, TOL32},
      {"prod_int32", {i32({3, 4}, Fill::SmallInt)}, BUILD(t[0].prod({1})), REF(reduce(h[0], Reduce::Prod, {1})), I32,
       EXACT},
      {"max_axis1", {f32({3, 5, 7})}, BUILD(t[0].max(1)), REF(reduce(h[0], Reduce::Max, {1})), F32, EXACT},
      {"max_all", {f32({3, 5, 7})}, BUILD(t[0].max()), REF(reduce(h[0], Reduce::Max)), F32, EXACT},
      {"max_axes_keepdim", {f32({3, 5, 7})}, BUILD(t[0].max({0, -1}, true)), REF(reduce(h[0], Reduce::Max, {0, 2}, true)),
       F32, EXACT},
      {"max_all_negative_values", {vals({2, 2}, F32, {-5, -3, -4, -9})}, BUILD(t[0].max()), REF(full({}, -3)), F32,
       EXACT},
      {"max_f16", {f16({4, 8})}, BUILD(t[0].max(1)), REF(reduce(h[0], Reduce::Max, {1})), F16, EXACT},
      {"max_int32", {i32({4, 6})}, BUILD(t[0].max(0)), REF(reduce(h[0], Reduce::Max, {0})), I32, EXACT},
      {"min_axis1", {f32({3, 5, 7})}, BUILD(t[0].min({1})), REF(reduce(h[0], Reduce::Min, {1})), F32, EXACT},
      {"min_all", {f32({3, 5})}, BUILD(t[0].min()), REF(reduce(h[0], Reduce::Min)), F32, EXACT},
      {"min_axes_keepdim", {f32({3, 5, 7})}, BUILD(t[0].min({0, 1}, true)), REF(reduce(h[0], Reduce::Min, {0, 1}, true)),
       F32, EXACT},
      {"min_bf16", {bf16({4, 8})}, BUILD(t[0].min({-1})), REF(reduce(h[0], Reduce::Min, {1})), BF16, EXACT},
      {"min_int32", {i32({4, 6})}, BUILD(t[0].min({1})), REF(reduce(h[0], Reduce::Min, {1})), I32, EXACT},
      {"mean_axis1", {f32({3, 5, 7})}, BUILD(t[0].mean(1)), REF(reduce(h[0], Reduce::Mean, {1})), F32, TOL32},
      {"mean_all", {f32({3, 5, 7})}, BUILD(t[0].mean()), REF(reduce(h[0], Reduce::Mean)), F32, TOL32},
      {"mean_axes_keepdim", {f32({3, 5, 7})}, BUILD(t[0].mean({0, 2}, true)),
       REF(reduce(h[0], Reduce::Mean, {0, 2}, true)), F32, TOL32},
      {"mean_f16", {f16({4, 16})}, BUILD(t[0].mean(-1)), REF(reduce(h[0], Reduce::Mean, {1})), F16, TOL16},
      {"mean_bf16", {bf16({4, 16})}, BUILD(t[0].mean(-1)), REF(reduce(h[0], Reduce::Mean, {1})), BF16, TOLBF},
      {"var_correction1_axis1", {f32({3, 5, 7})}, BUILD(t[0].var({1})), REF(var(h[0], {1}, false, 1)), F32, TOL32},
      {"var_correction0_all", {f32({3, 5, 7})}, BUILD(t[0].var({}, false, 0)), REF(var(h[0], {}, false, 0)), F32, TOL32},
      {"var_keepdim_negative_axis", {f32({4, 6})}, BUILD(t[0].var({-1}, true)), REF(var(h[0], {1}, true, 1)), F32,
       TOL32},
      {"var_two_axes_correction0", {f32({3, 4, 5})}, BUILD(t[0].var({0, 2}, false, 0)), REF(var(h[0], {0, 2}, false, 0)),
       F32, TOL32},
      {"var_f16", {f16({4, 16})}, BUILD(t[0].var({1})), REF(var(h[0], {1}, false, 1)), F16, TOL16},
      {"argmax_axis1", {f32({4, 7})}, BUILD(t[0].argmax(1)), REF(argmax(h[0], 1, false)), I32, EXACT},
      {"argmax_axis0_keepdim", {f32({4, 7})}, BUILD(t[0].argmax(0, true)), REF(argmax(h[0], 0, true)), I32, EXACT},
      {"argmax_negative_axis_3d", {f32({3, 5, 7})}, BUILD(t[0].argmax(-2)), REF(argmax(h[0], 1, false)), I32, EXACT},
      {"argmax_ties_give_first_index", {vals({3, 4}, F32, {1, 3, 3, 0, 2, 2, 2, 2, -1, -5, -1, -1})},
       BUILD(t[0].argmax(1)), REF(array({3}, {1, 0, 0})), I32, EXACT},
      {"argmax_int32_ties", {i32({5, 6}, Fill::SmallInt)}, BUILD(t[0].argmax(1)), REF(argmax(h[0], 1, false)), I32,
       EXACT},

      {"sum_rows_plus_sum_cols", {f32({3, 4})}, BUILD(t[0].sum(1, true) + t[0].sum(0, true)),
       REF(map2(reduce(h[0], Reduce::Sum, {1}, true), reduce(h[0], Reduce::Sum, {0}, true),
                [](double a, double b) { return a + b; })),
       F32, TOL32},
      {"max_of_sum", {f32({3, 4, 5})}, BUILD(t[0].sum(2).max(0)),
       REF(reduce(reduce(h[0], Reduce::Sum, {2}), Reduce::Max, {0})), F32, TOL32},
      {"sum_of_permuted", {f32({3, 4, 5})}, BUILD(t[0].permute({2, 0, 1}).sum({0, 2})),
       REF(reduce(permute(h[0], {2, 0, 1}), Reduce::Sum, {0, 2})), F32, TOL32},
      {"min_of_flipped_keepdim", {f32({4, 5})}, BUILD(t[0].flip({1}).min({1}, true)),
       REF(reduce(flip(h[0], {1}), Reduce::Min, {1}, true)), F32, EXACT},
      {"centered_by_mean", {f32({3, 5})}, BUILD(t[0] - t[0].mean(1, true)),
       REF(map2(h[0], reduce(h[0], Reduce::Mean, {1}, true), [](double a, double b) { return a - b; })), F32, TOL32},
      {"argmax_bf16", {bf16({4, 9})}, BUILD(t[0].argmax(1)), REF(argmax(h[0], 1, false)), I32, EXACT},
      {"argmax_with_infinities", {vals({2, 3}, F32, {-INF, -INF, -5, 1, INF, INF})}, BUILD(t[0].argmax(1)),
       REF(array({2}, {2, 1})), I32, EXACT},
      // ---- matmul ----
      {"matmul_2d", {f32({3, 4}), f32({4, 5})}, BUILD(t[0].matmul(t[1])), REF(matmul(h[0], h[1])), F32, TOL32},
      {"matmul_odd_7x13_13x5", {f32({7, 13}), f32({13, 5})}, BUILD(t[0].matmul(t[1])), REF(matmul(h[0], h[1])), F32,
       TOL32},
      {"matmul_batched_broadcast", {f32({2, 1, 3, 4}), f32({5, 4, 6})}, BUILD(t[0].matmul(t[1])),
       REF(matmul(h[0], h[1])), F32, TOL32},
      {"matmul_batched_same_batch", {f32({2, 3, 4}), f32({2, 4, 2})}, BUILD(t[0].matmul(t[1])), REF(matmul(h[0], h[1])),
       F32, TOL32},
      {"matmul_batch_by_2d", {f32({3, 2, 4}), f32({4, 5})}, BUILD(t[0].matmul(t[1])), REF(matmul(h[0], h[1])), F32,
       TOL32},
      {"matmul_vector_by_matrix", {f32({4}), f32({4, 5})}, BUILD(t[0].matmul(t[1])), REF(matmul(h[0], h[1])), F32,
       TOL32},
      {"matmul_matrix_by_vector", {f32({3, 4}), f32({4})}, BUILD(t[0].matmul(t[1])), REF(matmul(h[0], h[1])), F32,
       TOL32},
      {"matmul_vector_by_vector_is_0d", {f32({6}), f32({6})}, BUILD(t[0].matmul(t[1])), REF(matmul(h[0], h[1])), F32,
       TOL32},
      {"matmul_size1_inner", {f32({3, 1}), f32({1, 4})}, BUILD(t[0].matmul(t[1])), REF(matmul(h[0], h[1])), F32, TOL32},
      {"matmul_transposed_views", {f32({4, 3}), f32({5, 4})}, BUILD(t[0].transpose().matmul(t[1].transpose())),
       REF(matmul(transpose(h[0]), transpose(h[1]))), F32, TOL32},
      {"matmul_f16", {f16({5, 8}), f16({8, 3})}, BUILD(t[0].matmul(t[1])), REF(matmul(h[0], h[1])), F16, TOL16},
      {"matmul_bf16", {bf16({5, 8}), bf16({8, 3})}, BUILD(t[0].matmul(t[1])), REF(matmul(h[0], h[1])), BF16, TOLBF},
      {"matmul_bf16_batched", {bf16({2, 3, 16}), bf16({16, 4})}, BUILD(t[0].matmul(t[1])), REF(matmul(h[0], h[1])),
       BF16, TOLBF},
      // Large enough for tensor cores on CUDA (Opt TC, codegen/tensor_core.h): m and k padded and a
      // batch axis; fp16; a 2-D b packed into column panels (tensor/reduce.cpp)
      {"matmul_bf16_tensor_core_padded", {bf16({2, 20, 40}), bf16({40, 24})}, BUILD(t[0].matmul(t[1])),
       REF(matmul(h[0], h[1])), BF16, TOLBF},
      {"matmul_f16_tensor_core", {f16({32, 48}), f16({48, 16})}, BUILD(t[0].matmul(t[1])), REF(matmul(h[0], h[1])), F16,
       TOL16},
      {"matmul_bf16_tensor_core_panels", {bf16({64, 64}), bf16({64, 64})}, BUILD(t[0].matmul(t[1])),
       REF(matmul(h[0], h[1])), BF16, TOLBF},
      {"matmul_int32", {i32({3, 4}, Fill::SmallInt), i32({4, 2}, Fill::SmallInt)}, BUILD(t[0].matmul(t[1])),
       REF(matmul(h[0], h[1])), I32, EXACT},

      {"matmul_then_relu_then_sum", {f32({3, 4}), f32({4, 5})}, BUILD(t[0].matmul(t[1]).relu().sum(1)),
       REF(reduce(map(matmul(h[0], h[1]), [](double x) { return x > 0 ? x : 0; }), Reduce::Sum, {1})), F32, TOL32},
      {"matmul_of_matmul", {f32({2, 3}), f32({3, 4}), f32({4, 2})}, BUILD(t[0].matmul(t[1]).matmul(t[2])),
       REF(matmul(matmul(h[0], h[1]), h[2])), F32, TOL32},

      // ---- composites ----
      {"softmax_last_axis", {f32({4, 8})}, BUILD(t[0].softmax()), REF(softmax(h[0], -1)), F32, TRANSC},
      {"softmax_axis0", {f32({3, 5})}, BUILD(t[0].softmax(0)), REF(softmax(h[0], 0)), F32, TRANSC},
      {"softmax_3d_middle_axis", {f32({2, 3, 4})}, BUILD(t[0].softmax(1)), REF(softmax(h[0], 1)), F32, TRANSC},
      {"softmax_large_values_stable", {vals({2, 3}, F32, {1000, 1001, 999, -1000, -1001, -999})},
       BUILD(t[0].softmax()), REF(softmax(h[0], -1)), F32, TRANSC},
      {"softmax_f16", {f16({4, 8})}, BUILD(t[0].softmax()), REF(softmax(h[0], -1)), F16, TOL16},
      {"softmax_bf16", {bf16({4, 8})}, BUILD(t[0].softmax()), REF(softmax(h[0], -1)), BF16, TOLBF},
      {"softmax_size1_axis_is_one", {f32({3, 1})}, BUILD(t[0].softmax(1)), REF(full({3, 1}, 1)), F32, TRANSC},
      {"softmax_with_negative_infinity", {vals({2, 3}, F32, {-INF, 0, 1, 2, -INF, 2})}, BUILD(t[0].softmax()),
       REF(softmax(h[0], -1)), F32, TRANSC},
      {"log_softmax_last_axis", {f32({4, 8})}, BUILD(t[0].log_softmax()), REF(log_softmax(h[0], -1)), F32, TRANSC},
      {"log_softmax_axis0", {f32({3, 5})}, BUILD(t[0].log_softmax(0)), REF(log_softmax(h[0], 0)), F32, TRANSC},
      {"log_softmax_large_values_stable", {vals({2, 3}, F32, {1000, 1001, 999, -1000, -1001, -999})},
       BUILD(t[0].log_softmax()), REF(log_softmax(h[0], -1)), F32, TRANSC},
      {"log_softmax_bf16", {bf16({4, 8})}, BUILD(t[0].log_softmax()), REF(log_softmax(h[0], -1)), BF16, TOLBF},
      {"logsumexp_last_axis", {f32({4, 8})}, BUILD(t[0].logsumexp()), REF(logsumexp(h[0], -1, false)), F32, TRANSC},
      {"logsumexp_axis0_keepdim", {f32({3, 5})}, BUILD(t[0].logsumexp(0, true)), REF(logsumexp(h[0], 0, true)), F32,
       TRANSC},
      {"logsumexp_large_values_stable", {vals({2, 3}, F32, {1000, 1000, 999, -1000, -1000, -1001})},
       BUILD(t[0].logsumexp()), REF(logsumexp(h[0], -1, false)), F32, TRANSC},
      {"logsumexp_with_negative_infinity", {vals({2, 3}, F32, {-INF, 0, 1, -INF, -INF, 3})}, BUILD(t[0].logsumexp()),
       REF(array({2}, {1 + std::log(1 + std::exp(-1.0)), 3})), F32, TRANSC},
      {"rms_norm_f16", {f16({4, 8})}, BUILD(t[0].rms_norm()), REF(rms_norm(h[0], -1, 1e-6)), F16, TOL16},
      {"cross_entropy_mean", {f32({4, 5}), vals({4}, I32, {1, 0, 4, 2})}, BUILD(t[0].cross_entropy(t[1])),
       REF(cross_entropy(h[0], h[1], "mean", -100)), F32, TRANSC},
      {"cross_entropy_sum", {f32({4, 5}), vals({4}, I32, {1, 0, 4, 2})}, BUILD(t[0].cross_entropy(t[1], "sum")),
       REF(cross_entropy(h[0], h[1], "sum", -100)), F32, TRANSC},
      {"cross_entropy_none", {f32({4, 5}), vals({4}, I32, {1, 0, 4, 2})}, BUILD(t[0].cross_entropy(t[1], "none")),
       REF(cross_entropy(h[0], h[1], "none", -100)), F32, TRANSC},
      {"cross_entropy_mean_skips_ignored", {f32({4, 5}), vals({4}, I32, {1, -100, 4, -100})},
       BUILD(t[0].cross_entropy(t[1])), REF(cross_entropy(h[0], h[1], "mean", -100)), F32, TRANSC},
      {"cross_entropy_sum_skips_ignored", {f32({4, 5}), vals({4}, I32, {-100, 3, 4, 0})},
       BUILD(t[0].cross_entropy(t[1], "sum")), REF(cross_entropy(h[0], h[1], "sum", -100)), F32, TRANSC},
      {"cross_entropy_none_ignored_is_zero", {f32({4, 5}), vals({4}, I32, {1, -100, 4, 2})},
       BUILD(t[0].cross_entropy(t[1], "none")), REF(cross_entropy(h[0], h[1], "none", -100)), F32, TRANSC},
      {"cross_entropy_custom_ignore_index", {f32({4, 5}), vals({4}, I32, {1, 0, 4, 0})},
       BUILD(t[0].cross_entropy(t[1], "mean", 0)), REF(cross_entropy(h[0], h[1], "mean", 0)), F32, TRANSC},
      {"cross_entropy_batched_labels", {f32({2, 3, 5}), vals({2, 3}, I32, {0, 4, -100, 2, 2, 1})},
       BUILD(t[0].cross_entropy(t[1])), REF(cross_entropy(h[0], h[1], "mean", -100)), F32, TRANSC},
      {"cross_entropy_int64_labels", {f32({3, 4}), vals({3}, I64, {3, 0, 1})}, BUILD(t[0].cross_entropy(t[1])),
       REF(cross_entropy(h[0], h[1], "mean", -100)), F32, TRANSC},
      {"cross_entropy_large_logits", {vals({2, 3}, F32, {1000, 0, -1000, 500, 501, 499}), vals({2}, I32, {1, 1})},
       BUILD(t[0].cross_entropy(t[1], "none")), REF(cross_entropy(h[0], h[1], "none", -100)), F32, TRANSC},
      {"rms_norm_last_axis", {f32({4, 8})}, BUILD(t[0].rms_norm()), REF(rms_norm(h[0], -1, 1e-6)), F32, TRANSC},
      {"rms_norm_axis0_eps", {f32({5, 3})}, BUILD(t[0].rms_norm(0, 0.5)), REF(rms_norm(h[0], 0, 0.5)), F32, TRANSC},
      {"rms_norm_bf16", {bf16({4, 8})}, BUILD(t[0].rms_norm()), REF(rms_norm(h[0], -1, 1e-6)), BF16, TOLBF},
      {"layer_norm_last_axis", {f32({4, 8})}, BUILD(t[0].layer_norm()), REF(layer_norm(h[0], -1, 1e-5)), F32, TRANSC},
      {"layer_norm_axis1_of_3d", {f32({2, 5, 3})}, BUILD(t[0].layer_norm(1, 0.1)), REF(layer_norm(h[0], 1, 0.1)), F32,
       TRANSC},
      {"layer_norm_f16", {f16({4, 8})}, BUILD(t[0].layer_norm()), REF(layer_norm(h[0], -1, 1e-5)), F16, TOL16},
      {"one_hot_1d", {vals({5}, I32, {0, 3, 1, 3, 2})}, BUILD(t[0].one_hot(4)), REF(one_hot(h[0], 4)), I32, EXACT},
      {"one_hot_2d", {vals({2, 3}, I32, {2, 0, 1, 1, 1, 0})}, BUILD(t[0].one_hot(3)), REF(one_hot(h[0], 3)), I32, EXACT},
      {"one_hot_int64_input", {vals({3}, I64, {4, 0, 2})}, BUILD(t[0].one_hot(5)), REF(one_hot(h[0], 5)), I32, EXACT},
      {"triu_main_diagonal", {f32({4, 4})}, BUILD(t[0].triu()), REF(triu(h[0], 0)), F32, EXACT},
      {"triu_positive_diagonal", {f32({4, 5})}, BUILD(t[0].triu(1)), REF(triu(h[0], 1)), F32, EXACT},
      {"triu_negative_diagonal", {f32({5, 4})}, BUILD(t[0].triu(-1)), REF(triu(h[0], -1)), F32, EXACT},
      {"triu_batched", {f32({2, 3, 4})}, BUILD(t[0].triu(0)), REF(triu(h[0], 0)), F32, EXACT},
      {"tril_main_diagonal", {f32({4, 4})}, BUILD(t[0].tril()), REF(tril(h[0], 0)), F32, EXACT},
      {"tril_positive_diagonal", {f32({3, 5})}, BUILD(t[0].tril(2)), REF(tril(h[0], 2)), F32, EXACT},
      {"tril_negative_diagonal", {f32({4, 4})}, BUILD(t[0].tril(-1)), REF(tril(h[0], -1)), F32, EXACT},
      {"tril_int32_batched", {i32({2, 3, 3})}, BUILD(t[0].tril(0)), REF(tril(h[0], 0)), I32, EXACT},
  };
  return cases;
}

// |got - want| <= atol + rtol*|want| elementwise; NaN matches only NaN, an infinity only itself.
::testing::AssertionResult all_close(const std::vector<double>& got, const HostArray& want, Tol tol) {
  if (static_cast<int64_t>(got.size()) != want.numel())
    return ::testing::AssertionFailure() << "got " << got.size() << " elements, want " << want.numel();
  int64_t bad = 0;
  std::ostringstream msg;
  for (size_t i = 0; i < got.size(); i++) {
    double g = got[i], w = want.data[i];
    bool ok = std::isnan(w)   ? std::isnan(g)
              : std::isinf(w) ? g == w
                              : std::isfinite(g) && std::abs(g - w) <= tol.atol + tol.rtol * std::abs(w);
    if (!ok && bad++ < 6) msg << "\n  [" << i << "] got " << g << ", want " << w << " (diff " << g - w << ")";
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << got.size() << " elements differ (atol " << tol.atol
                                       << ", rtol " << tol.rtol << "):" << msg.str();
}

// gtest prints a parameter in failure messages and ctest names: the case name, not its bytes.
void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

class OpHarness : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpHarness, MatchesHostReference) {
  const OpCase& c = GetParam();
  const uint64_t seed = seed_from_name(c.name);
  Ts tensors;
  Hs hosts;
  for (size_t i = 0; i < c.inputs.size(); i++) {
    const Input& in = c.inputs[i];
    HostArray h = in.values.empty() ? random_fill(in.shape, in.fill, in.dtype, seed + i)
                                    : round_to_dtype(array(in.shape, in.values), in.dtype);
    tensors.push_back(Tensor::from_doubles(h.data, h.shape, in.dtype));
    hosts.push_back(std::move(h));
  }
  Tensor got = c.build(tensors);
  HostArray want = round_to_dtype(c.reference(hosts), c.out);
  EXPECT_EQ(name(got.dtype()), name(c.out)) << "result dtype";
  ASSERT_EQ(shape_str(got.shape()), shape_str(want.shape)) << "result shape";
  EXPECT_TRUE(all_close(got.to_doubles(), want, c.tol));
}

INSTANTIATE_TEST_SUITE_P(Ops, OpHarness, ::testing::ValuesIn(op_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

TEST(OpHarnessTable, NamesAreUnique) {
  std::set<std::string> names;
  for (const OpCase& c : op_cases()) EXPECT_TRUE(names.insert(c.name).second) << "duplicate case " << c.name;
}

}  // namespace
}  // namespace lg
