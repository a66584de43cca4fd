#include "codegen/render_attention.h"

#include "base/error.h"

namespace lg {
namespace {

// LG_ATTN_T: the inputs' element type as the dialect stores it; LG_ATTN_F(x): its value as float.
std::string element_macros(DType in, bool cuda) {
  if (in == dtypes::bfloat16)
    return str("#define LG_ATTN_T ", cuda ? "lg_bf16_t" : "uint16_t", "\n#define LG_ATTN_F(x) lg_bf16_to_f(x)\n",
               cuda ? "#define LG_ATTN_MMA lg_mma_m16n8k16_bf16\n#define LG_ATTN_PACK lg_pack_bf16x2\n" : "");
  if (in == dtypes::float16)
    return str("#define LG_ATTN_T ", cuda ? "lg_f16_t" : "uint16_t", "\n#define LG_ATTN_F(x) lg_f16_to_f(x)\n",
               cuda ? "#define LG_ATTN_MMA lg_mma_m16n8k16_f16\n#define LG_ATTN_PACK lg_pack_f16x2\n" : "");
  LG_CHECK(in == dtypes::float32, "attention kernels of ", name(in));
  return "#define LG_ATTN_T float\n#define LG_ATTN_F(x) (x)\n";
}

// C: one call per block, in the calling thread. Rows of k and v (q and dO for GradKV) are widened
// to float32 once per block into scratch; each row then walks them with plain loops.
constexpr const char* kAttentionC = R"C(
#include <stdlib.h>
#define LG_ATTN_R 64 /* rows per block: AttentionKernel::kRows */
static inline float* lg_attn_widen(const LG_ATTN_T* x, int64_t n) {
  float* f = (float*)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
  for (int64_t i = 0; i < n; i++) f[i] = LG_ATTN_F(x[i]);
  return f;
}
static inline float lg_attn_dot(const float* a, const float* b, int64_t d) {
  float s = 0.0f;
  for (int64_t e = 0; e < d; e++) s += a[e] * b[e];
  return s;
}
/* out (B, H, S, D+1): 64 query rows of head h, batch b */
static inline void lg_attention_fwd(float* restrict out, const LG_ATTN_T* q, const LG_ATTN_T* k, const LG_ATTN_T* v,
                             int64_t blk, int64_t B, int64_t H, int64_t KV, int64_t S, int64_t T, int64_t D, int causal) {
  (void)B;
  const int64_t nrb = (S + LG_ATTN_R - 1) / LG_ATTN_R, rb = blk % nrb, bh = blk / nrb, h = bh % H, b = bh / H;
  const int64_t g = h / (H / KV), s0 = rb * LG_ATTN_R;
  const int64_t tend = causal ? (s0 + LG_ATTN_R < T ? s0 + LG_ATTN_R : T) : T;
  const float scale = 1.0f / sqrtf((float)D);
  float* kf = lg_attn_widen(k + (b * KV + g) * T * D, tend * D);
  float* vf = lg_attn_widen(v + (b * KV + g) * T * D, tend * D);
  float* x = (float*)malloc((size_t)(tend > 0 ? tend : 1) * sizeof(float));
  float* qf = (float*)malloc((size_t)D * sizeof(float));
  for (int64_t s = s0; s < s0 + LG_ATTN_R && s < S; s++) {
    const int64_t row = (b * H + h) * S + s, n = causal ? s + 1 : T;
    for (int64_t e = 0; e < D; e++) qf[e] = LG_ATTN_F(q[row * D + e]);
    float m = -INFINITY, l = 0.0f;
    for (int64_t t = 0; t < n; t++) {
      x[t] = lg_attn_dot(qf, kf + t * D, D) * scale;
      m = x[t] > m ? x[t] : m;
    }
    float* o = out + row * (D + 1);
    for (int64_t e = 0; e < D; e++) o[e] = 0.0f;
    for (int64_t t = 0; t < n; t++) {
      const float p = expf(x[t] - m);
      l += p;
      for (int64_t e = 0; e < D; e++) o[e] += p * vf[t * D + e];
    }
    for (int64_t e = 0; e < D; e++) o[e] /= l;
    o[D] = m + logf(l);
  }
  free(kf), free(vf), free(x), free(qf);
}
/* out (B, H, S, D): dQ of 64 query rows, in passes of 8 */
static inline void lg_attention_dq(float* restrict out, const LG_ATTN_T* q, const LG_ATTN_T* k, const LG_ATTN_T* v,
                            const LG_ATTN_T* dout, const float* stats, int64_t blk, int64_t B, int64_t H, int64_t KV,
                            int64_t S, int64_t T, int64_t D, int causal) {
  (void)B;
  const int64_t nrb = (S + LG_ATTN_R - 1) / LG_ATTN_R, rb = blk % nrb, bh = blk / nrb, h = bh % H, b = bh / H;
  const int64_t g = h / (H / KV), s0 = rb * LG_ATTN_R;
  const int64_t tend = causal ? (s0 + LG_ATTN_R < T ? s0 + LG_ATTN_R : T) : T;
  const float scale = 1.0f / sqrtf((float)D);
  float* kf = lg_attn_widen(k + (b * KV + g) * T * D, tend * D);
  float* vf = lg_attn_widen(v + (b * KV + g) * T * D, tend * D);
  float* qf = (float*)malloc((size_t)D * 2 * sizeof(float));
  float* df = qf + D;
  for (int64_t s = s0; s < s0 + LG_ATTN_R && s < S; s++) {
    const int64_t row = (b * H + h) * S + s, n = causal ? s + 1 : T;
    const float lse = stats[row * 2], delta = stats[row * 2 + 1];
    for (int64_t e = 0; e < D; e++) qf[e] = LG_ATTN_F(q[row * D + e]), df[e] = LG_ATTN_F(dout[row * D + e]);
    float* o = out + row * D;
    for (int64_t e = 0; e < D; e++) o[e] = 0.0f;
    for (int64_t t = 0; t < n; t++) {
      const float p = expf(lg_attn_dot(qf, kf + t * D, D) * scale - lse);
      const float ds = p * (lg_attn_dot(df, vf + t * D, D) - delta);
      for (int64_t e = 0; e < D; e++) o[e] += ds * kf[t * D + e];
    }
    for (int64_t e = 0; e < D; e++) o[e] *= scale;
  }
  free(kf), free(vf), free(qf);
}
/* out (B, KV, T, 2D): dK then dV of 64 key rows of kv head g, over its query heads */
static inline void lg_attention_dkv(float* restrict out, const LG_ATTN_T* q, const LG_ATTN_T* k, const LG_ATTN_T* v,
                             const LG_ATTN_T* dout, const float* stats, int64_t blk, int64_t B, int64_t H, int64_t KV,
                             int64_t S, int64_t T, int64_t D, int causal) {
  (void)B;
  const int64_t nrb = (T + LG_ATTN_R - 1) / LG_ATTN_R, rb = blk % nrb, bg = blk / nrb, g = bg % KV, b = bg / KV;
  const int64_t rep = H / KV, t0 = rb * LG_ATTN_R, sbeg = causal ? t0 : 0;
  const float scale = 1.0f / sqrtf((float)D);
  float* kv = (float*)malloc((size_t)D * 2 * sizeof(float));
  for (int64_t t = t0; t < t0 + LG_ATTN_R && t < T; t++) {
    float* o = out + ((b * KV + g) * T + t) * 2 * D;
    for (int64_t e = 0; e < 2 * D; e++) o[e] = 0.0f;
  }
  for (int64_t j = 0; j < rep; j++) {
    const int64_t h = g * rep + j, base = (b * H + h) * S;
    float* qf = lg_attn_widen(q + (base + sbeg) * D, (S - sbeg) * D);
    float* df = lg_attn_widen(dout + (base + sbeg) * D, (S - sbeg) * D);
    for (int64_t t = t0; t < t0 + LG_ATTN_R && t < T; t++) {
      float* kt = kv;
      float* vt = kv + D;
      for (int64_t e = 0; e < D; e++) {
        kt[e] = LG_ATTN_F(k[((b * KV + g) * T + t) * D + e]);
        vt[e] = LG_ATTN_F(v[((b * KV + g) * T + t) * D + e]);
      }
      float* o = out + ((b * KV + g) * T + t) * 2 * D;
      for (int64_t s = causal ? t : 0; s < S; s++) {
        const float* qs = qf + (s - sbeg) * D;
        const float* ds_row = df + (s - sbeg) * D;
        const float lse = stats[(base + s) * 2], delta = stats[(base + s) * 2 + 1];
        const float p = expf(lg_attn_dot(qs, kt, D) * scale - lse);
        const float ds = p * (lg_attn_dot(ds_row, vt, D) - delta);
        for (int64_t e = 0; e < D; e++) o[e] += ds * qs[e], o[D + e] += p * ds_row[e];
      }
    }
    free(qf), free(df);
  }
  for (int64_t t = t0; t < t0 + LG_ATTN_R && t < T; t++) {
    float* o = out + ((b * KV + g) * T + t) * 2 * D;
    for (int64_t e = 0; e < D; e++) o[e] *= scale;
  }
  free(kv);
}
)C";

// CUDA: one block of kAttentionThreads (128) threads, 4 warps, per call; LG_ATTN_BT keys (queries
// for dkv) per shared tile, lane j of a warp on key j of the tile. Shared rows have a stride of
// D + 1 floats where a warp reads 32 rows at one column (distinct banks).
constexpr const char* kAttentionCuda = R"CU(
#define LG_ATTN_R 8 /* rows per pass of a CUDA-core kernel */
#define LG_ATTN_ROWS 64 /* rows per block: AttentionKernel::kRows */
#define LG_ATTN_BT 32
#define LG_ATTN_TH 128
#define LG_ATTN_WARPS (LG_ATTN_TH / 32)
#define LG_ATTN_NEG_INF __int_as_float(0xff800000u)
__device__ __forceinline__ float lg_attn_wmax(float x) {
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}
__device__ __forceinline__ float lg_attn_wsum(float x) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}
/* out (B, H, S, D+1): 64 query rows of head h, batch b, in passes of 8; online softmax over key tiles */
template <int D>
__device__ void lg_attention_fwd(float* __restrict__ out, const LG_ATTN_T* __restrict__ q, const LG_ATTN_T* __restrict__ k,
                                 const LG_ATTN_T* __restrict__ v, int64_t blk, int H, int KV, int S, int T, bool causal) {
  __shared__ float ks[LG_ATTN_BT][D + 1], vs[LG_ATTN_BT][D + 1], qs[LG_ATTN_R][D], ps[LG_ATTN_R][LG_ATTN_BT];
  __shared__ float ms[LG_ATTN_R], ls[LG_ATTN_R], cs[LG_ATTN_R];
  constexpr int kOut = (LG_ATTN_R * D + LG_ATTN_TH - 1) / LG_ATTN_TH;  /* output elements per thread */
  const int tid = (int)threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int64_t nrb = (S + LG_ATTN_ROWS - 1) / LG_ATTN_ROWS, rb = blk % nrb, bh = blk / nrb, b = bh / H;
  const int h = (int)(bh % H), g = h / (H / KV);
  for (int s0 = (int)rb * LG_ATTN_ROWS; s0 < S && s0 < (int)rb * LG_ATTN_ROWS + LG_ATTN_ROWS; s0 += LG_ATTN_R) {
    __syncthreads(); /* the previous pass's shared rows are used up */
    const LG_ATTN_T* qh = q + (b * H + h) * (int64_t)S * D;
    const LG_ATTN_T* kg = k + (b * KV + g) * (int64_t)T * D;
    const LG_ATTN_T* vg = v + (b * KV + g) * (int64_t)T * D;
    const float scale = 1.0f / sqrtf((float)D);
    for (int i = tid; i < LG_ATTN_R * D; i += LG_ATTN_TH) {
      const int r = i / D, e = i % D;
      qs[r][e] = s0 + r < S ? LG_ATTN_F(qh[(int64_t)(s0 + r) * D + e]) : 0.0f;
    }
    if (tid < LG_ATTN_R) ms[tid] = LG_ATTN_NEG_INF, ls[tid] = 0.0f;
    float o[kOut];
    for (int j = 0; j < kOut; j++) o[j] = 0.0f;
    const int tend = causal ? (s0 + LG_ATTN_R < T ? s0 + LG_ATTN_R : T) : T;
    for (int t0 = 0; t0 < tend; t0 += LG_ATTN_BT) {
      __syncthreads(); /* the previous tile is used up */
      for (int i = tid; i < LG_ATTN_BT * D; i += LG_ATTN_TH) {
        const int j = i / D, e = i % D, t = t0 + j;
        ks[j][e] = t < T ? LG_ATTN_F(kg[(int64_t)t * D + e]) : 0.0f;
        vs[j][e] = t < T ? LG_ATTN_F(vg[(int64_t)t * D + e]) : 0.0f;
      }
      __syncthreads();
      for (int r = warp; r < LG_ATTN_R; r += LG_ATTN_WARPS) { /* scores of row r, lane = key */
        const int s = s0 + r, t = t0 + lane;
        const bool ok = s < S && t < T && !(causal && t > s);
        float x = 0.0f;
        for (int e = 0; e < D; e++) x += qs[r][e] * ks[lane][e];
        x = ok ? x * scale : LG_ATTN_NEG_INF;
        const float m_old = ms[r], m_new = fmaxf(m_old, lg_attn_wmax(x));
        const float p = ok ? expf(x - m_new) : 0.0f;
        const float sum = lg_attn_wsum(p);
        ps[r][lane] = p;
        if (lane == 0) {
          const float corr = m_new == LG_ATTN_NEG_INF ? 1.0f : expf(m_old - m_new);
          ms[r] = m_new, ls[r] = ls[r] * corr + sum, cs[r] = corr;
        }
      }
      __syncthreads();
      for (int j = 0; j < kOut; j++) { /* o = o * corr + p . v over the tile */
        const int i = tid + j * LG_ATTN_TH, r = i / D, e = i % D;
        if (i >= LG_ATTN_R * D) break;
        float acc = o[j] * cs[r];
        for (int u = 0; u < LG_ATTN_BT; u++) acc += ps[r][u] * vs[u][e];
        o[j] = acc;
      }
    }
    __syncthreads();
    float* oh = out + (b * H + h) * (int64_t)S * (D + 1);
    for (int j = 0; j < kOut; j++) {
      const int i = tid + j * LG_ATTN_TH, r = i / D, e = i % D;
      if (i < LG_ATTN_R * D && s0 + r < S) oh[(int64_t)(s0 + r) * (D + 1) + e] = o[j] / ls[r];
    }
    if (tid < LG_ATTN_R && s0 + tid < S) oh[(int64_t)(s0 + tid) * (D + 1) + D] = ms[tid] + logf(ls[tid]);
  } /* passes */
}
/* out (B, H, S, D): dQ of 64 query rows, in passes of 8 */
template <int D>
__device__ void lg_attention_dq(float* __restrict__ out, const LG_ATTN_T* __restrict__ q, const LG_ATTN_T* __restrict__ k,
                                const LG_ATTN_T* __restrict__ v, const LG_ATTN_T* __restrict__ dout,
                                const float* __restrict__ stats, int64_t blk, int H, int KV, int S, int T, bool causal) {
  __shared__ float ks[LG_ATTN_BT][D + 1], vs[LG_ATTN_BT][D + 1], qs[LG_ATTN_R][D], dos[LG_ATTN_R][D];
  __shared__ float dss[LG_ATTN_R][LG_ATTN_BT];
  constexpr int kOut = (LG_ATTN_R * D + LG_ATTN_TH - 1) / LG_ATTN_TH;
  const int tid = (int)threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int64_t nrb = (S + LG_ATTN_ROWS - 1) / LG_ATTN_ROWS, rb = blk % nrb, bh = blk / nrb, b = bh / H;
  const int h = (int)(bh % H), g = h / (H / KV);
  for (int s0 = (int)rb * LG_ATTN_ROWS; s0 < S && s0 < (int)rb * LG_ATTN_ROWS + LG_ATTN_ROWS; s0 += LG_ATTN_R) {
    __syncthreads(); /* the previous pass's shared rows are used up */
    const int64_t qrow = (b * H + h) * (int64_t)S;
    const LG_ATTN_T* kg = k + (b * KV + g) * (int64_t)T * D;
    const LG_ATTN_T* vg = v + (b * KV + g) * (int64_t)T * D;
    const float scale = 1.0f / sqrtf((float)D);
    for (int i = tid; i < LG_ATTN_R * D; i += LG_ATTN_TH) {
      const int r = i / D, e = i % D;
      const bool in = s0 + r < S;
      qs[r][e] = in ? LG_ATTN_F(q[(qrow + s0 + r) * D + e]) : 0.0f;
      dos[r][e] = in ? LG_ATTN_F(dout[(qrow + s0 + r) * D + e]) : 0.0f;
    }
    float o[kOut];
    for (int j = 0; j < kOut; j++) o[j] = 0.0f;
    const int tend = causal ? (s0 + LG_ATTN_R < T ? s0 + LG_ATTN_R : T) : T;
    for (int t0 = 0; t0 < tend; t0 += LG_ATTN_BT) {
      __syncthreads();
      for (int i = tid; i < LG_ATTN_BT * D; i += LG_ATTN_TH) {
        const int j = i / D, e = i % D, t = t0 + j;
        ks[j][e] = t < T ? LG_ATTN_F(kg[(int64_t)t * D + e]) : 0.0f;
        vs[j][e] = t < T ? LG_ATTN_F(vg[(int64_t)t * D + e]) : 0.0f;
      }
      __syncthreads();
      for (int r = warp; r < LG_ATTN_R; r += LG_ATTN_WARPS) { /* dS of row r, lane = key */
        const int s = s0 + r, t = t0 + lane;
        const bool ok = s < S && t < T && !(causal && t > s);
        float x = 0.0f, dp = 0.0f;
        for (int e = 0; e < D; e++) x += qs[r][e] * ks[lane][e], dp += dos[r][e] * vs[lane][e];
        const float lse = ok ? stats[(qrow + s) * 2] : 0.0f, delta = ok ? stats[(qrow + s) * 2 + 1] : 0.0f;
        const float p = ok ? expf(x * scale - lse) : 0.0f;
        dss[r][lane] = p * (dp - delta);
      }
      __syncthreads();
      for (int j = 0; j < kOut; j++) {
        const int i = tid + j * LG_ATTN_TH, r = i / D, e = i % D;
        if (i >= LG_ATTN_R * D) break;
        float acc = o[j];
        for (int u = 0; u < LG_ATTN_BT; u++) acc += dss[r][u] * ks[u][e];
        o[j] = acc;
      }
    }
    for (int j = 0; j < kOut; j++) {
      const int i = tid + j * LG_ATTN_TH, r = i / D, e = i % D;
      if (i < LG_ATTN_R * D && s0 + r < S) out[(qrow + s0 + r) * D + e] = o[j] * scale;
    }
  } /* passes */
}
/* out (B, KV, T, 2D): dK then dV of 64 key rows of kv head g, in passes of 8; query tiles of each query head of g */
template <int D>
__device__ void lg_attention_dkv(float* __restrict__ out, const LG_ATTN_T* __restrict__ q, const LG_ATTN_T* __restrict__ k,
                                 const LG_ATTN_T* __restrict__ v, const LG_ATTN_T* __restrict__ dout,
                                 const float* __restrict__ stats, int64_t blk, int H, int KV, int S, int T, bool causal) {
  __shared__ float qs[LG_ATTN_BT][D + 1], dos[LG_ATTN_BT][D + 1], ks[LG_ATTN_R][D], vs[LG_ATTN_R][D];
  __shared__ float ps[LG_ATTN_R][LG_ATTN_BT], dss[LG_ATTN_R][LG_ATTN_BT], lses[LG_ATTN_BT], deltas[LG_ATTN_BT];
  constexpr int kOut = (LG_ATTN_R * D + LG_ATTN_TH - 1) / LG_ATTN_TH;
  const int tid = (int)threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int64_t nrb = (T + LG_ATTN_ROWS - 1) / LG_ATTN_ROWS, rb = blk % nrb, bg = blk / nrb, b = bg / KV;
  const int g = (int)(bg % KV), rep = H / KV;
  for (int t0 = (int)rb * LG_ATTN_ROWS; t0 < T && t0 < (int)rb * LG_ATTN_ROWS + LG_ATTN_ROWS; t0 += LG_ATTN_R) {
    __syncthreads(); /* the previous pass's shared rows are used up */
    const int64_t krow = (b * KV + g) * (int64_t)T;
    const float scale = 1.0f / sqrtf((float)D);
    for (int i = tid; i < LG_ATTN_R * D; i += LG_ATTN_TH) {
      const int r = i / D, e = i % D;
      const bool in = t0 + r < T;
      ks[r][e] = in ? LG_ATTN_F(k[(krow + t0 + r) * D + e]) : 0.0f;
      vs[r][e] = in ? LG_ATTN_F(v[(krow + t0 + r) * D + e]) : 0.0f;
    }
    float dk[kOut], dv[kOut];
    for (int j = 0; j < kOut; j++) dk[j] = 0.0f, dv[j] = 0.0f;
    const int sbeg = causal ? t0 / LG_ATTN_BT * LG_ATTN_BT : 0;
    for (int hj = 0; hj < rep; hj++) {
      const int64_t qrow = (b * H + g * rep + hj) * (int64_t)S;
      for (int q0 = sbeg; q0 < S; q0 += LG_ATTN_BT) {
        __syncthreads();
        for (int i = tid; i < LG_ATTN_BT * D; i += LG_ATTN_TH) {
          const int j = i / D, e = i % D, s = q0 + j;
          qs[j][e] = s < S ? LG_ATTN_F(q[(qrow + s) * D + e]) : 0.0f;
          dos[j][e] = s < S ? LG_ATTN_F(dout[(qrow + s) * D + e]) : 0.0f;
        }
        if (tid < LG_ATTN_BT) {
          const int s = q0 + tid;
          lses[tid] = s < S ? stats[(qrow + s) * 2] : 0.0f;
          deltas[tid] = s < S ? stats[(qrow + s) * 2 + 1] : 0.0f;
        }
        __syncthreads();
        for (int r = warp; r < LG_ATTN_R; r += LG_ATTN_WARPS) { /* P and dS of key row r, lane = query */
          const int t = t0 + r, s = q0 + lane;
          const bool ok = s < S && t < T && !(causal && t > s);
          float x = 0.0f, dp = 0.0f;
          for (int e = 0; e < D; e++) x += qs[lane][e] * ks[r][e], dp += dos[lane][e] * vs[r][e];
          const float p = ok ? expf(x * scale - lses[lane]) : 0.0f;
          ps[r][lane] = p;
          dss[r][lane] = p * (dp - deltas[lane]);
        }
        __syncthreads();
        for (int j = 0; j < kOut; j++) {
          const int i = tid + j * LG_ATTN_TH, r = i / D, e = i % D;
          if (i >= LG_ATTN_R * D) break;
          float ak = dk[j], av = dv[j];
          for (int u = 0; u < LG_ATTN_BT; u++) ak += dss[r][u] * qs[u][e], av += ps[r][u] * dos[u][e];
          dk[j] = ak, dv[j] = av;
        }
      }
    }
    for (int j = 0; j < kOut; j++) {
      const int i = tid + j * LG_ATTN_TH, r = i / D, e = i % D;
      if (i < LG_ATTN_R * D && t0 + r < T) {
        out[(krow + t0 + r) * 2 * D + e] = dk[j] * scale;
        out[(krow + t0 + r) * 2 * D + D + e] = dv[j];
      }
    }
  } /* passes */
}
)CU";

// CUDA, tensor cores (16-bit inputs, head dims a multiple of 16): the forward pass as in
// FlashAttention-2. A block of 4 warps takes 64 query rows, 16 per warp, whose q fragments stay in
// registers; per tile of 64 keys, k and v go to shared memory (16-byte chunks XOR-swizzled by row,
// so the 8 rows an ldmatrix matrix reads hit 8 bank groups); S = q k^T by mma.sync (k fragments by
// ldmatrix), the online softmax on S's accumulators (each row's 16 values per lane, then the 4
// lanes of a quad), P rounded to the input dtype as the A operand of O += P v (v fragments by
// ldmatrix.trans). Scores are in units of log2 (scale * log2 e folded in, exp2).
constexpr const char* kAttentionCudaTc = R"CU(
template <int D>
__device__ void lg_attention_fwd_tc(float* __restrict__ out, const LG_ATTN_T* __restrict__ q, const LG_ATTN_T* __restrict__ k,
                                    const LG_ATTN_T* __restrict__ v, int64_t blk, int H, int KV, int S, int T, bool causal) {
  constexpr int BM = 64, BN = 64, CH = D / 8, SW = CH >= 8 ? 7 : CH - 1, KS = D / 16, NT = BN / 8, DT = D / 8;
  __shared__ uint4 ks[BN * CH], vs[BN * CH]; /* row r, 16-byte chunk c at r * CH + (c ^ (r & SW)) */
  const int tid = (int)threadIdx.x, warp = tid / 32, lane = tid % 32, gr = lane / 4, tq = lane % 4;
  const int64_t nrb = (S + BM - 1) / BM, rb = blk % nrb, bh = blk / nrb, b = bh / H;
  const int h = (int)(bh % H), g = h / (H / KV), q0 = (int)rb * BM, r0 = q0 + warp * 16;
  const LG_ATTN_T* qh = q + (b * H + h) * (int64_t)S * D;
  const LG_ATTN_T* kg = k + (b * KV + g) * (int64_t)T * D;
  const LG_ATTN_T* vg = v + (b * KV + g) * (int64_t)T * D;
  const float sl2 = 1.4426950408889634f / sqrtf((float)D);
  uint32_t qa[KS][4]; /* A fragments: (row gr, k lo), (gr + 8, lo), (gr, hi), (gr + 8, hi) */
  for (int kk = 0; kk < KS; kk++)
    for (int i = 0; i < 4; i++) {
      const int row = r0 + gr + (i & 1) * 8, col = kk * 16 + tq * 2 + (i >> 1) * 8;
      qa[kk][i] = row < S ? *reinterpret_cast<const uint32_t*>(qh + (int64_t)row * D + col) : 0u;
    }
  float m[2] = {LG_ATTN_NEG_INF, LG_ATTN_NEG_INF}, l[2] = {0.0f, 0.0f}; /* rows gr, gr + 8 */
  float o[DT][4];
  for (int dt = 0; dt < DT; dt++)
    for (int e = 0; e < 4; e++) o[dt][e] = 0.0f;
  const int tend = causal ? (q0 + BM < T ? q0 + BM : T) : T;
  for (int t0 = 0; t0 < tend; t0 += BN) {
    __syncthreads(); /* the previous tile is used up */
    for (int i = tid; i < BN * CH; i += LG_ATTN_TH) {
      const int r = i / CH, c = i % CH, t = t0 + r, at = r * CH + (c ^ (r & SW));
      const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
      ks[at] = t < T ? *reinterpret_cast<const uint4*>(kg + (int64_t)t * D + c * 8) : zero;
      vs[at] = t < T ? *reinterpret_cast<const uint4*>(vg + (int64_t)t * D + c * 8) : zero;
    }
    __syncthreads();
    float s[NT][4]; /* S's accumulators: key tile nt, (row gr, keys 2tq, 2tq + 1), (row gr + 8, ...) */
    for (int nt = 0; nt < NT; nt++)
      for (int e = 0; e < 4; e++) s[nt][e] = 0.0f;
    for (int kk = 0; kk < KS; kk++)
      for (int nt = 0; nt < NT; nt += 2) { /* matrices (nt, k lo), (nt, k hi), (nt + 1, lo), (nt + 1, hi) */
        const int j = lane / 8, r = (nt + j / 2) * 8 + lane % 8, c = kk * 2 + j % 2;
        uint32_t kb[4];
        lg_ldmatrix_x4(kb, &ks[r * CH + (c ^ (r & SW))]);
        for (int u = 0; u < 2; u++) {
          const lg_mma_f32x4 d = LG_ATTN_MMA(qa[kk][0], qa[kk][1], qa[kk][2], qa[kk][3], kb[2 * u], kb[2 * u + 1],
                                              s[nt + u][0], s[nt + u][1], s[nt + u][2], s[nt + u][3]);
          for (int e = 0; e < 4; e++) s[nt + u][e] = d.x[e];
        }
      }
    float mx[2] = {LG_ATTN_NEG_INF, LG_ATTN_NEG_INF};
    for (int nt = 0; nt < NT; nt++)
      for (int e = 0; e < 4; e++) {
        const int row = r0 + gr + (e >> 1) * 8, col = t0 + nt * 8 + tq * 2 + (e & 1);
        const bool ok = col < T && !(causal && col > row);
        s[nt][e] = ok ? s[nt][e] * sl2 : LG_ATTN_NEG_INF;
        mx[e >> 1] = fmaxf(mx[e >> 1], s[nt][e]);
      }
    float corr[2];
    for (int i = 0; i < 2; i++) {
      mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 1));
      mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], 2));
      const float mn = fmaxf(m[i], mx[i]);
      corr[i] = mn == LG_ATTN_NEG_INF ? 1.0f : exp2f(m[i] - mn);
      m[i] = mn, l[i] *= corr[i]; /* l: this lane's share of the row's sum (the quad adds them at the end) */
    }
    for (int nt = 0; nt < NT; nt++)
      for (int e = 0; e < 4; e++) {
        const float p = s[nt][e] == LG_ATTN_NEG_INF ? 0.0f : exp2f(s[nt][e] - m[e >> 1]);
        s[nt][e] = p, l[e >> 1] += p;
      }
    for (int dt = 0; dt < DT; dt++)
      for (int e = 0; e < 4; e++) o[dt][e] *= corr[e >> 1];
    for (int j = 0; j < BN / 16; j++) { /* keys 16j..16j+15: P's accumulators of tiles 2j, 2j+1 are an A fragment */
      const uint32_t p0 = LG_ATTN_PACK(s[2 * j][0], s[2 * j][1]), p1 = LG_ATTN_PACK(s[2 * j][2], s[2 * j][3]);
      const uint32_t p2 = LG_ATTN_PACK(s[2 * j + 1][0], s[2 * j + 1][1]), p3 = LG_ATTN_PACK(s[2 * j + 1][2], s[2 * j + 1][3]);
      for (int dt = 0; dt < DT; dt += 2) { /* matrices (keys lo, dt), (keys hi, dt), (lo, dt + 1), (hi, dt + 1) */
        const int jj = lane / 8, r = j * 16 + (jj % 2) * 8 + lane % 8, c = dt + jj / 2;
        uint32_t vb[4];
        lg_ldmatrix_x4_trans(vb, &vs[r * CH + (c ^ (r & SW))]);
        for (int u = 0; u < 2; u++) {
          const lg_mma_f32x4 d = LG_ATTN_MMA(p0, p1, p2, p3, vb[2 * u], vb[2 * u + 1], o[dt + u][0], o[dt + u][1],
                                              o[dt + u][2], o[dt + u][3]);
          for (int e = 0; e < 4; e++) o[dt + u][e] = d.x[e];
        }
      }
    }
  }
  for (int i = 0; i < 2; i++) {
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 1);
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 2);
  }
  float* oh = out + (b * H + h) * (int64_t)S * (D + 1);
  for (int dt = 0; dt < DT; dt++)
    for (int e = 0; e < 4; e++) {
      const int row = r0 + gr + (e >> 1) * 8, col = dt * 8 + tq * 2 + (e & 1);
      if (row < S) oh[(int64_t)row * (D + 1) + col] = o[dt][e] / l[e >> 1];
    }
  for (int i = 0; i < 2; i++) {
    const int row = r0 + gr + i * 8;
    if (tq == 0 && row < S) oh[(int64_t)row * (D + 1) + D] = m[i] * 0.6931471805599453f + logf(l[i]);
  }
}
)CU";

// CUDA, tensor cores, backward (same conditions): dQ as the forward pass (64 query rows, q and dO
// fragments in registers, tiles of 32 keys: S = q k^T and dP = dO v^T by mma, dS = P (dP - delta)
// with P = exp2(S - L), dQ += dS k with k fragments by ldmatrix.trans), and dK/dV per 64 key rows
// (16 per warp, their k and v A fragments by ldmatrix from shared memory; tiles of 32 queries of
// each query head of the kv head: S^T = k q^T, dP^T = v dO^T, dV += P^T dO, dK += dS^T q).
// Shared memory: 16 KiB (dQ), 48 KiB (dK/dV) at head dim 128.
constexpr const char* kAttentionCudaTcGrad = R"CU(
template <int D>
__device__ void lg_attention_dq_tc(float* __restrict__ out, const LG_ATTN_T* __restrict__ q, const LG_ATTN_T* __restrict__ k,
                                   const LG_ATTN_T* __restrict__ v, const LG_ATTN_T* __restrict__ dout,
                                   const float* __restrict__ stats, int64_t blk, int H, int KV, int S, int T, bool causal) {
  constexpr int BM = 64, BN = 32, CH = D / 8, SW = CH >= 8 ? 7 : CH - 1, KS = D / 16, NT = BN / 8, DT = D / 8;
  __shared__ uint4 ks[BN * CH], vs[BN * CH];
  const int tid = (int)threadIdx.x, warp = tid / 32, lane = tid % 32, gr = lane / 4, tq = lane % 4;
  const int64_t nrb = (S + BM - 1) / BM, rb = blk % nrb, bh = blk / nrb, b = bh / H;
  const int h = (int)(bh % H), g = h / (H / KV), q0 = (int)rb * BM, r0 = q0 + warp * 16;
  const int64_t qrow = (b * H + h) * (int64_t)S;
  const LG_ATTN_T* kg = k + (b * KV + g) * (int64_t)T * D;
  const LG_ATTN_T* vg = v + (b * KV + g) * (int64_t)T * D;
  const float log2e = 1.4426950408889634f, scale = 1.0f / sqrtf((float)D), sl2 = log2e * scale;
  uint32_t qa[KS][4], da[KS][4]; /* A fragments of q and dO: (row gr, k lo), (gr + 8, lo), (gr, hi), (gr + 8, hi) */
  for (int kk = 0; kk < KS; kk++)
    for (int i = 0; i < 4; i++) {
      const int row = r0 + gr + (i & 1) * 8, col = kk * 16 + tq * 2 + (i >> 1) * 8;
      qa[kk][i] = row < S ? *reinterpret_cast<const uint32_t*>(q + (qrow + row) * D + col) : 0u;
      da[kk][i] = row < S ? *reinterpret_cast<const uint32_t*>(dout + (qrow + row) * D + col) : 0u;
    }
  float lse2[2], delta[2];
  for (int i = 0; i < 2; i++) {
    const int row = r0 + gr + i * 8;
    lse2[i] = row < S ? stats[(qrow + row) * 2] * log2e : 0.0f;
    delta[i] = row < S ? stats[(qrow + row) * 2 + 1] : 0.0f;
  }
  float dq[DT][4];
  for (int dt = 0; dt < DT; dt++)
    for (int e = 0; e < 4; e++) dq[dt][e] = 0.0f;
  const int tend = causal ? (q0 + BM < T ? q0 + BM : T) : T;
  for (int t0 = 0; t0 < tend; t0 += BN) {
    __syncthreads();
    for (int i = tid; i < BN * CH; i += LG_ATTN_TH) {
      const int r = i / CH, c = i % CH, t = t0 + r, at = r * CH + (c ^ (r & SW));
      const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
      ks[at] = t < T ? *reinterpret_cast<const uint4*>(kg + (int64_t)t * D + c * 8) : zero;
      vs[at] = t < T ? *reinterpret_cast<const uint4*>(vg + (int64_t)t * D + c * 8) : zero;
    }
    __syncthreads();
    float s[NT][4], dp[NT][4];
    for (int nt = 0; nt < NT; nt++)
      for (int e = 0; e < 4; e++) s[nt][e] = 0.0f, dp[nt][e] = 0.0f;
    for (int kk = 0; kk < KS; kk++)
      for (int nt = 0; nt < NT; nt += 2) {
        const int j = lane / 8, r = (nt + j / 2) * 8 + lane % 8, c = kk * 2 + j % 2;
        uint32_t kb[4], vb[4];
        lg_ldmatrix_x4(kb, &ks[r * CH + (c ^ (r & SW))]);
        lg_ldmatrix_x4(vb, &vs[r * CH + (c ^ (r & SW))]);
        for (int u = 0; u < 2; u++) {
          const lg_mma_f32x4 x = LG_ATTN_MMA(qa[kk][0], qa[kk][1], qa[kk][2], qa[kk][3], kb[2 * u], kb[2 * u + 1],
                                              s[nt + u][0], s[nt + u][1], s[nt + u][2], s[nt + u][3]);
          const lg_mma_f32x4 y = LG_ATTN_MMA(da[kk][0], da[kk][1], da[kk][2], da[kk][3], vb[2 * u], vb[2 * u + 1],
                                              dp[nt + u][0], dp[nt + u][1], dp[nt + u][2], dp[nt + u][3]);
          for (int e = 0; e < 4; e++) s[nt + u][e] = x.x[e], dp[nt + u][e] = y.x[e];
        }
      }
    for (int nt = 0; nt < NT; nt++) /* dS = P (dP - delta) */
      for (int e = 0; e < 4; e++) {
        const int row = r0 + gr + (e >> 1) * 8, col = t0 + nt * 8 + tq * 2 + (e & 1);
        const bool ok = col < T && !(causal && col > row);
        const float p = ok ? exp2f(s[nt][e] * sl2 - lse2[e >> 1]) : 0.0f;
        s[nt][e] = p * (dp[nt][e] - delta[e >> 1]);
      }
    for (int j = 0; j < BN / 16; j++) {
      const uint32_t a0 = LG_ATTN_PACK(s[2 * j][0], s[2 * j][1]), a1 = LG_ATTN_PACK(s[2 * j][2], s[2 * j][3]);
      const uint32_t a2 = LG_ATTN_PACK(s[2 * j + 1][0], s[2 * j + 1][1]), a3 = LG_ATTN_PACK(s[2 * j + 1][2], s[2 * j + 1][3]);
      for (int dt = 0; dt < DT; dt += 2) {
        const int jj = lane / 8, r = j * 16 + (jj % 2) * 8 + lane % 8, c = dt + jj / 2;
        uint32_t kb[4];
        lg_ldmatrix_x4_trans(kb, &ks[r * CH + (c ^ (r & SW))]);
        for (int u = 0; u < 2; u++) {
          const lg_mma_f32x4 x = LG_ATTN_MMA(a0, a1, a2, a3, kb[2 * u], kb[2 * u + 1], dq[dt + u][0], dq[dt + u][1],
                                              dq[dt + u][2], dq[dt + u][3]);
          for (int e = 0; e < 4; e++) dq[dt + u][e] = x.x[e];
        }
      }
    }
  }
  for (int dt = 0; dt < DT; dt++)
    for (int e = 0; e < 4; e++) {
      const int row = r0 + gr + (e >> 1) * 8, col = dt * 8 + tq * 2 + (e & 1);
      if (row < S) out[(qrow + row) * D + col] = dq[dt][e] * scale;
    }
}
template <int D>
__device__ void lg_attention_dkv_tc(float* __restrict__ out, const LG_ATTN_T* __restrict__ q, const LG_ATTN_T* __restrict__ k,
                                    const LG_ATTN_T* __restrict__ v, const LG_ATTN_T* __restrict__ dout,
                                    const float* __restrict__ stats, int64_t blk, int H, int KV, int S, int T, bool causal) {
  constexpr int BM = 64, BN = 32, CH = D / 8, SW = CH >= 8 ? 7 : CH - 1, KS = D / 16, NT = BN / 8, DT = D / 8;
  __shared__ uint4 ks[BM * CH], vs[BM * CH], qs[BN * CH], dos[BN * CH];
  const int tid = (int)threadIdx.x, warp = tid / 32, lane = tid % 32, gr = lane / 4, tq = lane % 4;
  const int64_t nrb = (T + BM - 1) / BM, rb = blk % nrb, bg = blk / nrb, b = bg / KV;
  const int g = (int)(bg % KV), rep = H / KV, t0 = (int)rb * BM, r0 = t0 + warp * 16;
  const int64_t krow = (b * KV + g) * (int64_t)T;
  const float log2e = 1.4426950408889634f, scale = 1.0f / sqrtf((float)D), sl2 = log2e * scale;
  const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
  for (int i = tid; i < BM * CH; i += LG_ATTN_TH) {
    const int r = i / CH, c = i % CH, t = t0 + r, at = r * CH + (c ^ (r & SW));
    ks[at] = t < T ? *reinterpret_cast<const uint4*>(k + (krow + t) * D + c * 8) : zero;
    vs[at] = t < T ? *reinterpret_cast<const uint4*>(v + (krow + t) * D + c * 8) : zero;
  }
  float dk[DT][4], dv[DT][4];
  for (int dt = 0; dt < DT; dt++)
    for (int e = 0; e < 4; e++) dk[dt][e] = 0.0f, dv[dt][e] = 0.0f;
  const int sbeg = causal ? t0 / BN * BN : 0; /* the first query tile that sees key t0 */
  for (int hj = 0; hj < rep; hj++) {
    const int64_t qrow = (b * H + g * rep + hj) * (int64_t)S;
    for (int q0 = sbeg; q0 < S; q0 += BN) {
      __syncthreads();
      for (int i = tid; i < BN * CH; i += LG_ATTN_TH) {
        const int r = i / CH, c = i % CH, s = q0 + r, at = r * CH + (c ^ (r & SW));
        qs[at] = s < S ? *reinterpret_cast<const uint4*>(q + (qrow + s) * D + c * 8) : zero;
        dos[at] = s < S ? *reinterpret_cast<const uint4*>(dout + (qrow + s) * D + c * 8) : zero;
      }
      __syncthreads();
      float st[NT][4], dpt[NT][4]; /* S^T and dP^T: rows = this warp's keys, columns = the tile's queries */
      for (int nt = 0; nt < NT; nt++)
        for (int e = 0; e < 4; e++) st[nt][e] = 0.0f, dpt[nt][e] = 0.0f;
      for (int kk = 0; kk < KS; kk++) {
        const int ja = lane / 8, ra = warp * 16 + (ja % 2) * 8 + lane % 8, ca = kk * 2 + ja / 2;
        uint32_t ka[4], va[4]; /* A fragments of the warp's k and v rows */
        lg_ldmatrix_x4(ka, &ks[ra * CH + (ca ^ (ra & SW))]);
        lg_ldmatrix_x4(va, &vs[ra * CH + (ca ^ (ra & SW))]);
        for (int nt = 0; nt < NT; nt += 2) {
          const int j = lane / 8, r = (nt + j / 2) * 8 + lane % 8, c = kk * 2 + j % 2;
          uint32_t qb[4], db[4];
          lg_ldmatrix_x4(qb, &qs[r * CH + (c ^ (r & SW))]);
          lg_ldmatrix_x4(db, &dos[r * CH + (c ^ (r & SW))]);
          for (int u = 0; u < 2; u++) {
            const lg_mma_f32x4 x = LG_ATTN_MMA(ka[0], ka[1], ka[2], ka[3], qb[2 * u], qb[2 * u + 1], st[nt + u][0],
                                                st[nt + u][1], st[nt + u][2], st[nt + u][3]);
            const lg_mma_f32x4 y = LG_ATTN_MMA(va[0], va[1], va[2], va[3], db[2 * u], db[2 * u + 1], dpt[nt + u][0],
                                                dpt[nt + u][1], dpt[nt + u][2], dpt[nt + u][3]);
            for (int e = 0; e < 4; e++) st[nt + u][e] = x.x[e], dpt[nt + u][e] = y.x[e];
          }
        }
      }
      for (int nt = 0; nt < NT; nt++) /* P^T, and dS^T = P^T (dP^T - delta) */
        for (int e = 0; e < 4; e++) {
          const int key = r0 + gr + (e >> 1) * 8, s = q0 + nt * 8 + tq * 2 + (e & 1);
          const bool ok = s < S && key < T && !(causal && key > s);
          const float p = ok ? exp2f(st[nt][e] * sl2 - stats[(qrow + s) * 2] * log2e) : 0.0f;
          dpt[nt][e] = ok ? p * (dpt[nt][e] - stats[(qrow + s) * 2 + 1]) : 0.0f;
          st[nt][e] = p;
        }
      for (int j = 0; j < BN / 16; j++) { /* queries 16j..16j+15 */
        const uint32_t p0 = LG_ATTN_PACK(st[2 * j][0], st[2 * j][1]), p1 = LG_ATTN_PACK(st[2 * j][2], st[2 * j][3]);
        const uint32_t p2 = LG_ATTN_PACK(st[2 * j + 1][0], st[2 * j + 1][1]), p3 = LG_ATTN_PACK(st[2 * j + 1][2], st[2 * j + 1][3]);
        const uint32_t d0 = LG_ATTN_PACK(dpt[2 * j][0], dpt[2 * j][1]), d1 = LG_ATTN_PACK(dpt[2 * j][2], dpt[2 * j][3]);
        const uint32_t d2 = LG_ATTN_PACK(dpt[2 * j + 1][0], dpt[2 * j + 1][1]), d3 = LG_ATTN_PACK(dpt[2 * j + 1][2], dpt[2 * j + 1][3]);
        for (int dt = 0; dt < DT; dt += 2) {
          const int jj = lane / 8, r = j * 16 + (jj % 2) * 8 + lane % 8, c = dt + jj / 2;
          uint32_t ob[4], qb[4];
          lg_ldmatrix_x4_trans(ob, &dos[r * CH + (c ^ (r & SW))]);
          lg_ldmatrix_x4_trans(qb, &qs[r * CH + (c ^ (r & SW))]);
          for (int u = 0; u < 2; u++) {
            const lg_mma_f32x4 x = LG_ATTN_MMA(p0, p1, p2, p3, ob[2 * u], ob[2 * u + 1], dv[dt + u][0], dv[dt + u][1],
                                                dv[dt + u][2], dv[dt + u][3]);
            const lg_mma_f32x4 y = LG_ATTN_MMA(d0, d1, d2, d3, qb[2 * u], qb[2 * u + 1], dk[dt + u][0], dk[dt + u][1],
                                                dk[dt + u][2], dk[dt + u][3]);
            for (int e = 0; e < 4; e++) dv[dt + u][e] = x.x[e], dk[dt + u][e] = y.x[e];
          }
        }
      }
    }
  }
  for (int dt = 0; dt < DT; dt++)
    for (int e = 0; e < 4; e++) {
      const int key = r0 + gr + (e >> 1) * 8, col = dt * 8 + tq * 2 + (e & 1);
      if (key < T) {
        out[(krow + key) * 2 * D + col] = dk[dt][e] * scale;
        out[(krow + key) * 2 * D + D + col] = dv[dt][e];
      }
    }
}
)CU";

}  // namespace

std::string attention_c_source(DType in) { return element_macros(in, false) + kAttentionC; }

std::string attention_cuda_source(DType in) {
  std::string src = element_macros(in, true) + kAttentionCuda;
  return in == dtypes::float32 ? src : src + kAttentionCudaTc + kAttentionCudaTcGrad;
}

bool attention_uses_tensor_cores(const AttentionKernel& a, DType in) {
  return in != dtypes::float32 && a.D % 16 == 0;
}

std::string attention_call(const Node& n, const std::function<std::string(const NodeRef&)>& name_of, bool cuda) {
  const AttentionKernel a = AttentionKernel::from_arg(n.get_arg<Shape>());
  LG_CHECK(static_cast<int>(n.src.size()) == 2 + a.inputs(), "ATTENTION with ", n.src.size(), " sources");
  LG_USER_CHECK(!cuda || a.D <= kAttentionCudaMaxDim, "flash attention on CUDA: head dim ", a.D, " is more than ",
                kAttentionCudaMaxDim, " (the kernels' shared tiles hold rows of at most that many floats); build ",
                "attention from matmul and softmax for this model (FLASH_ATTENTION=0)");
  std::string s = str("lg_attention_", a.label());
  if (cuda && attention_uses_tensor_cores(a, n.src[2]->dtype.base())) s += "_tc";
  if (cuda) s += str("<", a.D, ">");
  s += "(";
  for (size_t i = 1; i < n.src.size(); i++) s += name_of(n.src[i]) + ", ";
  s += name_of(n.src[0]);
  if (!cuda) s += str(", ", a.B, "ll");
  s += str(", ", a.H, ", ", a.KV, ", ", a.S, ", ", a.T);
  if (!cuda) s += str(", ", a.D, "ll");
  return s + str(", ", a.causal ? (cuda ? "true" : "1") : (cuda ? "false" : "0"), ");");
}

}  // namespace lg
