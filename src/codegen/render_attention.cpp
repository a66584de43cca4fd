#include "codegen/render_attention.h"

#include "base/error.h"

namespace lg {
namespace {

// LG_ATTN_T: the inputs' element type as the dialect stores it; LG_ATTN_F(x): its value as float.
std::string element_macros(DType in, bool cuda) {
  if (in == dtypes::bfloat16) return str("#define LG_ATTN_T ", cuda ? "lg_bf16_t" : "uint16_t", "\n#define LG_ATTN_F(x) lg_bf16_to_f(x)\n");
  if (in == dtypes::float16) return str("#define LG_ATTN_T ", cuda ? "lg_f16_t" : "uint16_t", "\n#define LG_ATTN_F(x) lg_f16_to_f(x)\n");
  LG_CHECK(in == dtypes::float32, "attention kernels of ", name(in));
  return "#define LG_ATTN_T float\n#define LG_ATTN_F(x) (x)\n";
}

// C: one call per block, in the calling thread. Rows of k and v (q and dO for GradKV) are widened
// to float32 once per block into scratch; each row then walks them with plain loops.
constexpr const char* kAttentionC = R"C(
#include <stdlib.h>
#define LG_ATTN_R 8
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
/* out (B, H, S, D+1): 8 query rows of head h, batch b */
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
/* out (B, H, S, D): dQ of 8 query rows */
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
/* out (B, KV, T, 2D): dK then dV of 8 key rows of kv head g, over its query heads */
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
#define LG_ATTN_R 8
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
/* out (B, H, S, D+1): 8 query rows of head h, batch b; online softmax over key tiles */
template <int D>
__device__ void lg_attention_fwd(float* __restrict__ out, const LG_ATTN_T* __restrict__ q, const LG_ATTN_T* __restrict__ k,
                                 const LG_ATTN_T* __restrict__ v, int64_t blk, int H, int KV, int S, int T, bool causal) {
  __shared__ float ks[LG_ATTN_BT][D + 1], vs[LG_ATTN_BT][D + 1], qs[LG_ATTN_R][D], ps[LG_ATTN_R][LG_ATTN_BT];
  __shared__ float ms[LG_ATTN_R], ls[LG_ATTN_R], cs[LG_ATTN_R];
  constexpr int kOut = (LG_ATTN_R * D + LG_ATTN_TH - 1) / LG_ATTN_TH;  /* output elements per thread */
  const int tid = (int)threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int64_t nrb = (S + LG_ATTN_R - 1) / LG_ATTN_R, rb = blk % nrb, bh = blk / nrb, b = bh / H;
  const int h = (int)(bh % H), g = h / (H / KV), s0 = (int)rb * LG_ATTN_R;
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
}
/* out (B, H, S, D): dQ of 8 query rows */
template <int D>
__device__ void lg_attention_dq(float* __restrict__ out, const LG_ATTN_T* __restrict__ q, const LG_ATTN_T* __restrict__ k,
                                const LG_ATTN_T* __restrict__ v, const LG_ATTN_T* __restrict__ dout,
                                const float* __restrict__ stats, int64_t blk, int H, int KV, int S, int T, bool causal) {
  __shared__ float ks[LG_ATTN_BT][D + 1], vs[LG_ATTN_BT][D + 1], qs[LG_ATTN_R][D], dos[LG_ATTN_R][D];
  __shared__ float dss[LG_ATTN_R][LG_ATTN_BT];
  constexpr int kOut = (LG_ATTN_R * D + LG_ATTN_TH - 1) / LG_ATTN_TH;
  const int tid = (int)threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int64_t nrb = (S + LG_ATTN_R - 1) / LG_ATTN_R, rb = blk % nrb, bh = blk / nrb, b = bh / H;
  const int h = (int)(bh % H), g = h / (H / KV), s0 = (int)rb * LG_ATTN_R;
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
}
/* out (B, KV, T, 2D): dK then dV of 8 key rows of kv head g; query tiles of each query head of g */
template <int D>
__device__ void lg_attention_dkv(float* __restrict__ out, const LG_ATTN_T* __restrict__ q, const LG_ATTN_T* __restrict__ k,
                                 const LG_ATTN_T* __restrict__ v, const LG_ATTN_T* __restrict__ dout,
                                 const float* __restrict__ stats, int64_t blk, int H, int KV, int S, int T, bool causal) {
  __shared__ float qs[LG_ATTN_BT][D + 1], dos[LG_ATTN_BT][D + 1], ks[LG_ATTN_R][D], vs[LG_ATTN_R][D];
  __shared__ float ps[LG_ATTN_R][LG_ATTN_BT], dss[LG_ATTN_R][LG_ATTN_BT], lses[LG_ATTN_BT], deltas[LG_ATTN_BT];
  constexpr int kOut = (LG_ATTN_R * D + LG_ATTN_TH - 1) / LG_ATTN_TH;
  const int tid = (int)threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int64_t nrb = (T + LG_ATTN_R - 1) / LG_ATTN_R, rb = blk % nrb, bg = blk / nrb, b = bg / KV;
  const int g = (int)(bg % KV), rep = H / KV, t0 = (int)rb * LG_ATTN_R;
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
}
)CU";

}  // namespace

std::string attention_c_source(DType in) { return element_macros(in, false) + kAttentionC; }

std::string attention_cuda_source(DType in) { return element_macros(in, true) + kAttentionCuda; }

std::string attention_call(const Node& n, const std::function<std::string(const NodeRef&)>& name_of, bool cuda) {
  const AttentionKernel a = AttentionKernel::from_arg(n.get_arg<Shape>());
  LG_CHECK(static_cast<int>(n.src.size()) == 2 + a.inputs(), "ATTENTION with ", n.src.size(), " sources");
  LG_USER_CHECK(!cuda || a.D <= kAttentionCudaMaxDim, "flash attention on CUDA: head dim ", a.D, " is more than ",
                kAttentionCudaMaxDim, " (the kernels' shared tiles hold rows of at most that many floats); build ",
                "attention from matmul and softmax for this model (FLASH_ATTENTION=0)");
  std::string s = str("lg_attention_", a.label());
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
