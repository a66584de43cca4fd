// Dtypes: sizes, names, promotion, integer ranges, and the exact 16-bit float conversions
// (round to nearest, ties to even).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "ir/dtype.h"

namespace lg {
namespace {

const DType kAllScalars[] = {dtypes::boolean, dtypes::int8,    dtypes::uint8,    dtypes::int16,
                             dtypes::uint16,  dtypes::int32,   dtypes::uint32,   dtypes::int64,
                             dtypes::uint64,  dtypes::float16, dtypes::bfloat16, dtypes::float32,
                             dtypes::float64};

float float_of(uint32_t u) { return std::bit_cast<float>(u); }
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// ---- sizes, names, classification ----

TEST(DType, ItemsizeOfEveryScalar) {
  const int expected[] = {1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8};
  for (size_t i = 0; i < std::size(kAllScalars); i++)
    EXPECT_EQ(itemsize(kAllScalars[i]), expected[i]) << name(kAllScalars[i]);
  EXPECT_EQ(itemsize(dtypes::void_), 0);
}

TEST(DType, ItemsizeOfVectorCountsLanesAndOfPointerIsEight) {
  EXPECT_EQ(itemsize(dtypes::float32.vec(4)), 16);
  EXPECT_EQ(itemsize(dtypes::float16.vec(8)), 16);
  EXPECT_EQ(itemsize(dtypes::int8.as_ptr()), 8);
  EXPECT_EQ(itemsize(dtypes::float32.vec(4).as_ptr()), 8);
}

TEST(DType, BitsizeIsEightTimesItemsizeForEveryScalar) {
  for (DType t : kAllScalars) EXPECT_EQ(bitsize(t.scalar), 8 * itemsize(t)) << name(t);
  EXPECT_EQ(bitsize(Scalar::Void), 0);
}

TEST(DType, ShortNameOfEveryScalar) {
  const char* expected[] = {"bool", "i8",  "u8",  "i16",  "u16", "i32", "u32",
                            "i64",  "u64", "f16", "bf16", "f32", "f64"};
  for (size_t i = 0; i < std::size(kAllScalars); i++) EXPECT_EQ(name(kAllScalars[i]), expected[i]);
  EXPECT_EQ(name(dtypes::void_), "void");
}

TEST(DType, NameMarksVectorWidthAndPointer) {
  EXPECT_EQ(name(dtypes::float32.vec(4)), "f32x4");
  EXPECT_EQ(name(dtypes::float32.as_ptr()), "f32*");
  EXPECT_EQ(name(dtypes::float16.vec(2).as_ptr()), "f16x2*");
}

TEST(DType, FromNameAcceptsShortNames) {
  for (DType t : kAllScalars) {
    std::optional<DType> parsed = dtype_from_name(name(t));
    ASSERT_TRUE(parsed.has_value()) << name(t);
    EXPECT_EQ(*parsed, t);
  }
}

TEST(DType, FromNameAcceptsLongNamesAndAliases) {
  EXPECT_EQ(dtype_from_name("float32"), dtypes::float32);
  EXPECT_EQ(dtype_from_name("float"), dtypes::float32);
  EXPECT_EQ(dtype_from_name("half"), dtypes::float16);
  EXPECT_EQ(dtype_from_name("float16"), dtypes::float16);
  EXPECT_EQ(dtype_from_name("bfloat16"), dtypes::bfloat16);
  EXPECT_EQ(dtype_from_name("double"), dtypes::float64);
  EXPECT_EQ(dtype_from_name("uint64"), dtypes::uint64);
  EXPECT_EQ(dtype_from_name("int8"), dtypes::int8);
  EXPECT_EQ(dtype_from_name("bool"), dtypes::boolean);
}

TEST(DType, FromNameRejectsUnknownNamesAndVoid) {
  EXPECT_FALSE(dtype_from_name("f33").has_value());
  EXPECT_FALSE(dtype_from_name("").has_value());
  EXPECT_FALSE(dtype_from_name("F32").has_value());
  EXPECT_FALSE(dtype_from_name("void").has_value());
}

TEST(DType, ClassifiesFloatsIntsUnsignedAndBool) {
  EXPECT_TRUE(is_float(dtypes::bfloat16));
  EXPECT_TRUE(is_float(dtypes::float64));
  EXPECT_FALSE(is_float(dtypes::int32));
  EXPECT_TRUE(is_int(dtypes::uint8));
  EXPECT_TRUE(is_int(dtypes::int64));
  EXPECT_FALSE(is_int(dtypes::boolean));
  EXPECT_FALSE(is_int(dtypes::float16));
  EXPECT_FALSE(is_int(dtypes::void_));
  EXPECT_TRUE(is_unsigned(dtypes::uint64));
  EXPECT_FALSE(is_unsigned(dtypes::int64));
  EXPECT_FALSE(is_unsigned(dtypes::boolean));
  EXPECT_TRUE(is_bool(dtypes::boolean));
  EXPECT_FALSE(is_bool(dtypes::uint8));
}

// ---- promotion ----

TEST(DTypePromote, OfADtypeWithItselfIsItself) {
  for (DType t : kAllScalars) EXPECT_EQ(promote(t, t), t) << name(t);
}

TEST(DTypePromote, IsSymmetric) {
  for (DType a : kAllScalars)
    for (DType b : kAllScalars) EXPECT_EQ(promote(a, b), promote(b, a)) << name(a) << " " << name(b);
}

TEST(DTypePromote, IsTheLeastUpperBoundInTheLattice) {
  struct Case {
    DType a, b, want;
  };
  const Case cases[] = {
      {dtypes::boolean, dtypes::int8, dtypes::int8},
      {dtypes::boolean, dtypes::uint8, dtypes::uint8},
      {dtypes::boolean, dtypes::float32, dtypes::float32},
      {dtypes::uint8, dtypes::int8, dtypes::int16},
      {dtypes::uint16, dtypes::int16, dtypes::int32},
      {dtypes::uint32, dtypes::int32, dtypes::int64},
      {dtypes::uint8, dtypes::uint32, dtypes::uint32},
      {dtypes::int8, dtypes::int64, dtypes::int64},
      {dtypes::uint8, dtypes::int32, dtypes::int32},
      {dtypes::int64, dtypes::float16, dtypes::float16},
      {dtypes::int32, dtypes::bfloat16, dtypes::bfloat16},
      {dtypes::uint64, dtypes::float16, dtypes::float16},
      {dtypes::float16, dtypes::bfloat16, dtypes::float32},
      {dtypes::float16, dtypes::float32, dtypes::float32},
      {dtypes::float32, dtypes::float64, dtypes::float64},
      {dtypes::int8, dtypes::float64, dtypes::float64},
      // int64 and uint64 share no integer parent; like tinygrad they meet at float16.
      {dtypes::int64, dtypes::uint64, dtypes::float16},
      {dtypes::int8, dtypes::uint64, dtypes::float16},
  };
  for (const Case& c : cases) EXPECT_EQ(promote(c.a, c.b), c.want) << name(c.a) << " + " << name(c.b);
}

// ---- integer ranges and wrapping ----

TEST(DTypeInt, MinAndMaxOfEveryIntegerDtype) {
  EXPECT_EQ(int_dtype_min(dtypes::boolean), 0);
  EXPECT_EQ(int_dtype_max(dtypes::boolean), 1);
  EXPECT_EQ(int_dtype_min(dtypes::int8), -128);
  EXPECT_EQ(int_dtype_max(dtypes::int8), 127);
  EXPECT_EQ(int_dtype_min(dtypes::uint8), 0);
  EXPECT_EQ(int_dtype_max(dtypes::uint8), 255);
  EXPECT_EQ(int_dtype_min(dtypes::int16), -32768);
  EXPECT_EQ(int_dtype_max(dtypes::int16), 32767);
  EXPECT_EQ(int_dtype_max(dtypes::uint16), 65535);
  EXPECT_EQ(int_dtype_min(dtypes::int32), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(int_dtype_max(dtypes::int32), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(int_dtype_max(dtypes::uint32), int64_t{4294967295});
  EXPECT_EQ(int_dtype_min(dtypes::int64), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(int_dtype_max(dtypes::int64), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(int_dtype_min(dtypes::uint64), 0);
  EXPECT_EQ(int_dtype_max(dtypes::uint64), std::numeric_limits<int64_t>::max());  // saturates (documented)
}

TEST(DTypeInt, WrapIsTwosComplementModuloTheWidth) {
  EXPECT_EQ(wrap_to_int_dtype(127, dtypes::int8), 127);
  EXPECT_EQ(wrap_to_int_dtype(128, dtypes::int8), -128);
  EXPECT_EQ(wrap_to_int_dtype(255, dtypes::int8), -1);
  EXPECT_EQ(wrap_to_int_dtype(-129, dtypes::int8), 127);
  EXPECT_EQ(wrap_to_int_dtype(256, dtypes::uint8), 0);
  EXPECT_EQ(wrap_to_int_dtype(-1, dtypes::uint8), 255);
  EXPECT_EQ(wrap_to_int_dtype(70000, dtypes::int16), 70000 - 65536);
  EXPECT_EQ(wrap_to_int_dtype(-1, dtypes::uint16), 65535);
  EXPECT_EQ(wrap_to_int_dtype(int64_t{1} << 31, dtypes::int32), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(wrap_to_int_dtype(-1, dtypes::uint32), int64_t{4294967295});
  EXPECT_EQ(wrap_to_int_dtype(int64_t{1} << 32, dtypes::uint32), 0);
}

TEST(DTypeInt, WrapKeepsSixtyFourBitValuesAsTheirBitPattern) {
  EXPECT_EQ(wrap_to_int_dtype(-5, dtypes::int64), -5);
  EXPECT_EQ(wrap_to_int_dtype(-1, dtypes::uint64), -1);  // uint64 max as its bit pattern
}

TEST(DTypeInt, WrapToBoolIsNonzero) {
  EXPECT_EQ(wrap_to_int_dtype(0, dtypes::boolean), 0);
  EXPECT_EQ(wrap_to_int_dtype(256, dtypes::boolean), 1);
  EXPECT_EQ(wrap_to_int_dtype(-1, dtypes::boolean), 1);
}

// ---- round_to_float_dtype ----

TEST(DTypeRound, RoundsToEachFloatDtype) {
  EXPECT_EQ(round_to_float_dtype(0.1, dtypes::float64), 0.1);
  EXPECT_EQ(round_to_float_dtype(0.1, dtypes::float32), static_cast<double>(0.1f));
  EXPECT_EQ(round_to_float_dtype(1.0 / 3.0, dtypes::bfloat16), 0.333984375);    // 0x3eab
  EXPECT_EQ(round_to_float_dtype(1.0 / 3.0, dtypes::float16), 0.333251953125);  // 0x3555
  EXPECT_EQ(round_to_float_dtype(70000.0, dtypes::float16), std::numeric_limits<double>::infinity());
}

// A double just above a 16-bit halfway point must round up, though the nearest float is the
// halfway point itself (rounding through float would round twice and land on the even side).
TEST(DTypeRound, DoubleToSixteenBitFloatRoundsOnceNotTwice) {
  double just_above_f16_half = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(round_to_float_dtype(just_above_f16_half, dtypes::float16), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(round_to_float_dtype(-just_above_f16_half, dtypes::float16), -(1.0 + std::ldexp(1.0, -10)));
  double just_above_bf16_half = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(round_to_float_dtype(just_above_bf16_half, dtypes::bfloat16), 1.0 + std::ldexp(1.0, -7));
  double just_below_bf16_half = 1.0 + std::ldexp(1.0, -8) - std::ldexp(1.0, -40);
  EXPECT_EQ(round_to_float_dtype(just_below_bf16_half, dtypes::bfloat16), 1.0);
}

// ---- bfloat16 ----

TEST(BFloat16, DecodesKnownBitPatterns) {
  EXPECT_EQ(bf16_bits_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bf16_bits_to_float(0xc000), -2.0f);
  EXPECT_EQ(bf16_bits_to_float(0x7f7f), float_of(0x7f7f0000));  // largest finite, ~3.39e38
  EXPECT_EQ(bf16_bits_to_float(0x7f80), kInf);
  EXPECT_EQ(bf16_bits_to_float(0x0001), float_of(0x00010000));  // a subnormal
  EXPECT_TRUE(std::signbit(bf16_bits_to_float(0x8000)));
}

TEST(BFloat16, EveryBitPatternRoundTripsThroughFloat) {
  for (uint32_t b = 0; b <= 0xffff; b++) {
    float f = bf16_bits_to_float(static_cast<uint16_t>(b));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(f)))) << std::hex << b;
      continue;
    }
    ASSERT_EQ(float_to_bf16_bits(f), b) << std::hex << b;
  }
}

// The float halfway between two neighbouring bfloat16 values rounds to the one with an even last
// bit; one float ulp either side of it rounds to the nearer one.
TEST(BFloat16, HalfwayCasesRoundToEven) {
  for (uint32_t sign : {0u, 0x8000u}) {
    for (uint32_t m = 0; m < 0x7f80; m++) {  // every finite magnitude, its upper neighbour may be inf
      uint32_t lo = sign | m, hi = lo + 1;
      uint32_t half = (lo << 16) | 0x8000u;
      uint32_t even = (lo & 1) ? hi : lo;
      ASSERT_EQ(float_to_bf16_bits(float_of(half)), even) << std::hex << lo;
      ASSERT_EQ(float_to_bf16_bits(float_of(half - 1)), lo) << std::hex << lo;
      ASSERT_EQ(float_to_bf16_bits(float_of(half + 1)), hi) << std::hex << lo;
    }
  }
}

TEST(BFloat16, NaNStaysNaN) {
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(kNaN))));
  // A NaN whose payload sits only in the low 16 bits would truncate to infinity; it must not.
  float low_payload_nan = float_of(0x7f800001);
  ASSERT_TRUE(std::isnan(low_payload_nan));
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(low_payload_nan))));
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(float_of(0xff800001)))));
}

TEST(BFloat16, OverflowRoundsToInfinity) {
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(float_to_bf16_bits(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(float_to_bf16_bits(kInf), 0x7f80);
  EXPECT_EQ(float_to_bf16_bits(-kInf), 0xff80);
  EXPECT_EQ(float_to_bf16_bits(float_of(0x7f7f7fff)), 0x7f7f);  // just below the halfway to inf
}

TEST(BFloat16, KeepsTheSignOfZero) {
  EXPECT_EQ(float_to_bf16_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_bf16_bits(-0.0f), 0x8000);
}

// ---- float16 ----

TEST(Float16, DecodesKnownBitPatterns) {
  EXPECT_EQ(f16_bits_to_float(0x3c00), 1.0f);
  EXPECT_EQ(f16_bits_to_float(0xc000), -2.0f);
  EXPECT_EQ(f16_bits_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(f16_bits_to_float(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_EQ(f16_bits_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(f16_bits_to_float(0x03ff), 1023 * std::ldexp(1.0f, -24));
  EXPECT_EQ(f16_bits_to_float(0x7c00), kInf);
  EXPECT_EQ(f16_bits_to_float(0xfc00), -kInf);
  EXPECT_TRUE(std::isnan(f16_bits_to_float(0x7e00)));
  EXPECT_TRUE(std::isnan(f16_bits_to_float(0x7c01)));
  EXPECT_TRUE(std::signbit(f16_bits_to_float(0x8000)));
}

TEST(Float16, EveryBitPatternRoundTripsThroughFloat) {
  for (uint32_t h = 0; h <= 0xffff; h++) {
    float f = f16_bits_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_bits_to_float(float_to_f16_bits(f)))) << std::hex << h;
      continue;
    }
    ASSERT_EQ(float_to_f16_bits(f), h) << std::hex << h;
  }
}

// Between every pair of neighbouring half values (normal and subnormal, both signs) the exact
// midpoint, which a float holds exactly, rounds to the even one; one float ulp off it rounds to the
// nearer one. The midpoint above 65504 is 65520, which rounds to infinity.
TEST(Float16, HalfwayCasesRoundToEven) {
  for (uint32_t sign : {0u, 0x8000u}) {
    for (uint32_t m = 0; m < 0x7c00; m++) {
      uint16_t lo = static_cast<uint16_t>(sign | m), hi = static_cast<uint16_t>(lo + 1);
      float a = f16_bits_to_float(lo), b = f16_bits_to_float(hi);
      float mid = m == 0x7bff ? (sign ? -65520.0f : 65520.0f) : (a + b) / 2;
      uint16_t even = (lo & 1) ? hi : lo;
      ASSERT_EQ(float_to_f16_bits(mid), even) << std::hex << lo;
      ASSERT_EQ(float_to_f16_bits(std::nextafter(mid, a)), lo) << std::hex << lo;
      ASSERT_EQ(float_to_f16_bits(std::nextafter(mid, b)), hi) << std::hex << lo;
    }
  }
}

TEST(Float16, LargestFiniteIs65504And65520RoundsToInfinity) {
  EXPECT_EQ(float_to_f16_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_f16_bits(65519.996f), 0x7bff);
  EXPECT_EQ(float_to_f16_bits(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_f16_bits(-65520.0f), 0xfc00);
  EXPECT_EQ(float_to_f16_bits(1e10f), 0x7c00);
  EXPECT_EQ(float_to_f16_bits(kInf), 0x7c00);
  EXPECT_EQ(float_to_f16_bits(-kInf), 0xfc00);
}

TEST(Float16, SubnormalsRoundToMultiplesOfTwoToTheMinus24) {
  float unit = std::ldexp(1.0f, -24);
  EXPECT_EQ(float_to_f16_bits(unit), 0x0001);
  EXPECT_EQ(float_to_f16_bits(-unit), 0x8001);
  EXPECT_EQ(float_to_f16_bits(unit / 2), 0x0000);            // tie: to even (zero)
  EXPECT_EQ(float_to_f16_bits(unit / 2 * 1.0001f), 0x0001);  // just above the tie
  EXPECT_EQ(float_to_f16_bits(unit * 1.5f), 0x0002);         // tie: to even (2)
  EXPECT_EQ(float_to_f16_bits(unit * 2.5f), 0x0002);         // tie: to even (2)
  EXPECT_EQ(float_to_f16_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(float_to_f16_bits(-std::numeric_limits<float>::denorm_min()), 0x8000);
  EXPECT_EQ(float_to_f16_bits(std::nextafter(std::ldexp(1.0f, -14), 0.0f)), 0x0400);  // rounds up to normal
}

TEST(Float16, NaNStaysNaNAndZeroKeepsItsSign) {
  EXPECT_TRUE(std::isnan(f16_bits_to_float(float_to_f16_bits(kNaN))));
  EXPECT_TRUE(std::isnan(f16_bits_to_float(float_to_f16_bits(float_of(0x7f800001)))));
  EXPECT_EQ(float_to_f16_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_f16_bits(-0.0f), 0x8000);
}

#if defined(__FLT16_MAX__)
// The compiler's own float -> _Float16 conversion (IEEE round to nearest even) is the reference.
TEST(Float16, MatchesTheCompilersFloat16OnRandomFloats) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<uint32_t> any_bits;
  std::uniform_int_distribution<uint32_t> exp_in_range(100, 145);  // f16's exponents and a margin
  int mismatches = 0;
  for (int i = 0; i < 3'000'000 && mismatches < 10; i++) {
    uint32_t u = any_bits(rng);
    if (i % 2 == 0) u = (u & 0x807fffffu) | (exp_in_range(rng) << 23);
    float f = float_of(u);
    _Float16 ref = static_cast<_Float16>(f);
    uint16_t ref_bits;
    std::memcpy(&ref_bits, &ref, sizeof ref_bits);
    uint16_t got = float_to_f16_bits(f);
    bool ok = std::isnan(f) ? std::isnan(f16_bits_to_float(got)) : got == ref_bits;
    if (!ok) {
      mismatches++;
      ADD_FAILURE() << "float bits 0x" << std::hex << u << ": got 0x" << got << ", _Float16 gives 0x"
                    << ref_bits;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// Doubles go to half directly (one rounding); near-halfway doubles are the cases that rounding
// through float would get wrong.
TEST(Float16, RoundingFromDoubleMatchesTheCompilersFloat16) {
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<uint64_t> mantissa(0, (uint64_t{1} << 52) - 1);
  std::uniform_int_distribution<uint64_t> exponent(1023 - 27, 1023 + 16);
  std::uniform_int_distribution<int> half_bits(0, 0x7bfe), tiny_exp(12, 45), coin(0, 2);
  int mismatches = 0;
  for (int i = 0; i < 1'000'000 && mismatches < 10; i++) {
    double d;
    if (i % 2 == 0) {
      d = std::bit_cast<double>((exponent(rng) << 52) | mantissa(rng));
    } else {  // the midpoint of two neighbouring halves, or just off it
      uint16_t h = static_cast<uint16_t>(half_bits(rng));
      double lo = f16_bits_to_float(h), hi = f16_bits_to_float(static_cast<uint16_t>(h + 1));
      double mid = (lo + hi) / 2, off = std::ldexp(hi - lo, -tiny_exp(rng));
      int c = coin(rng);
      d = c == 0 ? mid : c == 1 ? mid + off : mid - off;
    }
    if (i % 4 == 1) d = -d;
    double got = round_to_float_dtype(d, dtypes::float16);
    double want = static_cast<double>(static_cast<_Float16>(d));
    if (std::bit_cast<uint64_t>(got) != std::bit_cast<uint64_t>(want)) {
      mismatches++;
      ADD_FAILURE() << std::hexfloat << d << ": got " << got << ", _Float16 gives " << want;
    }
  }
  EXPECT_EQ(mismatches, 0);
}
#endif

}  // namespace
}  // namespace lg
