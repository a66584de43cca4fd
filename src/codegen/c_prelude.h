#pragma once
// The C helpers every rendered CPU kernel starts with (then codegen/scalar_expr.h's kScalarPrelude). They mirror ir/scalar.cpp and ir/dtype.cpp
// exactly (16-bit float rounding, saturating float->int casts, NaN-propagating max, division by
// zero giving 0), so compiled kernels compute what the interpreter computes.

namespace lg {

inline constexpr const char* kCPrelude = R"C(#include <stdint.h>
#include <string.h>
#include <math.h>
typedef _Bool bool_t;
#define LG_FN static inline
static inline float lg_bits_f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t lg_f_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline double lg_bits_d(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static inline uint64_t lg_d_bits(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static inline float lg_bf16_to_f(uint16_t b) { return lg_bits_f((uint32_t)b << 16); }
static inline uint16_t lg_f_to_bf16(float f) {
  uint32_t u = lg_f_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static inline float lg_f16_to_f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0) { float v = (float)man * (1.0f / 16777216.0f); return sign ? -v : v; }
  if (exp == 31) return lg_bits_f(sign | 0x7f800000u | (man << 13));
  return lg_bits_f(sign | ((exp + 112u) << 23) | (man << 13));
}
static inline uint16_t lg_f_to_f16(float f) {
  uint32_t u = lg_f_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;
  if (a >= 0x477ff000u) return sign | 0x7c00u;
  if (a < 0x38800000u) return sign | (uint16_t)nearbyintf(lg_bits_f(a) * 16777216.0f);
  return sign | (uint16_t)((a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u) >> 13);
}
static inline float lg_round_bf16(float x) { return lg_bf16_to_f(lg_f_to_bf16(x)); }
static inline float lg_round_f16(float x) { return lg_f16_to_f(lg_f_to_f16(x)); }
/* double -> float rounding to odd, so a second rounding to 16 bits is correct */
static inline float lg_d_to_f_odd(double x) {
  float f = (float)x;
  if ((double)f == x || !isfinite(f) || (lg_f_bits(f) & 1u)) return f;
  return nextafterf(f, x > f ? INFINITY : -INFINITY);
}
static inline float lg_maxf(float a, float b) { return (a != a || b != b) ? __builtin_nanf("") : (a < b ? b : a); }
static inline double lg_maxd(double a, double b) { return (a != a || b != b) ? __builtin_nan("") : (a < b ? b : a); }
/* Atomic adds (Opt ATOMIC, codegen/atomic_scatter.h): threads of one kernel may add into the same
   element. Floats by compare-and-swap of their bits (relaxed: the kernel's end orders them). */
static inline void lg_atomic_add_f32(float* p, float v) {
  uint32_t* u = (uint32_t*)p;
  uint32_t old = __atomic_load_n(u, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(u, &old, lg_f_bits(lg_bits_f(old) + v), 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
}
static inline void lg_atomic_add_f64(double* p, double v) {
  uint64_t* u = (uint64_t*)p;
  uint64_t old = __atomic_load_n(u, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(u, &old, lg_d_bits(lg_bits_d(old) + v), 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
}
static inline void lg_atomic_add_i32(int32_t* p, int32_t v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
/* 16-lane vectors (codegen/vectorize.h) hold float32 values, also for bfloat16 (as scalars do);
   a vector load or store moves 16 consecutive elements, unaligned. fma is fused (rounded once) as
   fmaf is: one AVX-512 instruction where there is one, else fmaf per lane. */
typedef float lg_f32x16 __attribute__((vector_size(64)));
static inline lg_f32x16 lg_load_f32x16(const float* p) { lg_f32x16 v; memcpy(&v, p, sizeof v); return v; }
static inline void lg_store_f32x16(float* p, lg_f32x16 v) { memcpy(p, &v, sizeof v); }
/* Streaming stores (codegen/streaming_stores.h): a whole 64-byte line written to memory without
   reading it first, when p is 64-byte aligned (else an ordinary store); lg_stream_fence, at the end
   of a kernel that streams, orders them before it returns. */
#if defined(__clang__) && defined(__x86_64__)
static inline void lg_stream_f32x16(float* p, lg_f32x16 v) {
  if (((uintptr_t)p & 63) == 0) __builtin_nontemporal_store(v, (lg_f32x16*)__builtin_assume_aligned(p, 64));
  else memcpy(p, &v, sizeof v);
}
static inline void lg_stream_fence(void) { __builtin_ia32_sfence(); }
#else
static inline void lg_stream_f32x16(float* p, lg_f32x16 v) { memcpy(p, &v, sizeof v); }
static inline void lg_stream_fence(void) {}
#endif
typedef uint16_t lg_u16x16 __attribute__((vector_size(32)));
typedef uint32_t lg_u32x16 __attribute__((vector_size(64)));
static inline lg_f32x16 lg_load_bf16x16(const uint16_t* p) { /* lg_bf16_to_f per lane */
  lg_u16x16 h;
  memcpy(&h, p, sizeof h);
  lg_u32x16 w = __builtin_convertvector(h, lg_u32x16) << 16;
  lg_f32x16 v;
  memcpy(&v, &w, sizeof v);
  return v;
}
/* lg_bf16_to_f(*p) in every lane: the 16 bits broadcast into every half-lane, then shifted into
   the high halves (AVX-512: vpbroadcastw from memory and vpslld). A splat of the scalar conversion
   moves the value through a general register (vpbroadcastd from it), which Zen 5 issues once a
   cycle: a bf16 matmul's broadcast operand ran at 64% of the float32 kernel's FMA rate. */
typedef uint16_t lg_u16x32 __attribute__((vector_size(64)));
static inline lg_f32x16 lg_splat_bf16x16(const uint16_t* p) {
  lg_u16x32 h = (lg_u16x32){0} + *p;
  lg_u32x16 w;
  memcpy(&w, &h, sizeof w);
  w <<= 16;
  lg_f32x16 v;
  memcpy(&v, &w, sizeof v);
  return v;
}
/* lg_f_to_bf16 per lane, without branches (NaN: quiet, sign kept; else round to nearest even), in
   the low 16 bits of each lane */
static inline lg_u32x16 lg_bf16_bits_x16(lg_f32x16 v) {
  lg_u32x16 u;
  memcpy(&u, &v, sizeof u);
  lg_u32x16 nan = (lg_u32x16)((u & 0x7fffffffu) > 0x7f800000u);
  lg_u32x16 rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return (((u >> 16) | 0x0040u) & nan) | (rounded & ~nan);
}
static inline void lg_store_bf16x16(uint16_t* p, lg_f32x16 v) {
  lg_u16x16 h = __builtin_convertvector(lg_bf16_bits_x16(v), lg_u16x16);
  memcpy(p, &h, sizeof h);
}
static inline lg_f32x16 lg_round_bf16x16(lg_f32x16 v) { /* lg_round_bf16 per lane */
  lg_u32x16 w = lg_bf16_bits_x16(v) << 16;
  memcpy(&v, &w, sizeof v);
  return v;
}
typedef int32_t lg_i32x16 __attribute__((vector_size(64)));
static inline lg_f32x16 lg_sel_f32x16(lg_i32x16 m, lg_f32x16 a, lg_f32x16 b) { /* m ? a : b per lane */
  lg_i32x16 ia, ib, r;
  memcpy(&ia, &a, sizeof ia);
  memcpy(&ib, &b, sizeof ib);
  r = (ia & m) | (ib & ~m);
  memcpy(&a, &r, sizeof a);
  return a;
}
/* AVX-512 (16 lanes, all active): fused multiply-add, max and min (x86's: the second operand when
   either is NaN), rounding to the nearest even integer, a * 2^floor(b) in the lanes where x > lo
   (ordered; 0 in the others), and the lanes of v that are NaN over those of r. clang gets its
   builtins (what immintrin.h's intrinsics call; 4: the current rounding, 3: unordered, 30: greater,
   ordered), since parsing immintrin.h is about 0.2 s of a kernel's 0.3 s build. */
#if defined(__AVX512F__) && defined(__clang__)
#define LG_AVX512 1
#define LG_FMA512(a, b, c) __builtin_ia32_vfmaddps512_mask((a), (b), (c), (unsigned short)-1, 4)
#define LG_MAX512(a, b) __builtin_ia32_maxps512((a), (b), 4)
#define LG_MIN512(a, b) __builtin_ia32_minps512((a), (b), 4)
#define LG_ROUND512(a) __builtin_ia32_rndscaleps_mask((a), 8, (a), (unsigned short)-1, 4)
#define LG_SCALEF512_ABOVE(a, b, x, lo) __builtin_ia32_scalefps512_mask((a), (b), (lg_f32x16){0}, __builtin_ia32_cmpps512_mask((x), (lo), 30, (unsigned short)-1, 4), 4)
#define LG_NAN_OVER512(v, r) __builtin_ia32_selectps_512(__builtin_ia32_cmpps512_mask((v), (v), 3, (unsigned short)-1, 4), (v), (r))
#define LG_SQRT512(a) __builtin_ia32_sqrtps512((a), 4)
#elif defined(__AVX512F__)
#include <immintrin.h>
#define LG_AVX512 1
#define LG_FMA512(a, b, c) (lg_f32x16)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c))
#define LG_MAX512(a, b) (lg_f32x16)_mm512_max_ps((__m512)(a), (__m512)(b))
#define LG_MIN512(a, b) (lg_f32x16)_mm512_min_ps((__m512)(a), (__m512)(b))
#define LG_ROUND512(a) (lg_f32x16)_mm512_roundscale_ps((__m512)(a), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define LG_SCALEF512_ABOVE(a, b, x, lo) (lg_f32x16)_mm512_maskz_scalef_ps(_mm512_cmp_ps_mask((__m512)(x), (__m512)(lo), _CMP_GT_OQ), (__m512)(a), (__m512)(b))
#define LG_NAN_OVER512(v, r) (lg_f32x16)_mm512_mask_mov_ps((__m512)(r), _mm512_cmp_ps_mask((__m512)(v), (__m512)(v), _CMP_UNORD_Q), (__m512)(v))
#define LG_SQRT512(a) (lg_f32x16)_mm512_sqrt_ps((__m512)(a))
#endif
#if defined(LG_AVX512)
static inline lg_f32x16 lg_fma_f32x16(lg_f32x16 a, lg_f32x16 b, lg_f32x16 c) { return LG_FMA512(a, b, c); }
#else
static inline lg_f32x16 lg_fma_f32x16(lg_f32x16 a, lg_f32x16 b, lg_f32x16 c) { for (int i = 0; i < 16; i++) c[i] = fmaf(a[i], b[i], c[i]); return c; }
#endif
/* Square roots of 16 lanes, each correctly rounded as sqrtf is (so the same bits as the scalar
   copies); a loop of sqrtf is left scalar by clang, hence the instruction. */
#if defined(LG_AVX512)
static inline lg_f32x16 lg_sqrt_f32x16(lg_f32x16 v) { return LG_SQRT512(v); }
#else
static inline lg_f32x16 lg_sqrt_f32x16(lg_f32x16 v) { for (int i = 0; i < 16; i++) v[i] = sqrtf(v[i]); return v; }
#endif
/* 2^x without libm and without branches, so loops of it vectorize: x = n + f with n = round(x)
   (to nearest even: the 1.5*2^23 trick, exact in IEEE arithmetic) and |f| <= 0.5; 2^f from
   Cephes' exp2f polynomial in Horner form with fused multiply-adds (relative error below 2e-7);
   2^n applied as two power-of-two factors (one rounding, as a single scaling by 2^n: 2^f is in
   [0.7, 1.42], so the first factor never rounds), so overflow gives inf and tiny results
   underflow through the subnormals to 0. NaN stays NaN. The 16-lane version computes the same
   bits per lane (on AVX-512 with roundscale and scalef, which round and scale the same way). There
   the lanes with x <= -150, whose 2^x rounds to 0 (2^-150 is half the least subnormal: a tie, to
   the even 0), are set to 0 without the scaling: a result that underflows costs Intel cores a
   microcode assist of about a hundred cycles, and a causal softmax's masked half (-inf) is all
   such lanes (a row sum of exponentials ran 7x slower for it). */
#define LG_EXP2_POLY(f, FMA, K) \
  FMA(FMA(FMA(FMA(FMA(FMA(K(1.535336188319500e-4f), f, K(1.339887440266574e-3f)), f, K(9.618437357674640e-3f)), f, \
      K(5.550332471162809e-2f)), f, K(2.402264791363012e-1f)), f, K(6.931472028550421e-1f)), f, K(1.0f))
#define LG_SCALAR(c) (c)
static inline float lg_exp2f(float x) {
  float c = x != x ? 0.0f : (x < -151.0f ? -151.0f : (x > 129.0f ? 129.0f : x));
  float n = (c + 12582912.0f) - 12582912.0f;
  float f = c - n;
  int32_t ni = (int32_t)n, h = ni >> 1, l = ni - h;
  float r = LG_EXP2_POLY(f, fmaf, LG_SCALAR) * lg_bits_f((uint32_t)(h + 127) << 23) * lg_bits_f((uint32_t)(l + 127) << 23);
  return x != x ? x : r;
}
#define LG_SPLAT(c) (zero + (c))
#if defined(LG_AVX512)
static inline lg_f32x16 lg_exp2_f32x16(lg_f32x16 x) { /* lg_exp2f per lane */
  const lg_f32x16 zero = {0};
  lg_f32x16 c = LG_MIN512(LG_MAX512(x, zero - 151.0f), zero + 129.0f); /* NaN -> -151 */
  lg_f32x16 n = LG_ROUND512(c);
  lg_f32x16 f = c - n;
  return LG_NAN_OVER512(x, LG_SCALEF512_ABOVE(LG_EXP2_POLY(f, lg_fma_f32x16, LG_SPLAT), n, x, zero - 150.0f));
}
#else
static inline lg_f32x16 lg_exp2_f32x16(lg_f32x16 x) { /* lg_exp2f per lane */
  lg_i32x16 nan = (lg_i32x16)(x != x);
  lg_f32x16 zero = {0}, c = lg_sel_f32x16(nan, zero, x);
  c = lg_sel_f32x16((lg_i32x16)(c < -151.0f), zero - 151.0f, c);
  c = lg_sel_f32x16((lg_i32x16)(c > 129.0f), zero + 129.0f, c);
  lg_f32x16 n = (c + 12582912.0f) - 12582912.0f;
  lg_f32x16 f = c - n;
  lg_i32x16 ni = __builtin_convertvector(n, lg_i32x16), h = ni >> 1, l = ni - h;
  lg_i32x16 eh = (h + 127) << 23, el = (l + 127) << 23;
  lg_f32x16 sh, sl;
  memcpy(&sh, &eh, sizeof sh);
  memcpy(&sl, &el, sizeof sl);
  return lg_sel_f32x16(nan, x, LG_EXP2_POLY(f, lg_fma_f32x16, LG_SPLAT) * sh * sl);
}
#endif
static inline lg_f32x16 lg_max_f32x16(lg_f32x16 a, lg_f32x16 b) { /* lg_maxf per lane: the quiet NaN if either is NaN */
  lg_i32x16 nan = (lg_i32x16)((a != a) | (b != b)), qnan_bits = (lg_i32x16){0} + 0x7fc00000;
  lg_f32x16 qnan;
  memcpy(&qnan, &qnan_bits, sizeof qnan);
  return lg_sel_f32x16(nan, qnan, lg_sel_f32x16((lg_i32x16)(a < b), b, a));
}
)C";

}  // namespace lg
