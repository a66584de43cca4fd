// The meaning of every ALU op on one scalar (eval_alu), as ops.def writes it, and the memory
// encoding of each dtype.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ir/scalar.h"

namespace lg {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();

int64_t int_op(Op op, DType t, int64_t a, int64_t b) {
  Value args[2] = {Value::of_int(a), Value::of_int(b)};
  return eval_alu(op, t, t, args, 2).i;
}
int64_t int_op(Op op, DType t, int64_t a) {
  Value args[1] = {Value::of_int(a)};
  return eval_alu(op, t, t, args, 1).i;
}
double float_op(Op op, DType t, double a, double b) {
  Value args[2] = {Value::of_float(a), Value::of_float(b)};
  return eval_alu(op, t, t, args, 2).f;
}
double float_op(Op op, DType t, double a) {
  Value args[1] = {Value::of_float(a)};
  return eval_alu(op, t, t, args, 1).f;
}
bool float_cmp(Op op, double a, double b) {
  Value args[2] = {Value::of_float(a), Value::of_float(b)};
  return eval_alu(op, dtypes::boolean, dtypes::float32, args, 2).i != 0;
}
bool int_cmp(Op op, DType t, int64_t a, int64_t b) {
  Value args[2] = {Value::of_int(a), Value::of_int(b)};
  return eval_alu(op, dtypes::boolean, t, args, 2).i != 0;
}
int64_t float_to_int(double x, DType to, DType from = dtypes::float64) {
  Value args[1] = {Value::of_float(x)};
  return eval_alu(Op::CAST, to, from, args, 1).i;
}
double int_to_float(int64_t x, DType from, DType to) {
  Value args[1] = {Value::of_int(x)};
  return eval_alu(Op::CAST, to, from, args, 1).f;
}

// ---- integer arithmetic wraps ----

TEST(ScalarInt, AddWrapsAtTheDtypeWidth) {
  EXPECT_EQ(int_op(Op::ADD, dtypes::int32, kI32Max, 1), kI32Min);
  EXPECT_EQ(int_op(Op::ADD, dtypes::int8, 127, 1), -128);
  EXPECT_EQ(int_op(Op::ADD, dtypes::uint8, 255, 1), 0);
  EXPECT_EQ(int_op(Op::ADD, dtypes::uint64, -1, 1), 0);  // uint64 max + 1
  EXPECT_EQ(int_op(Op::ADD, dtypes::int64, kI64Max, 1), kI64Min);
}

TEST(ScalarInt, MulWrapsAtTheDtypeWidth) {
  EXPECT_EQ(int_op(Op::MUL, dtypes::int16, 300, 300), 90000 - 65536);
  EXPECT_EQ(int_op(Op::MUL, dtypes::uint8, 16, 17), 272 - 256);
  EXPECT_EQ(int_op(Op::MUL, dtypes::int64, int64_t{1} << 62, 4), 0);
}

TEST(ScalarInt, NegWraps) {
  EXPECT_EQ(int_op(Op::NEG, dtypes::int8, -128), -128);
  EXPECT_EQ(int_op(Op::NEG, dtypes::int32, 5), -5);
  EXPECT_EQ(int_op(Op::NEG, dtypes::uint8, 1), 255);
  EXPECT_EQ(int_op(Op::NEG, dtypes::int64, kI64Min), kI64Min);
}

TEST(ScalarInt, IdivTruncatesTowardZero) {
  EXPECT_EQ(int_op(Op::IDIV, dtypes::int32, 7, 2), 3);
  EXPECT_EQ(int_op(Op::IDIV, dtypes::int32, -7, 2), -3);
  EXPECT_EQ(int_op(Op::IDIV, dtypes::int32, 7, -2), -3);
  EXPECT_EQ(int_op(Op::IDIV, dtypes::int32, -7, -2), 3);
  EXPECT_EQ(int_op(Op::IDIV, dtypes::int64, -1, 4), 0);
}

TEST(ScalarInt, ModTakesTheDividendsSign) {
  EXPECT_EQ(int_op(Op::MOD, dtypes::int32, 7, 2), 1);
  EXPECT_EQ(int_op(Op::MOD, dtypes::int32, -7, 2), -1);
  EXPECT_EQ(int_op(Op::MOD, dtypes::int32, 7, -2), 1);
  EXPECT_EQ(int_op(Op::MOD, dtypes::int32, -7, -2), -1);
  EXPECT_EQ(int_op(Op::MOD, dtypes::int8, -128, 3), -2);
}

TEST(ScalarInt, IdivAndModSatisfyTheDivisionIdentity) {
  for (int64_t a = -20; a <= 20; a++)
    for (int64_t b = -6; b <= 6; b++) {
      if (b == 0) continue;
      int64_t q = int_op(Op::IDIV, dtypes::int32, a, b), r = int_op(Op::MOD, dtypes::int32, a, b);
      EXPECT_EQ(q * b + r, a) << a << " " << b;
      EXPECT_LT(std::abs(r), std::abs(b));
    }
}

TEST(ScalarInt, DivisionByZeroGivesZero) {
  EXPECT_EQ(int_op(Op::IDIV, dtypes::int32, 7, 0), 0);
  EXPECT_EQ(int_op(Op::MOD, dtypes::int32, 7, 0), 0);
  EXPECT_EQ(int_op(Op::IDIV, dtypes::uint64, -1, 0), 0);
  EXPECT_EQ(int_op(Op::MOD, dtypes::uint8, 200, 0), 0);
}

TEST(ScalarInt, MostNegativeDividedByMinusOneWraps) {
  EXPECT_EQ(int_op(Op::IDIV, dtypes::int64, kI64Min, -1), kI64Min);
  EXPECT_EQ(int_op(Op::MOD, dtypes::int64, kI64Min, -1), 0);
  EXPECT_EQ(int_op(Op::IDIV, dtypes::int32, kI32Min, -1), kI32Min);
  EXPECT_EQ(int_op(Op::IDIV, dtypes::int8, -128, -1), -128);
}

TEST(ScalarInt, UnsignedDivisionUsesTheUnsignedValue) {
  EXPECT_EQ(int_op(Op::IDIV, dtypes::uint32, 4294967295, 2), 2147483647);
  EXPECT_EQ(int_op(Op::IDIV, dtypes::uint64, -1, 2), kI64Max);  // (2^64-1)/2
  EXPECT_EQ(int_op(Op::MOD, dtypes::uint64, -1, 10), 5);        // 18446744073709551615 % 10
}

TEST(ScalarInt, MaxComparesInTheDtype) {
  EXPECT_EQ(int_op(Op::MAX, dtypes::int32, -3, 2), 2);
  EXPECT_EQ(int_op(Op::MAX, dtypes::int32, -3, -7), -3);
  EXPECT_EQ(int_op(Op::MAX, dtypes::uint64, -1, 1), -1);  // uint64 max is the larger
}

TEST(ScalarInt, ComparisonsOfSignedAndUnsigned) {
  EXPECT_TRUE(int_cmp(Op::CMPLT, dtypes::int32, -1, 1));
  EXPECT_FALSE(int_cmp(Op::CMPLT, dtypes::int32, 1, 1));
  EXPECT_FALSE(int_cmp(Op::CMPLT, dtypes::uint32, 4294967295, 1));
  EXPECT_FALSE(int_cmp(Op::CMPLT, dtypes::uint64, -1, 1));
  EXPECT_TRUE(int_cmp(Op::CMPLT, dtypes::uint64, 1, -1));
  EXPECT_TRUE(int_cmp(Op::CMPEQ, dtypes::int16, 5, 5));
  EXPECT_TRUE(int_cmp(Op::CMPNE, dtypes::int16, 5, 6));
  EXPECT_TRUE(int_cmp(Op::CMPLT, dtypes::boolean, 0, 1));
}

TEST(ScalarInt, BitwiseOpsOnIntegersAndBool) {
  EXPECT_EQ(int_op(Op::AND, dtypes::int32, 0b1100, 0b1010), 0b1000);
  EXPECT_EQ(int_op(Op::OR, dtypes::int32, 0b1100, 0b1010), 0b1110);
  EXPECT_EQ(int_op(Op::XOR, dtypes::int32, 0b1100, 0b1010), 0b0110);
  EXPECT_EQ(int_op(Op::XOR, dtypes::uint8, 255, 1), 254);
  EXPECT_EQ(int_op(Op::AND, dtypes::int8, -1, -128), -128);
  EXPECT_EQ(int_op(Op::AND, dtypes::boolean, 1, 0), 0);
  EXPECT_EQ(int_op(Op::OR, dtypes::boolean, 1, 0), 1);
  EXPECT_EQ(int_op(Op::XOR, dtypes::boolean, 1, 1), 0);
}

TEST(ScalarInt, ShrIsArithmeticForSignedDtypes) {
  EXPECT_EQ(int_op(Op::SHR, dtypes::int8, -128, 1), -64);
  EXPECT_EQ(int_op(Op::SHR, dtypes::int32, -1, 31), -1);
  EXPECT_EQ(int_op(Op::SHR, dtypes::int64, -1, 63), -1);
  EXPECT_EQ(int_op(Op::SHR, dtypes::int32, -8, 2), -2);
  EXPECT_EQ(int_op(Op::SHR, dtypes::int32, 8, 2), 2);
}

TEST(ScalarInt, ShrIsLogicalForUnsignedDtypes) {
  EXPECT_EQ(int_op(Op::SHR, dtypes::uint8, 255, 1), 127);
  EXPECT_EQ(int_op(Op::SHR, dtypes::uint32, 4294967295, 31), 1);
  EXPECT_EQ(int_op(Op::SHR, dtypes::uint64, -1, 63), 1);
  EXPECT_EQ(int_op(Op::SHR, dtypes::uint64, -1, 1), kI64Max);
}

TEST(ScalarInt, ShlWrapsAndShiftAmountsAreMaskedToTheWidth) {
  EXPECT_EQ(int_op(Op::SHL, dtypes::int8, 1, 7), -128);
  EXPECT_EQ(int_op(Op::SHL, dtypes::uint8, 3, 7), 128);
  EXPECT_EQ(int_op(Op::SHL, dtypes::int32, 1, 33), 2);  // 33 & 31 == 1
  EXPECT_EQ(int_op(Op::SHL, dtypes::uint8, 1, 8), 1);   // 8 & 7 == 0
  EXPECT_EQ(int_op(Op::SHR, dtypes::int64, 256, 64 + 4), 16);
}

TEST(ScalarInt, WhereSelectsByTheBoolCondition) {
  Value args[3] = {Value::of_int(1), Value::of_int(10), Value::of_int(20)};
  EXPECT_EQ(eval_alu(Op::WHERE, dtypes::int32, dtypes::int32, args, 3).i, 10);
  args[0] = Value::of_int(0);
  EXPECT_EQ(eval_alu(Op::WHERE, dtypes::int32, dtypes::int32, args, 3).i, 20);
}

TEST(ScalarInt, MulaccIsMulThenAddEachWrapping) {
  Value args[3] = {Value::of_int(100), Value::of_int(3), Value::of_int(100)};
  EXPECT_EQ(eval_alu(Op::MULACC, dtypes::int8, dtypes::int8, args, 3).i, static_cast<int8_t>(300 + 100));
}

// ---- floats ----

TEST(ScalarFloat, MaxPropagatesNaNFromEitherSide) {
  EXPECT_TRUE(std::isnan(float_op(Op::MAX, dtypes::float32, kNaN, 1.0)));
  EXPECT_TRUE(std::isnan(float_op(Op::MAX, dtypes::float32, 1.0, kNaN)));
  EXPECT_TRUE(std::isnan(float_op(Op::MAX, dtypes::float64, -kInf, kNaN)));
  EXPECT_EQ(float_op(Op::MAX, dtypes::float32, -1.0, 2.0), 2.0);
  EXPECT_EQ(float_op(Op::MAX, dtypes::float32, -kInf, -3.0), -3.0);
}

TEST(ScalarFloat, ComparisonsWithNaN) {
  EXPECT_FALSE(float_cmp(Op::CMPLT, kNaN, 1.0));
  EXPECT_FALSE(float_cmp(Op::CMPLT, 1.0, kNaN));
  EXPECT_FALSE(float_cmp(Op::CMPEQ, kNaN, kNaN));
  EXPECT_TRUE(float_cmp(Op::CMPNE, kNaN, kNaN));
  EXPECT_TRUE(float_cmp(Op::CMPNE, kNaN, 1.0));
}

TEST(ScalarFloat, ComparisonsOfOrdinaryValuesAndSignedZero) {
  EXPECT_TRUE(float_cmp(Op::CMPLT, -1.0, 1.0));
  EXPECT_FALSE(float_cmp(Op::CMPLT, 1.0, 1.0));
  EXPECT_TRUE(float_cmp(Op::CMPEQ, -0.0, 0.0));
  EXPECT_FALSE(float_cmp(Op::CMPNE, -0.0, 0.0));
  EXPECT_TRUE(float_cmp(Op::CMPLT, -kInf, -1e30));
}

TEST(ScalarFloat, Float32ArithmeticRoundsToFloat32) {
  EXPECT_EQ(float_op(Op::ADD, dtypes::float32, 1.0, 1e-10), 1.0);
  EXPECT_EQ(float_op(Op::ADD, dtypes::float32, static_cast<double>(0.1f), static_cast<double>(0.2f)),
            static_cast<double>(0.1f + 0.2f));
  EXPECT_EQ(float_op(Op::RECIPROCAL, dtypes::float32, 3.0), static_cast<double>(1.0f / 3.0f));
  EXPECT_EQ(float_op(Op::RECIPROCAL, dtypes::float64, 3.0), 1.0 / 3.0);
}

TEST(ScalarFloat, Float16ArithmeticRoundsTheResultToHalf) {
  EXPECT_EQ(float_op(Op::ADD, dtypes::float16, 1.0, std::ldexp(1.0, -11)), 1.0);  // tie: to even
  EXPECT_EQ(float_op(Op::ADD, dtypes::float16, 1.0, std::ldexp(1.0, -10)), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(float_op(Op::ADD, dtypes::float16, 2048.0, 1.0), 2048.0);
  EXPECT_EQ(float_op(Op::ADD, dtypes::float16, 2048.0, 3.0), 2052.0);  // 2051 is a tie: to even
  EXPECT_EQ(float_op(Op::ADD, dtypes::float16, 65504.0, 8.0), 65504.0);
  EXPECT_EQ(float_op(Op::ADD, dtypes::float16, 65504.0, 16.0), kInf);
  EXPECT_EQ(float_op(Op::MUL, dtypes::float16, 300.0, 300.0), kInf);
  EXPECT_EQ(float_op(Op::SQRT, dtypes::float16, 2.0), 1.4140625);
  EXPECT_EQ(float_op(Op::RECIPROCAL, dtypes::float16, 3.0), 0.333251953125);
}

TEST(ScalarFloat, BFloat16ArithmeticRoundsTheResultToBFloat16) {
  EXPECT_EQ(float_op(Op::ADD, dtypes::bfloat16, 1.0, std::ldexp(1.0, -8)), 1.0);  // tie: to even
  EXPECT_EQ(float_op(Op::ADD, dtypes::bfloat16, 256.0, 1.0), 256.0);
  EXPECT_EQ(float_op(Op::ADD, dtypes::bfloat16, 256.0, 3.0), 260.0);  // 259 is a tie: to even
  EXPECT_EQ(float_op(Op::RECIPROCAL, dtypes::bfloat16, 3.0), 0.333984375);
  EXPECT_EQ(float_op(Op::MUL, dtypes::bfloat16, 1.0 + std::ldexp(1.0, -7), 1.0 + std::ldexp(1.0, -7)),
            1.0 + std::ldexp(1.0, -6));  // 1 + 2^-6 + 2^-14 rounds down
}

TEST(ScalarFloat, NegOfZeroIsNegativeZero) {
  EXPECT_TRUE(std::signbit(float_op(Op::NEG, dtypes::float32, 0.0)));
  EXPECT_EQ(float_op(Op::NEG, dtypes::float16, 2.5), -2.5);
}

TEST(ScalarFloat, UnaryMathFollowsTheOpMeanings) {
  EXPECT_EQ(float_op(Op::EXP2, dtypes::float32, 3.0), 8.0);
  EXPECT_EQ(float_op(Op::LOG2, dtypes::float32, 8.0), 3.0);
  EXPECT_EQ(float_op(Op::LOG2, dtypes::float32, 0.0), -kInf);
  EXPECT_TRUE(std::isnan(float_op(Op::LOG2, dtypes::float32, -1.0)));
  EXPECT_TRUE(std::isnan(float_op(Op::SQRT, dtypes::float64, -1.0)));
  EXPECT_EQ(float_op(Op::SIN, dtypes::float64, 0.0), 0.0);
  EXPECT_EQ(float_op(Op::TRUNC, dtypes::float32, -2.7), -2.0);
  EXPECT_EQ(float_op(Op::TRUNC, dtypes::float32, 2.7), 2.0);
}

TEST(ScalarFloat, MulaccIsFusedRoundedOnce) {
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: the 2^-24 survives only without rounding the product first.
  double a = 1 + std::ldexp(1.0, -12), c = -(1 + std::ldexp(1.0, -11));
  Value args[3] = {Value::of_float(a), Value::of_float(a), Value::of_float(c)};
  EXPECT_EQ(eval_alu(Op::MULACC, dtypes::float32, dtypes::float32, args, 3).f, std::ldexp(1.0, -24));
  Value prod = eval_alu(Op::MUL, dtypes::float32, dtypes::float32, args, 2);
  Value sum[2] = {prod, args[2]};
  EXPECT_EQ(eval_alu(Op::ADD, dtypes::float32, dtypes::float32, sum, 2).f, 0.0);  // unfused: 0
  // float16: fused in float32, then rounded; 1025*1025 - 65504 is still beyond float16's range.
  Value h[3] = {Value::of_float(1025), Value::of_float(1025), Value::of_float(-65504)};
  EXPECT_EQ(eval_alu(Op::MULACC, dtypes::float16, dtypes::float16, h, 3).f, kInf);
}

// ---- CAST ----

TEST(ScalarCast, FloatToIntTruncatesTowardZero) {
  EXPECT_EQ(float_to_int(2.7, dtypes::int32), 2);
  EXPECT_EQ(float_to_int(-2.7, dtypes::int32), -2);
  EXPECT_EQ(float_to_int(-0.5, dtypes::int8), 0);
  EXPECT_EQ(float_to_int(255.9, dtypes::uint8), 255);
  EXPECT_EQ(float_to_int(1e15, dtypes::int64), int64_t{1'000'000'000'000'000});
}

TEST(ScalarCast, FloatToIntSaturatesOutOfRange) {
  EXPECT_EQ(float_to_int(300.0, dtypes::int8), 127);
  EXPECT_EQ(float_to_int(-300.0, dtypes::int8), -128);
  EXPECT_EQ(float_to_int(-5.0, dtypes::uint8), 0);
  EXPECT_EQ(float_to_int(5e9, dtypes::uint32), int64_t{4294967295});
  EXPECT_EQ(float_to_int(1e20, dtypes::int64), kI64Max);
  EXPECT_EQ(float_to_int(-1e20, dtypes::int64), kI64Min);
  EXPECT_EQ(float_to_int(1e30, dtypes::uint64), -1);  // uint64 max
  EXPECT_EQ(float_to_int(-1.0, dtypes::uint64), 0);
  EXPECT_EQ(float_to_int(kInf, dtypes::int32), kI32Max);
  EXPECT_EQ(float_to_int(-kInf, dtypes::int32), kI32Min);
}

TEST(ScalarCast, FloatNaNToIntIsZero) {
  EXPECT_EQ(float_to_int(kNaN, dtypes::int32), 0);
  EXPECT_EQ(float_to_int(kNaN, dtypes::uint8), 0);
  EXPECT_EQ(float_to_int(kNaN, dtypes::int64), 0);
  EXPECT_EQ(float_to_int(kNaN, dtypes::uint64), 0);
}

TEST(ScalarCast, ToBoolIsNonzero) {
  EXPECT_EQ(float_to_int(0.0, dtypes::boolean), 0);
  EXPECT_EQ(float_to_int(-0.0, dtypes::boolean), 0);
  EXPECT_EQ(float_to_int(0.5, dtypes::boolean), 1);
  EXPECT_EQ(float_to_int(kNaN, dtypes::boolean), 1);  // NaN != 0
  Value v[1] = {Value::of_int(256)};
  EXPECT_EQ(eval_alu(Op::CAST, dtypes::boolean, dtypes::int16, v, 1).i, 1);  // not wrapped to 8 bits first
  v[0] = Value::of_int(0);
  EXPECT_EQ(eval_alu(Op::CAST, dtypes::boolean, dtypes::int16, v, 1).i, 0);
  v[0] = Value::of_int(-7);
  EXPECT_EQ(eval_alu(Op::CAST, dtypes::boolean, dtypes::int64, v, 1).i, 1);
}

TEST(ScalarCast, IntToIntWraps) {
  Value v[1] = {Value::of_int(300)};
  EXPECT_EQ(eval_alu(Op::CAST, dtypes::uint8, dtypes::int32, v, 1).i, 44);
  v[0] = Value::of_int(-1);
  EXPECT_EQ(eval_alu(Op::CAST, dtypes::uint16, dtypes::int8, v, 1).i, 65535);
  v[0] = Value::of_int(4294967295);
  EXPECT_EQ(eval_alu(Op::CAST, dtypes::int32, dtypes::uint32, v, 1).i, -1);
  v[0] = Value::of_int(1);
  EXPECT_EQ(eval_alu(Op::CAST, dtypes::int32, dtypes::boolean, v, 1).i, 1);
}

TEST(ScalarCast, IntToFloatRoundsToNearestOnce) {
  EXPECT_EQ(int_to_float(16777217, dtypes::int32, dtypes::float32), 16777216.0);  // tie: to even
  EXPECT_EQ(int_to_float(16777219, dtypes::int32, dtypes::float32), 16777220.0);  // tie: to even
  EXPECT_EQ(int_to_float((int64_t{1} << 53) + 1, dtypes::int64, dtypes::float64), std::ldexp(1.0, 53));
  EXPECT_EQ(int_to_float(-1, dtypes::uint64, dtypes::float64), std::ldexp(1.0, 64));
  EXPECT_EQ(int_to_float(-1, dtypes::uint64, dtypes::float32), std::ldexp(1.0, 64));
  EXPECT_EQ(int_to_float(65519, dtypes::int32, dtypes::float16), 65504.0);
  EXPECT_EQ(int_to_float(65520, dtypes::int32, dtypes::float16), kInf);
  EXPECT_EQ(int_to_float(2049, dtypes::int32, dtypes::float16), 2048.0);  // tie: to even
  EXPECT_EQ(int_to_float(-3, dtypes::int8, dtypes::bfloat16), -3.0);
  EXPECT_EQ(int_to_float(1, dtypes::boolean, dtypes::float32), 1.0);
}

// 2^24 + 2^16 + 1 lies just above the bfloat16 halfway point 2^24 + 2^16, so it rounds up. Its
// nearest float is 2^24 + 2^16 exactly, so converting through float would round down to 2^24.
TEST(ScalarCast, IntToBFloat16DoesNotRoundTwice) {
  int64_t x = (int64_t{1} << 24) + (int64_t{1} << 16) + 1;
  EXPECT_EQ(int_to_float(x, dtypes::int32, dtypes::bfloat16), std::ldexp(1.0, 24) + std::ldexp(1.0, 17));
  EXPECT_EQ(int_to_float(-x, dtypes::int32, dtypes::bfloat16), -(std::ldexp(1.0, 24) + std::ldexp(1.0, 17)));
}

TEST(ScalarCast, FloatToNarrowerFloatRoundsToNearestEven) {
  Value v[1] = {Value::of_float(1.0 + std::ldexp(1.0, -11))};
  EXPECT_EQ(eval_alu(Op::CAST, dtypes::float16, dtypes::float32, v, 1).f, 1.0);
  v[0] = Value::of_float(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40));  // above the tie, in float64
  EXPECT_EQ(eval_alu(Op::CAST, dtypes::float16, dtypes::float64, v, 1).f, 1.0 + std::ldexp(1.0, -10));
  v[0] = Value::of_float(0.1);
  EXPECT_EQ(eval_alu(Op::CAST, dtypes::float32, dtypes::float64, v, 1).f, static_cast<double>(0.1f));
  v[0] = Value::of_float(1e300);
  EXPECT_EQ(eval_alu(Op::CAST, dtypes::float32, dtypes::float64, v, 1).f, kInf);
  v[0] = Value::of_float(1.0 + std::ldexp(1.0, -10));  // a half value; bfloat16 has 7 mantissa bits
  EXPECT_EQ(eval_alu(Op::CAST, dtypes::bfloat16, dtypes::float16, v, 1).f, 1.0);
}

TEST(ScalarCast, FloatCastKeepsNaN) {
  Value v[1] = {Value::of_float(kNaN)};
  EXPECT_TRUE(std::isnan(eval_alu(Op::CAST, dtypes::float16, dtypes::float32, v, 1).f));
  EXPECT_TRUE(std::isnan(eval_alu(Op::CAST, dtypes::bfloat16, dtypes::float64, v, 1).f));
}

// ---- BITCAST ----

TEST(ScalarBitcast, Float32AndUInt32ShareBits) {
  Value v[1] = {Value::of_float(1.0)};
  EXPECT_EQ(eval_alu(Op::BITCAST, dtypes::uint32, dtypes::float32, v, 1).i, 0x3f800000);
  v[0] = Value::of_float(-0.0);
  EXPECT_EQ(eval_alu(Op::BITCAST, dtypes::uint32, dtypes::float32, v, 1).i, 0x80000000);
  EXPECT_EQ(eval_alu(Op::BITCAST, dtypes::int32, dtypes::float32, v, 1).i, kI32Min);
  v[0] = Value::of_int(0xbf800000);
  EXPECT_EQ(eval_alu(Op::BITCAST, dtypes::float32, dtypes::uint32, v, 1).f, -1.0);
  v[0] = Value::of_int(0x7fc00000);
  EXPECT_TRUE(std::isnan(eval_alu(Op::BITCAST, dtypes::float32, dtypes::uint32, v, 1).f));
}

TEST(ScalarBitcast, SixteenBitFloatsAndIntegers) {
  Value v[1] = {Value::of_float(1.0)};
  EXPECT_EQ(eval_alu(Op::BITCAST, dtypes::uint16, dtypes::float16, v, 1).i, 0x3c00);
  EXPECT_EQ(eval_alu(Op::BITCAST, dtypes::int16, dtypes::bfloat16, v, 1).i, 0x3f80);
  v[0] = Value::of_int(-16384);  // 0xc000
  EXPECT_EQ(eval_alu(Op::BITCAST, dtypes::float16, dtypes::int16, v, 1).f, -2.0);
  v[0] = Value::of_int(-1);
  EXPECT_EQ(eval_alu(Op::BITCAST, dtypes::uint16, dtypes::int16, v, 1).i, 65535);
  v[0] = Value::of_int(65535);
  EXPECT_EQ(eval_alu(Op::BITCAST, dtypes::int16, dtypes::uint16, v, 1).i, -1);
}

TEST(ScalarBitcast, Float64AndInt64ShareBits) {
  Value v[1] = {Value::of_float(2.0)};
  EXPECT_EQ(eval_alu(Op::BITCAST, dtypes::int64, dtypes::float64, v, 1).i, 0x4000000000000000);
  v[0] = Value::of_int(std::bit_cast<int64_t>(-0.5));
  EXPECT_EQ(eval_alu(Op::BITCAST, dtypes::float64, dtypes::uint64, v, 1).f, -0.5);
}

// ---- memory encoding ----

struct Sample {
  DType t;
  std::vector<Value> values;
};

std::vector<Sample> samples() {
  auto ints = [](std::initializer_list<int64_t> xs) {
    std::vector<Value> v;
    for (int64_t x : xs) v.push_back(Value::of_int(x));
    return v;
  };
  auto floats = [](std::initializer_list<double> xs) {
    std::vector<Value> v;
    for (double x : xs) v.push_back(Value::of_float(x));
    return v;
  };
  return {
      {dtypes::boolean, ints({0, 1})},
      {dtypes::int8, ints({0, 1, -1, 127, -128})},
      {dtypes::uint8, ints({0, 1, 200, 255})},
      {dtypes::int16, ints({-32768, -2, 32767})},
      {dtypes::uint16, ints({0, 40000, 65535})},
      {dtypes::int32, ints({kI32Min, -5, kI32Max})},
      {dtypes::uint32, ints({0, 3000000000, 4294967295})},
      {dtypes::int64, ints({kI64Min, -7, kI64Max})},
      {dtypes::uint64, ints({0, -1, kI64Max})},
      {dtypes::float16, floats({0.0, -0.0, 1.0, -2.5, 65504.0, std::ldexp(1.0, -24), kInf, -kInf})},
      {dtypes::bfloat16, floats({0.0, -0.0, 1.0, 0.333984375, 3.3895313892515355e38, kInf})},
      {dtypes::float32, floats({0.0, -0.0, 1.0, static_cast<double>(0.1f), 3.4028234663852886e38, -kInf})},
      {dtypes::float64, floats({0.0, -0.0, 0.1, 1e300, 5e-324, kInf})},
  };
}

TEST(ScalarMemory, StoreThenLoadRoundTripsEveryDtype) {
  for (const Sample& s : samples()) {
    for (Value v : s.values) {
      unsigned char buf[16];
      std::memset(buf, 0xAA, sizeof buf);
      store_value(buf, s.t, v);
      for (int i = itemsize(s.t); i < 16; i++) ASSERT_EQ(buf[i], 0xAA) << name(s.t) << " wrote past its size";
      Value back = load_value(buf, s.t);
      if (is_float(s.t)) {
        EXPECT_EQ(std::bit_cast<uint64_t>(back.f), std::bit_cast<uint64_t>(v.f)) << name(s.t) << " " << v.f;
      } else {
        EXPECT_EQ(back.i, v.i) << name(s.t);
      }
    }
  }
}

TEST(ScalarMemory, StoresLittleEndianBitsOfTheDtype) {
  unsigned char buf[8] = {};
  store_value(buf, dtypes::int16, Value::of_int(-2));
  EXPECT_EQ(buf[0], 0xfe);
  EXPECT_EQ(buf[1], 0xff);
  store_value(buf, dtypes::float16, Value::of_float(1.0));
  EXPECT_EQ(buf[0], 0x00);
  EXPECT_EQ(buf[1], 0x3c);
  store_value(buf, dtypes::bfloat16, Value::of_float(1.0));
  EXPECT_EQ(buf[1], 0x3f);
  EXPECT_EQ(buf[0], 0x80);
  float f;
  store_value(buf, dtypes::float32, Value::of_float(1.5));
  std::memcpy(&f, buf, 4);
  EXPECT_EQ(f, 1.5f);
  store_value(buf, dtypes::boolean, Value::of_int(1));
  EXPECT_EQ(buf[0], 1);
}

TEST(ScalarMemory, LoadOfAnyNonzeroBoolByteIsTrue) {
  unsigned char byte = 7;
  EXPECT_EQ(load_value(&byte, dtypes::boolean).i, 1);
  byte = 0;
  EXPECT_EQ(load_value(&byte, dtypes::boolean).i, 0);
}

TEST(ScalarMemory, LoadSignExtendsSignedAndZeroExtendsUnsigned) {
  unsigned char byte = 0xff;
  EXPECT_EQ(load_value(&byte, dtypes::int8).i, -1);
  EXPECT_EQ(load_value(&byte, dtypes::uint8).i, 255);
}

// ---- reductions ----

TEST(ScalarReduce, IdentityOfAddMulAndMax) {
  EXPECT_EQ(reduce_identity(Op::ADD, dtypes::float32).f, 0.0);
  EXPECT_FALSE(std::signbit(reduce_identity(Op::ADD, dtypes::float32).f));
  EXPECT_EQ(reduce_identity(Op::ADD, dtypes::int32).i, 0);
  EXPECT_EQ(reduce_identity(Op::MUL, dtypes::float16).f, 1.0);
  EXPECT_EQ(reduce_identity(Op::MUL, dtypes::uint8).i, 1);
  EXPECT_EQ(reduce_identity(Op::MAX, dtypes::float32).f, -kInf);
  EXPECT_EQ(reduce_identity(Op::MAX, dtypes::bfloat16).f, -kInf);
  EXPECT_EQ(reduce_identity(Op::MAX, dtypes::int8).i, -128);
  EXPECT_EQ(reduce_identity(Op::MAX, dtypes::int64).i, kI64Min);
  EXPECT_EQ(reduce_identity(Op::MAX, dtypes::uint8).i, 0);
  EXPECT_EQ(reduce_identity(Op::MAX, dtypes::uint64).i, 0);
  EXPECT_EQ(reduce_identity(Op::MAX, dtypes::boolean).i, 0);
}

TEST(ScalarReduce, IdentityLeavesEveryValueUnchanged) {
  const int64_t xs[] = {-128, -1, 0, 5, 127};
  for (Op op : {Op::ADD, Op::MUL, Op::MAX})
    for (int64_t x : xs)
      EXPECT_EQ(int_op(op, dtypes::int8, reduce_identity(op, dtypes::int8).i, x), x) << op_name(op);
}

TEST(ScalarValue, AsDoubleReadsUnsignedSixtyFourBitValues) {
  EXPECT_EQ(value_as_double(Value::of_int(-1), dtypes::uint64), std::ldexp(1.0, 64));
  EXPECT_EQ(value_as_double(Value::of_int(-1), dtypes::int64), -1.0);
  EXPECT_EQ(value_as_double(Value::of_float(2.5), dtypes::float16), 2.5);
}

}  // namespace
}  // namespace lg
