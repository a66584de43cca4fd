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
/* The block `blk` of a kernel whose heads each have `rows` rows: its batch, head and first row. */
typedef struct { int64_t b, head, row0; } lg_attn_block;
static inline lg_attn_block lg_attn_block_of(int64_t blk, int64_t heads, int64_t rows) {
  const int64_t nrb = (rows + LG_ATTN_R - 1) / LG_ATTN_R, bh = blk / nrb;
  lg_attn_block r = {bh / heads, bh % heads, blk % nrb * LG_ATTN_R};
  return r;
}
/* The keys and values that query rows s0..s0+LG_ATTN_R-1 of kv head (b, g) see, as float: rows
   [0, returned count) into *kf and *vf (to free). */
static inline int64_t lg_attn_kv(const LG_ATTN_T* k, const LG_ATTN_T* v, int64_t b, int64_t g, int64_t KV, int64_t T,
                                 int64_t D, int64_t s0, int causal, float** kf, float** vf) {
  const int64_t tend = causal ? (s0 + LG_ATTN_R < T ? s0 + LG_ATTN_R : T) : T;
  *kf = lg_attn_widen(k + (b * KV + g) * T * D, tend * D);
  *vf = lg_attn_widen(v + (b * KV + g) * T * D, tend * D);
  return tend;
}
/* out (B, H, S, D+1): 64 query rows of head h, batch b */
static inline void lg_attention_fwd(float* restrict out, const LG_ATTN_T* q, const LG_ATTN_T* k, const LG_ATTN_T* v,
                                    int64_t blk, int64_t H, int64_t KV, int64_t S, int64_t T, int64_t D, int causal) {
  const lg_attn_block bk = lg_attn_block_of(blk, H, S);
  const int64_t b = bk.b, h = bk.head, g = h / (H / KV), s0 = bk.row0;
  const float scale = 1.0f / sqrtf((float)D);
  float *kf, *vf;
  const int64_t tend = lg_attn_kv(k, v, b, g, KV, T, D, s0, causal, &kf, &vf);
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
                                   const LG_ATTN_T* dout, const float* stats, int64_t blk, int64_t H, int64_t KV,
                                   int64_t S, int64_t T, int64_t D, int causal) {
  const lg_attn_block bk = lg_attn_block_of(blk, H, S);
  const int64_t b = bk.b, h = bk.head, g = h / (H / KV), s0 = bk.row0;
  const float scale = 1.0f / sqrtf((float)D);
  float *kf, *vf;
  (void)lg_attn_kv(k, v, b, g, KV, T, D, s0, causal, &kf, &vf);
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
                                    const LG_ATTN_T* dout, const float* stats, int64_t blk, int64_t H, int64_t KV,
                                    int64_t S, int64_t T, int64_t D, int causal) {
  const lg_attn_block bk = lg_attn_block_of(blk, KV, T);
  const int64_t b = bk.b, g = bk.head;
  const int64_t rep = H / KV, t0 = bk.row0, sbeg = causal ? t0 : 0;
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

// CUDA, shared by every kernel below: one block of kAttentionThreads (128) threads, 4 warps, per
// call. Every loop, barrier and warp shuffle runs alike in every thread of the block.
constexpr const char* kAttentionCudaCommon = R"CU(
#define LG_ATTN_ROWS 64 /* rows per block: AttentionKernel::kRows */
#define LG_ATTN_TH 128
#define LG_ATTN_WARPS (LG_ATTN_TH / 32)
#define LG_ATTN_NEG_INF __int_as_float(0xff800000u)
/* The block of `blk`: its batch, head (kv head for dK/dV) and first row; `heads` per batch, `rows`
   per head. last_first: the head's row blocks from the last (causal query blocks: the last see
   the most keys, and the grid starts the longest blocks first). */
struct lg_attn_block { int64_t b; int head, row0; };
__device__ __forceinline__ lg_attn_block lg_attn_block_of(int64_t blk, int heads, int rows, bool last_first) {
  const int64_t nrb = (rows + LG_ATTN_ROWS - 1) / LG_ATTN_ROWS, bh = blk / nrb, rb = blk % nrb;
  return {bh / heads, (int)(bh % heads), (int)(last_first ? nrb - 1 - rb : rb) * LG_ATTN_ROWS};
}
)CU";

// CUDA, float32 CUDA cores (float32 inputs, or head dims that are not a multiple of 16): 8 rows per
// pass; LG_ATTN_BT keys (queries for dkv) per shared tile, lane j of a warp on key j of the tile.
// Shared rows have a stride of D + 1 floats where a warp reads 32 rows at one column (distinct
// banks).
constexpr const char* kAttentionCuda = R"CU(
#define LG_ATTN_R 8 /* rows per pass */
#define LG_ATTN_BT 32
__device__ __forceinline__ float lg_attn_wmax(float x) {
  for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}
__device__ __forceinline__ float lg_attn_wsum(float x) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}
/* Rows row0..row0+R-1 of src (D elements each) as float into dst, row stride P; zeros past limit. */
template <int D, int R, int P>
__device__ __forceinline__ void lg_attn_widen(float* dst, const LG_ATTN_T* src, int row0, int limit) {
  for (int i = (int)threadIdx.x; i < R * D; i += LG_ATTN_TH) {
    const int r = i / D, e = i % D, t = row0 + r;
    dst[r * P + e] = t < limit ? LG_ATTN_F(src[(int64_t)t * D + e]) : 0.0f;
  }
}
/* out (B, H, S, D+1): 64 query rows of head h, batch b, in passes of 8; online softmax over key tiles */
template <int D>
__device__ void lg_attention_fwd(float* __restrict__ out, const LG_ATTN_T* __restrict__ q, const LG_ATTN_T* __restrict__ k,
                                 const LG_ATTN_T* __restrict__ v, int64_t blk, int H, int KV, int S, int T, bool causal) {
  __shared__ float ks[LG_ATTN_BT][D + 1], vs[LG_ATTN_BT][D + 1], qs[LG_ATTN_R][D], ps[LG_ATTN_R][LG_ATTN_BT];
  __shared__ float ms[LG_ATTN_R], ls[LG_ATTN_R], cs[LG_ATTN_R];
  constexpr int kOut = (LG_ATTN_R * D + LG_ATTN_TH - 1) / LG_ATTN_TH; /* output elements per thread */
  const int tid = (int)threadIdx.x, warp = tid / 32, lane = tid % 32;
  const lg_attn_block bk = lg_attn_block_of(blk, H, S, causal);
  const int h = bk.head, g = h / (H / KV);
  const LG_ATTN_T* qh = q + (bk.b * H + h) * (int64_t)S * D;
  const LG_ATTN_T* kg = k + (bk.b * KV + g) * (int64_t)T * D;
  const LG_ATTN_T* vg = v + (bk.b * KV + g) * (int64_t)T * D;
  float* oh = out + (bk.b * H + h) * (int64_t)S * (D + 1);
  const float scale = 1.0f / sqrtf((float)D);
  for (int s0 = bk.row0; s0 < S && s0 < bk.row0 + LG_ATTN_ROWS; s0 += LG_ATTN_R) {
    __syncthreads(); /* the previous pass's shared rows are used up */
    lg_attn_widen<D, LG_ATTN_R, D>(&qs[0][0], qh, s0, S);
    if (tid < LG_ATTN_R) ms[tid] = LG_ATTN_NEG_INF, ls[tid] = 0.0f;
    float o[kOut];
    for (int j = 0; j < kOut; j++) o[j] = 0.0f;
    const int tend = causal ? (s0 + LG_ATTN_R < T ? s0 + LG_ATTN_R : T) : T;
    for (int t0 = 0; t0 < tend; t0 += LG_ATTN_BT) {
      __syncthreads(); /* the previous tile is used up */
      lg_attn_widen<D, LG_ATTN_BT, D + 1>(&ks[0][0], kg, t0, T);
      lg_attn_widen<D, LG_ATTN_BT, D + 1>(&vs[0][0], vg, t0, T);
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
    for (int j = 0; j < kOut; j++) {
      const int i = tid + j * LG_ATTN_TH, r = i / D, e = i % D;
      if (i < LG_ATTN_R * D && s0 + r < S) oh[(int64_t)(s0 + r) * (D + 1) + e] = o[j] / ls[r];
    }
    if (tid < LG_ATTN_R && s0 + tid < S) oh[(int64_t)(s0 + tid) * (D + 1) + D] = ms[tid] + logf(ls[tid]);
  }
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
  const lg_attn_block bk = lg_attn_block_of(blk, H, S, causal);
  const int h = bk.head, g = h / (H / KV);
  const int64_t qrow = (bk.b * H + h) * (int64_t)S;
  const LG_ATTN_T* kg = k + (bk.b * KV + g) * (int64_t)T * D;
  const LG_ATTN_T* vg = v + (bk.b * KV + g) * (int64_t)T * D;
  const float scale = 1.0f / sqrtf((float)D);
  for (int s0 = bk.row0; s0 < S && s0 < bk.row0 + LG_ATTN_ROWS; s0 += LG_ATTN_R) {
    __syncthreads(); /* the previous pass's shared rows are used up */
    lg_attn_widen<D, LG_ATTN_R, D>(&qs[0][0], q + qrow * D, s0, S);
    lg_attn_widen<D, LG_ATTN_R, D>(&dos[0][0], dout + qrow * D, s0, S);
    float o[kOut];
    for (int j = 0; j < kOut; j++) o[j] = 0.0f;
    const int tend = causal ? (s0 + LG_ATTN_R < T ? s0 + LG_ATTN_R : T) : T;
    for (int t0 = 0; t0 < tend; t0 += LG_ATTN_BT) {
      __syncthreads();
      lg_attn_widen<D, LG_ATTN_BT, D + 1>(&ks[0][0], kg, t0, T);
      lg_attn_widen<D, LG_ATTN_BT, D + 1>(&vs[0][0], vg, t0, T);
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
}
/* out (B, KV, T, 2D): dK then dV of 64 key rows of kv head g, in passes of 8; query tiles of each
   query head of g */
template <int D>
__device__ void lg_attention_dkv(float* __restrict__ out, const LG_ATTN_T* __restrict__ q, const LG_ATTN_T* __restrict__ k,
                                 const LG_ATTN_T* __restrict__ v, const LG_ATTN_T* __restrict__ dout,
                                 const float* __restrict__ stats, int64_t blk, int H, int KV, int S, int T, bool causal) {
  __shared__ float qs[LG_ATTN_BT][D + 1], dos[LG_ATTN_BT][D + 1], ks[LG_ATTN_R][D], vs[LG_ATTN_R][D];
  __shared__ float ps[LG_ATTN_R][LG_ATTN_BT], dss[LG_ATTN_R][LG_ATTN_BT], lses[LG_ATTN_BT], deltas[LG_ATTN_BT];
  constexpr int kOut = (LG_ATTN_R * D + LG_ATTN_TH - 1) / LG_ATTN_TH;
  const int tid = (int)threadIdx.x, warp = tid / 32, lane = tid % 32;
  const lg_attn_block bk = lg_attn_block_of(blk, KV, T, false);
  const int g = bk.head, rep = H / KV;
  const int64_t krow = (bk.b * KV + g) * (int64_t)T;
  const float scale = 1.0f / sqrtf((float)D);
  for (int t0 = bk.row0; t0 < T && t0 < bk.row0 + LG_ATTN_ROWS; t0 += LG_ATTN_R) {
    __syncthreads(); /* the previous pass's shared rows are used up */
    lg_attn_widen<D, LG_ATTN_R, D>(&ks[0][0], k + krow * D, t0, T);
    lg_attn_widen<D, LG_ATTN_R, D>(&vs[0][0], v + krow * D, t0, T);
    float dk[kOut], dv[kOut];
    for (int j = 0; j < kOut; j++) dk[j] = 0.0f, dv[j] = 0.0f;
    const int sbeg = causal ? t0 / LG_ATTN_BT * LG_ATTN_BT : 0;
    for (int hj = 0; hj < rep; hj++) {
      const int64_t qrow = (bk.b * H + g * rep + hj) * (int64_t)S;
      for (int q0 = sbeg; q0 < S; q0 += LG_ATTN_BT) {
        __syncthreads();
        lg_attn_widen<D, LG_ATTN_BT, D + 1>(&qs[0][0], q + qrow * D, q0, S);
        lg_attn_widen<D, LG_ATTN_BT, D + 1>(&dos[0][0], dout + qrow * D, q0, S);
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
}
)CU";

// CUDA, tensor cores (16-bit inputs, head dims a multiple of 16), in FlashAttention-2's structure:
// m16n8k16 mma.sync; each warp owns 16 rows of the block's 64 (queries for fwd and dq, keys for
// dkv). Tiles of 16-bit rows go to shared memory in 16-byte chunks, XOR-swizzled by row so that the
// 8 rows an ldmatrix matrix reads hit 8 bank groups.
//   fwd  q fragments in registers; per 64 keys: S = q k^T, the online softmax on S's accumulators
//        (a lane holds 16 values of two rows; a row's maximum is combined over the 4 lanes of its
//        quad, its sum only at the end), O += P v with P (rounded to the input dtype) as the A
//        operand: an accumulator tile pair is an A fragment. Scores in units of log2 (exp2).
//        The tiles arrive by cp.async, each while the other is in use: v's while S and the
//        softmax are computed, the next k's while O += P v is.
//   dq   q and dO fragments in registers; per 32 keys: S, dP = dO v^T, dS = P (dP - delta) with
//        P = exp2(S - L), dQ += dS k. Two stages of k and v tiles: the next keys' copy (cp.async)
//        runs while this tile's are used.
//   dkv  per 32 queries of each query head of the kv head: S^T = k q^T, dP^T = v dO^T (k and v
//        fragments by ldmatrix from the block's tiles), dV += P^T dO, dK += dS^T q. Two stages of
//        q and dO tiles: the next tile's copy (cp.async) runs while this one is used.
// Shared memory at head dim 128: 32 KiB (fwd), 32 KiB (dq), static; 64 KiB (dkv), dynamic (past
// the 48 KiB a kernel gets without asking).
constexpr const char* kAttentionCudaTc = R"CU(
/* Chunk c of row r of a tile of D-wide rows: the XOR stays inside the row when its chunks are a
   multiple of 8 or a power of two; other widths are not swizzled. */
template <int D> __device__ __forceinline__ int lg_attn_at(int r, int c) {
  constexpr int CH = D / 8, SW = CH % 8 == 0 ? 7 : (CH & (CH - 1)) == 0 ? CH - 1 : 0;
  return r * CH + (c ^ (r & SW));
}
/* Rows row0..row0+R-1 of src into a tile; zeros past limit. */
template <int D, int R>
__device__ __forceinline__ void lg_attn_tile(uint4* tile, const LG_ATTN_T* src, int row0, int limit) {
  for (int i = (int)threadIdx.x; i < R * (D / 8); i += LG_ATTN_TH) {
    const int r = i / (D / 8), c = i % (D / 8), t = row0 + r;
    tile[lg_attn_at<D>(r, c)] = t < limit ? *reinterpret_cast<const uint4*>(src + (int64_t)t * D + c * 8) : make_uint4(0u, 0u, 0u, 0u);
  }
}
/* lg_attn_tile by cp.async (sm_80 and later): rows before limit are copied when the caller's
   commit and wait say so; rows past it are zeros stored at once. */
template <int D, int R>
__device__ __forceinline__ void lg_attn_tile_async(uint4* tile, const LG_ATTN_T* src, int row0, int limit) {
  for (int i = (int)threadIdx.x; i < R * (D / 8); i += LG_ATTN_TH) {
    const int r = i / (D / 8), c = i % (D / 8), t = row0 + r;
    uint4* dst = &tile[lg_attn_at<D>(r, c)];
    if (t < limit) lg_cp_async16(dst, src + (int64_t)t * D + c * 8);
    else *dst = make_uint4(0u, 0u, 0u, 0u);
  }
}
/* A fragments of rows row0..row0+15 of src from global memory, per 16 columns: (row gr, k lo),
   (gr + 8, lo), (gr, hi), (gr + 8, hi); zeros past limit. */
template <int D>
__device__ __forceinline__ void lg_attn_frags(uint32_t (&a)[D / 16][4], const LG_ATTN_T* src, int row0, int limit) {
  const int lane = (int)threadIdx.x % 32;
  for (int kk = 0; kk < D / 16; kk++)
    for (int i = 0; i < 4; i++) {
      const int row = row0 + lane / 4 + (i & 1) * 8, col = kk * 16 + lane % 4 * 2 + (i >> 1) * 8;
      a[kk][i] = row < limit ? *reinterpret_cast<const uint32_t*>(src + (int64_t)row * D + col) : 0u;
    }
}
/* The A fragment of tile rows r0..r0+15, columns 16kk..16kk+15. */
template <int D> __device__ __forceinline__ void lg_attn_tile_frag(uint32_t (&a)[4], const uint4* tile, int r0, int kk) {
  const int lane = (int)threadIdx.x % 32, j = lane / 8;
  lg_ldmatrix_x4(a, &tile[lg_attn_at<D>(r0 + (j % 2) * 8 + lane % 8, kk * 2 + j / 2)]);
}
template <int N> __device__ __forceinline__ void lg_attn_zero(float (&acc)[N][4]) {
  for (int i = 0; i < N; i++)
    for (int e = 0; e < 4; e++) acc[i][e] = 0.0f;
}
__device__ __forceinline__ void lg_attn_mma(float (&acc)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1) {
  const lg_mma_f32x4 d = LG_ATTN_MMA(a0, a1, a2, a3, b0, b1, acc[0], acc[1], acc[2], acc[3]);
  for (int e = 0; e < 4; e++) acc[e] = d.x[e];
}
/* acc[nt] += A times tile rows nt*8..nt*8+7 transposed, over columns 16kk..16kk+15 of both (A: 16 rows). */
template <int D, int NT>
__device__ __forceinline__ void lg_attn_mma_abt(float (&acc)[NT][4], const uint32_t (&a)[4], const uint4* tile, int kk) {
  const int lane = (int)threadIdx.x % 32, j = lane / 8;
  for (int nt = 0; nt < NT; nt += 2) { /* matrices (nt, k lo), (nt, k hi), (nt + 1, lo), (nt + 1, hi) */
    uint32_t b[4];
    lg_ldmatrix_x4(b, &tile[lg_attn_at<D>((nt + j / 2) * 8 + lane % 8, kk * 2 + j % 2)]);
    lg_attn_mma(acc[nt], a[0], a[1], a[2], a[3], b[0], b[1]);
    lg_attn_mma(acc[nt + 1], a[0], a[1], a[2], a[3], b[2], b[3]);
  }
}
/* acc[dt] += P times the tile (k = its rows, n = its columns): P's accumulators p (16 rows x NT*8,
   rounded to the input dtype), two accumulator tiles per A fragment. */
template <int D, int NT>
__device__ __forceinline__ void lg_attn_mma_pb(float (&acc)[D / 8][4], const float (&p)[NT][4], const uint4* tile) {
  const int lane = (int)threadIdx.x % 32, jj = lane / 8;
  for (int j = 0; j < NT / 2; j++) {
    const uint32_t a0 = LG_ATTN_PACK(p[2 * j][0], p[2 * j][1]), a1 = LG_ATTN_PACK(p[2 * j][2], p[2 * j][3]);
    const uint32_t a2 = LG_ATTN_PACK(p[2 * j + 1][0], p[2 * j + 1][1]), a3 = LG_ATTN_PACK(p[2 * j + 1][2], p[2 * j + 1][3]);
    for (int dt = 0; dt < D / 8; dt += 2) { /* matrices (rows lo, dt), (rows hi, dt), (lo, dt + 1), (hi, dt + 1) */
      uint32_t b[4];
      lg_ldmatrix_x4_trans(b, &tile[lg_attn_at<D>(j * 16 + (jj % 2) * 8 + lane % 8, dt + jj / 2)]);
      lg_attn_mma(acc[dt], a0, a1, a2, a3, b[0], b[1]);
      lg_attn_mma(acc[dt + 1], a0, a1, a2, a3, b[2], b[3]);
    }
  }
}
/* Element e of accumulator tile n: its row (of the warp's 16) and column. */
__device__ __forceinline__ int lg_attn_row(int e) { return (int)threadIdx.x % 32 / 4 + (e >> 1) * 8; }
__device__ __forceinline__ int lg_attn_col(int n, int e) { return n * 8 + (int)threadIdx.x % 4 * 2 + (e & 1); }

template <int D>
__device__ void lg_attention_fwd_tc(float* __restrict__ out, const LG_ATTN_T* __restrict__ q, const LG_ATTN_T* __restrict__ k,
                                    const LG_ATTN_T* __restrict__ v, int64_t blk, int H, int KV, int S, int T, bool causal) {
  constexpr int BN = 64, KS = D / 16, NT = BN / 8, DT = D / 8;
  __shared__ uint4 ks[BN * D / 8], vs[BN * D / 8];
  const lg_attn_block bk = lg_attn_block_of(blk, H, S, causal);
  const int h = bk.head, g = h / (H / KV), r0 = bk.row0 + (int)threadIdx.x / 32 * 16;
  const LG_ATTN_T* kg = k + (bk.b * KV + g) * (int64_t)T * D;
  const LG_ATTN_T* vg = v + (bk.b * KV + g) * (int64_t)T * D;
  const float sl2 = 1.4426950408889634f / sqrtf((float)D);
  uint32_t qa[KS][4];
  lg_attn_frags<D>(qa, q + (bk.b * H + h) * (int64_t)S * D, r0, S);
  float m[2] = {LG_ATTN_NEG_INF, LG_ATTN_NEG_INF}, l[2] = {0.0f, 0.0f}; /* rows gr, gr + 8 */
  float o[DT][4];
  lg_attn_zero(o);
  const int tend = causal ? (bk.row0 + LG_ATTN_ROWS < T ? bk.row0 + LG_ATTN_ROWS : T) : T;
  if (tend > 0) lg_attn_tile_async<D, BN>(ks, kg, 0, T);
  lg_cp_async_commit();
  for (int t0 = 0; t0 < tend; t0 += BN) {
    lg_cp_async_wait<0>(); /* this thread's part of the k tile */
    __syncthreads();       /* every thread's; and every warp is done with the previous v tile */
    lg_attn_tile_async<D, BN>(vs, vg, t0, T);
    lg_cp_async_commit();
    float s[NT][4];
    lg_attn_zero(s);
    for (int kk = 0; kk < KS; kk++) lg_attn_mma_abt<D, NT>(s, qa[kk], ks, kk);
    float mx[2] = {LG_ATTN_NEG_INF, LG_ATTN_NEG_INF};
    for (int nt = 0; nt < NT; nt++)
      for (int e = 0; e < 4; e++) {
        const int row = r0 + lg_attn_row(e), col = t0 + lg_attn_col(nt, e);
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
    lg_cp_async_wait<0>(); /* the v tile */
    __syncthreads();       /* every thread's; and every warp is done with the k tile */
    if (t0 + BN < tend) lg_attn_tile_async<D, BN>(ks, kg, t0 + BN, T);
    lg_cp_async_commit();
    lg_attn_mma_pb<D, NT>(o, s, vs);
  }
  for (int i = 0; i < 2; i++) {
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 1);
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 2);
  }
  float* oh = out + (bk.b * H + h) * (int64_t)S * (D + 1);
  for (int dt = 0; dt < DT; dt++)
    for (int e = 0; e < 4; e++) {
      const int row = r0 + lg_attn_row(e);
      if (row < S) oh[(int64_t)row * (D + 1) + lg_attn_col(dt, e)] = o[dt][e] / l[e >> 1];
    }
  for (int i = 0; i < 2; i++) {
    const int row = r0 + lg_attn_row(2 * i);
    if ((int)threadIdx.x % 4 == 0 && row < S) oh[(int64_t)row * (D + 1) + D] = m[i] * 0.6931471805599453f + logf(l[i]);
  }
}
template <int D>
__device__ void lg_attention_dq_tc(float* __restrict__ out, const LG_ATTN_T* __restrict__ q, const LG_ATTN_T* __restrict__ k,
                                   const LG_ATTN_T* __restrict__ v, const LG_ATTN_T* __restrict__ dout,
                                   const float* __restrict__ stats, int64_t blk, int H, int KV, int S, int T, bool causal) {
  constexpr int BN = 32, KS = D / 16, NT = BN / 8, DT = D / 8;
  __shared__ uint4 kst[2][BN * D / 8], vst[2][BN * D / 8]; /* stage (t0 / BN) % 2 holds keys t0.. */
  const lg_attn_block bk = lg_attn_block_of(blk, H, S, causal);
  const int h = bk.head, g = h / (H / KV), r0 = bk.row0 + (int)threadIdx.x / 32 * 16;
  const int64_t qrow = (bk.b * H + h) * (int64_t)S;
  const LG_ATTN_T* kg = k + (bk.b * KV + g) * (int64_t)T * D;
  const LG_ATTN_T* vg = v + (bk.b * KV + g) * (int64_t)T * D;
  const float log2e = 1.4426950408889634f, scale = 1.0f / sqrtf((float)D), sl2 = log2e * scale;
  uint32_t qa[KS][4], da[KS][4];
  lg_attn_frags<D>(qa, q + qrow * D, r0, S);
  lg_attn_frags<D>(da, dout + qrow * D, r0, S);
  float lse2[2], delta[2];
  for (int i = 0; i < 2; i++) {
    const int row = r0 + lg_attn_row(2 * i);
    lse2[i] = row < S ? stats[(qrow + row) * 2] * log2e : 0.0f;
    delta[i] = row < S ? stats[(qrow + row) * 2 + 1] : 0.0f;
  }
  float dq[DT][4];
  lg_attn_zero(dq);
  const int tend = causal ? (bk.row0 + LG_ATTN_ROWS < T ? bk.row0 + LG_ATTN_ROWS : T) : T;
  if (tend > 0) {
    lg_attn_tile_async<D, BN>(kst[0], kg, 0, T);
    lg_attn_tile_async<D, BN>(vst[0], vg, 0, T);
  }
  lg_cp_async_commit();
  for (int t0 = 0; t0 < tend; t0 += BN) {
    const int st = t0 / BN % 2;
    lg_cp_async_wait<0>(); /* this thread's part of this stage */
    __syncthreads();       /* every thread's; and every warp is done with the other stage */
    if (t0 + BN < tend) {
      lg_attn_tile_async<D, BN>(kst[st ^ 1], kg, t0 + BN, T);
      lg_attn_tile_async<D, BN>(vst[st ^ 1], vg, t0 + BN, T);
    }
    lg_cp_async_commit();
    const uint4 *ks = kst[st], *vs = vst[st];
    float s[NT][4], dp[NT][4];
    lg_attn_zero(s);
    lg_attn_zero(dp);
    for (int kk = 0; kk < KS; kk++) {
      lg_attn_mma_abt<D, NT>(s, qa[kk], ks, kk);
      lg_attn_mma_abt<D, NT>(dp, da[kk], vs, kk);
    }
    for (int nt = 0; nt < NT; nt++) /* dS = P (dP - delta) */
      for (int e = 0; e < 4; e++) {
        const int row = r0 + lg_attn_row(e), col = t0 + lg_attn_col(nt, e);
        const bool ok = col < T && !(causal && col > row);
        const float p = ok ? exp2f(s[nt][e] * sl2 - lse2[e >> 1]) : 0.0f;
        s[nt][e] = p * (dp[nt][e] - delta[e >> 1]);
      }
    lg_attn_mma_pb<D, NT>(dq, s, ks);
  }
  for (int dt = 0; dt < DT; dt++)
    for (int e = 0; e < 4; e++) {
      const int row = r0 + lg_attn_row(e);
      if (row < S) out[(qrow + row) * D + lg_attn_col(dt, e)] = dq[dt][e] * scale;
    }
}
/* Dynamic shared memory (attention_cuda_shared_bytes): the block's k and v rows (64 each), then two
   stages of a query tile and its dO tile (32 rows each); 64 KiB at head dim 128. */
template <int D>
__device__ void lg_attention_dkv_tc(float* __restrict__ out, const LG_ATTN_T* __restrict__ q, const LG_ATTN_T* __restrict__ k,
                                    const LG_ATTN_T* __restrict__ v, const LG_ATTN_T* __restrict__ dout,
                                    const float* __restrict__ stats, int64_t blk, int H, int KV, int S, int T, bool causal,
                                    unsigned char* smem) {
  constexpr int BN = 32, KS = D / 16, NT = BN / 8, DT = D / 8, TILE = BN * D / 8;
  uint4* const ks = reinterpret_cast<uint4*>(smem);
  uint4* const vs = ks + LG_ATTN_ROWS * D / 8;
  uint4* const qdo = vs + LG_ATTN_ROWS * D / 8; /* stage st: q at qdo + 2 * st * TILE, dO after it */
  const lg_attn_block bk = lg_attn_block_of(blk, KV, T, false);
  const int g = bk.head, rep = H / KV, w0 = (int)threadIdx.x / 32 * 16, r0 = bk.row0 + w0;
  const int64_t krow = (bk.b * KV + g) * (int64_t)T;
  const float log2e = 1.4426950408889634f, scale = 1.0f / sqrtf((float)D), sl2 = log2e * scale;
  float dk[DT][4], dv[DT][4];
  lg_attn_zero(dk);
  lg_attn_zero(dv);
  /* The query tiles, in order: for each query head hj sharing this kv head, queries sbeg.. (the
     first tile that sees the block's first key) in steps of BN; tile i is (i / nq, sbeg + i % nq * BN). */
  const int sbeg = causal ? bk.row0 / BN * BN : 0;
  const int nq = S > sbeg ? (S - sbeg + BN - 1) / BN : 0, tiles = rep * nq;
  auto qrow_of = [&](int i) { return (bk.b * H + g * rep + i / nq) * (int64_t)S; };
  auto fetch = [&](int i) { /* tile i's q and dO rows into stage i % 2 */
    uint4* st = qdo + 2 * (i % 2) * TILE;
    const int64_t qrow = qrow_of(i);
    const int q0 = sbeg + i % nq * BN;
    lg_attn_tile_async<D, BN>(st, q + qrow * D, q0, S);
    lg_attn_tile_async<D, BN>(st + TILE, dout + qrow * D, q0, S);
  };
  if (tiles > 0) {
    lg_attn_tile_async<D, LG_ATTN_ROWS>(ks, k + krow * D, bk.row0, T);
    lg_attn_tile_async<D, LG_ATTN_ROWS>(vs, v + krow * D, bk.row0, T);
    fetch(0);
  }
  lg_cp_async_commit();
  for (int i = 0; i < tiles; i++) {
    lg_cp_async_wait<0>(); /* this thread's part of tile i (and, first, of k and v) */
    __syncthreads();       /* every thread's; and every warp is done with the other stage */
    if (i + 1 < tiles) fetch(i + 1);
    lg_cp_async_commit();
    const uint4 *qs = qdo + 2 * (i % 2) * TILE, *dos = qs + TILE;
    const int64_t qrow = qrow_of(i);
    const int q0 = sbeg + i % nq * BN;
    float st[NT][4], dpt[NT][4]; /* S^T and dP^T: rows = the warp's keys, columns = the tile's queries */
    lg_attn_zero(st);
    lg_attn_zero(dpt);
    for (int kk = 0; kk < KS; kk++) {
      uint32_t ka[4], va[4];
      lg_attn_tile_frag<D>(ka, ks, w0, kk);
      lg_attn_tile_frag<D>(va, vs, w0, kk);
      lg_attn_mma_abt<D, NT>(st, ka, qs, kk);
      lg_attn_mma_abt<D, NT>(dpt, va, dos, kk);
    }
    for (int nt = 0; nt < NT; nt++) /* P^T, and dS^T = P^T (dP^T - delta) */
      for (int e = 0; e < 4; e++) {
        const int key = r0 + lg_attn_row(e), s = q0 + lg_attn_col(nt, e);
        const bool ok = s < S && key < T && !(causal && key > s);
        const float p = ok ? exp2f(st[nt][e] * sl2 - stats[(qrow + s) * 2] * log2e) : 0.0f;
        dpt[nt][e] = ok ? p * (dpt[nt][e] - stats[(qrow + s) * 2 + 1]) : 0.0f;
        st[nt][e] = p;
      }
    lg_attn_mma_pb<D, NT>(dv, st, dos);
    lg_attn_mma_pb<D, NT>(dk, dpt, qs);
  }
  for (int dt = 0; dt < DT; dt++)
    for (int e = 0; e < 4; e++) {
      const int key = r0 + lg_attn_row(e), col = lg_attn_col(dt, e);
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
  std::string src = element_macros(in, true) + kAttentionCudaCommon + kAttentionCuda;
  return in == dtypes::float32 ? src : src + kAttentionCudaTc;
}

bool attention_uses_tensor_cores(const AttentionKernel& a, DType in) {
  return a.tensor_cores && in != dtypes::float32 && a.D % 16 == 0;
}

int64_t attention_cuda_shared_bytes(const AttentionKernel& a, DType in) {
  if (a.kind != AttentionKind::GradKV || !attention_uses_tensor_cores(a, in)) return 0;
  return (2 * AttentionKernel::kRows + 2 * 2 * 32) * a.D * 2;  // k, v; 2 stages of q and dO (lg_attention_dkv_tc)
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
  s += str(", ", a.H, ", ", a.KV, ", ", a.S, ", ", a.T);
  if (!cuda) s += str(", ", a.D, "ll");
  s += str(", ", a.causal ? (cuda ? "true" : "1") : (cuda ? "false" : "0"));
  if (cuda && attention_cuda_shared_bytes(a, n.src[2]->dtype.base()) > 0) s += ", lg_dsmem";
  return s + ");";
}

}  // namespace lg
