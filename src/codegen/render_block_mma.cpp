#include "codegen/render_block_mma.h"

#include "base/error.h"

namespace lg {

const char* const kBlockMmaSource = R"BMMA(
/* Block-tiled tensor-core matmul (codegen/render_block_mma.h). */
/* Offset of element (r, c) of a shared tile with C 16-bit columns: a row is C/8 16-byte chunks,
   chunk c/8 stored at (c/8) XOR (a function of r), so the same chunk of 8 consecutive rows (what
   one ldmatrix matrix reads) lies in 8 different bank groups. */
template <int C> LG_D int lg_bmma_at(int r, int c) {
  constexpr int chunks = C / 8;
  const int x = chunks >= 8 ? (r & 7) : ((r / (8 / chunks)) & (chunks - 1));
  return r * C + (((c >> 3) ^ x) << 3) + (c & 7);
}
/* An R x C tile from global memory (rows ld elements apart, columns contiguous) into shared
   memory, one 16-byte cp.async per piece; thread t of THREADS takes pieces t, t + THREADS, ...
   (consecutive threads, consecutive pieces of a row: coalesced). */
template <int R, int C, int THREADS> LG_D void lg_bmma_copy(uint16_t* s, const uint16_t* g, int64_t ld, int t) {
  static_assert(R * C / 8 % THREADS == 0, "a tile's 16-byte pieces are not a multiple of the threads");
#pragma unroll
  for (int i = 0; i < R * C / 8 / THREADS; i++) {
    const int q = t + i * THREADS, r = q / (C / 8), c = q % (C / 8) * 8;
    lg_cp_async16(s + lg_bmma_at<C>(r, c), g + r * ld + c);
  }
}
/* acc[tm][tn] of warp (wm, wn) = the block's A (BM x K, from a_ptr + a_off) times B (K x BN, from
   b_ptr + b_off), plus acc unless `first` (a sum of products: one call per product). A_K: A is contiguous along k (element (m, k) at m*a_ld + k), else along m (at
   k*a_ld + m); B_K: B is contiguous along k (element (k, n) at n*b_ld + k), else along n.
   smem: STAGES * (BM + BN) * BK elements of the block's dynamic shared memory, 16-byte aligned
   (block_mma_shared_bytes); every product's call uses the same. */
template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, bool A_K, bool B_K, bool BF16>
LG_D void lg_block_mma(const void* a_ptr, int64_t a_off, int64_t a_ld, const void* b_ptr, int64_t b_off, int64_t b_ld,
                       int64_t K, int wm, int wn, int lane, int t, bool first, uint16_t* lg_bmma_smem,
                       lg_mma_f32x4 (&acc)[BM / WARPS_M / 16][BN / WARPS_N / 8]) {
  constexpr int THREADS = 32 * WARPS_M * WARPS_N, TM = BM / WARPS_M / 16, TN = BN / WARPS_N / 8;
  constexpr int A_TILE = BM * BK, STAGE = (BM + BN) * BK;
  static_assert(BK % 16 == 0 && TN % 2 == 0 && STAGES >= 2, "k tiles of 16s, B fragments in pairs, 2 stages or more");
  const uint16_t* A = (const uint16_t*)a_ptr + a_off;
  const uint16_t* B = (const uint16_t*)b_ptr + b_off;
  if (first) {
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
      for (int j = 0; j < TN; j++) acc[i][j] = lg_mma_f32x4{{0.f, 0.f, 0.f, 0.f}};
  } else {
    __syncthreads(); /* the previous product's last reads of shared memory are done */
  }
  const int tiles = (int)(K / BK);
  /* k tile kt into stage s, each tile stored as in memory (rows along the strided axis) */
  auto load = [&](int s, int kt) {
    uint16_t* sa = lg_bmma_smem + s * STAGE;
    uint16_t* sb = sa + A_TILE;
    const int64_t k0 = (int64_t)kt * BK;
    if (A_K) lg_bmma_copy<BM, BK, THREADS>(sa, A + k0, a_ld, t);
    else lg_bmma_copy<BK, BM, THREADS>(sa, A + k0 * a_ld, a_ld, t);
    if (B_K) lg_bmma_copy<BN, BK, THREADS>(sb, B + k0, b_ld, t);
    else lg_bmma_copy<BK, BN, THREADS>(sb, B + k0 * b_ld, b_ld, t);
  };
  /* ldmatrix.x4: lanes 8i..8i+7 give the rows of 8x8 matrix i; this lane gives row r8 of matrix mi.
     A 16x16 A fragment: matrix i holds rows +8*(i%2), k +8*(i/2) (registers a0..a3 of the mma);
     two 16x8 B fragments: matrix i holds k +8*(i%2), n +8*(i/2) (b0, b1 of tiles j and j+1). */
  const int mi = lane >> 3, r8 = lane & 7;
  auto compute = [&](int s) {
    const uint16_t* sa = lg_bmma_smem + s * STAGE;
    const uint16_t* sb = sa + A_TILE;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      uint32_t af[TM][4], bf[TN][2];
#pragma unroll
      for (int i = 0; i < TM; i++) {
        const int m = wm * (BM / WARPS_M) + i * 16;
        if (A_K) lg_ldmatrix_x4(af[i], sa + lg_bmma_at<BK>(m + r8 + 8 * (mi & 1), kk + 8 * (mi >> 1)));
        else lg_ldmatrix_x4_trans(af[i], sa + lg_bmma_at<BM>(kk + r8 + 8 * (mi >> 1), m + 8 * (mi & 1)));
      }
#pragma unroll
      for (int j = 0; j < TN; j += 2) {
        const int n = wn * (BN / WARPS_N) + j * 8;
        uint32_t r[4];
        if (B_K) lg_ldmatrix_x4(r, sb + lg_bmma_at<BK>(n + r8 + 8 * (mi >> 1), kk + 8 * (mi & 1)));
        else lg_ldmatrix_x4_trans(r, sb + lg_bmma_at<BN>(kk + r8 + 8 * (mi & 1), n + 8 * (mi >> 1)));
        bf[j][0] = r[0];
        bf[j][1] = r[1];
        bf[j + 1][0] = r[2];
        bf[j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) {
          const float* c = acc[i][j].x;
          if (BF16) acc[i][j] = lg_mma_m16n8k16_bf16(af[i][0], af[i][1], af[i][2], af[i][3], bf[j][0], bf[j][1], c[0], c[1], c[2], c[3]);
          else acc[i][j] = lg_mma_m16n8k16_f16(af[i][0], af[i][1], af[i][2], af[i][3], bf[j][0], bf[j][1], c[0], c[1], c[2], c[3]);
        }
    }
  };
  /* The pipeline: STAGES - 1 k tiles in flight before the first mma; each step waits for its own
     tile (all but the STAGES - 2 newest copy groups done), then the barrier makes every thread's
     copies visible and ends every warp's reads of the stage the next copy overwrites. */
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < tiles) load(s, s);
    lg_cp_async_commit();
  }
  for (int kt = 0; kt < tiles; kt++) {
    lg_cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int next = kt + STAGES - 1;
    if (next < tiles) load(next % STAGES, next);
    lg_cp_async_commit();
    compute(kt % STAGES);
  }
  lg_cp_async_wait<0>();
}
)BMMA";

std::string block_mma_call(const BlockMmaArg& arg, DType input, const std::string& acc,
                           const std::vector<BlockMmaOperands>& operands, const std::string& wm, const std::string& wn,
                           const std::string& lane, const std::string& t, const std::string& smem) {
  const BlockMmaTiling& g = arg.tiling;
  LG_CHECK(input == dtypes::bfloat16 || input == dtypes::float16, "BLOCK_MMA of ", name(input));
  LG_CHECK(operands.size() == arg.products.size(), "BLOCK_MMA: ", operands.size(), " operand pairs for ", arg.products.size(),
           " products");
  std::string out = str("lg_mma_f32x4 ", acc, "[", g.bm / g.warps_m / 16, "][", g.bn / g.warps_n / 8, "];");
  for (size_t p = 0; p < operands.size(); p++) {
    const BlockMmaProduct& x = arg.products[p];
    const BlockMmaOperands& o = operands[p];
    const bool a_k = x.a_k == 1, b_k = x.b_k == 1;
    const int64_t a_ld = a_k ? x.a_m : x.a_k, b_ld = b_k ? x.b_n : x.b_k;
    out += str("\nlg_block_mma<", g.bm, ", ", g.bn, ", ", g.bk, ", ", g.warps_m, ", ", g.warps_n, ", ", g.stages, ", ",
               a_k ? "true" : "false", ", ", b_k ? "true" : "false", ", ", input == dtypes::bfloat16 ? "true" : "false", ">(",
               o.a, ", ", o.a_off, ", ", a_ld, "ll, ", o.b, ", ", o.b_off, ", ", b_ld, "ll, ", arg.k, "ll, (int)", wm, ", (int)", wn,
               ", (int)", lane, ", (int)", t, ", ", p == 0 ? "true" : "false", ", (uint16_t*)", smem, ", ", acc, ");");
  }
  return out;
}

}  // namespace lg
