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
/* Both main loops' pipeline. WGMMA = 0 (mma.sync): compute(s) finishes the mmas of stage s, and
   the copies run STAGES - 1 k tiles ahead. WGMMA = 1: compute(s) issues and commits stage s's
   wgmmas, and that group stays in flight across the next barrier, so the copies run STAGES - 2
   ahead (the stage a copy overwrites is one whose mmas every warpgroup waited for before the
   barrier). Each step waits for its own tile (all but the newest STAGES - 2 - WGMMA copy groups
   done), with wgmma fences its landed copies for the async proxy (wgmma's reads), then the
   barrier makes every thread's copies visible and ends every warp's reads of the stage the next
   copy overwrites. load(s, kt): k tile kt into stage s. */
template <int STAGES, int WGMMA, class Load, class Compute>
LG_D void lg_bmma_pipeline(int tiles, const Load& load, const Compute& compute) {
  constexpr int AHEAD = STAGES - 1 - WGMMA;  // k tiles copied ahead of the one computed
  static_assert(AHEAD >= 1, "a stage being copied besides the one waited for (and the one in flight)");
#pragma unroll
  for (int s = 0; s < AHEAD; s++) {
    if (s < tiles) load(s, s);
    lg_cp_async_commit();
  }
  for (int kt = 0; kt < tiles; kt++) {
    lg_cp_async_wait<AHEAD - 1>();
    if constexpr (WGMMA) lg_fence_proxy_async();
    __syncthreads();
    const int next = kt + AHEAD;
    if (next < tiles) load(next % STAGES, next);
    lg_cp_async_commit();
    compute(kt % STAGES);
    if constexpr (WGMMA) lg_wgmma_wait<1>();
  }
  if constexpr (WGMMA) lg_wgmma_wait<0>();
  lg_cp_async_wait<0>();
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
  lg_bmma_pipeline<STAGES, 0>(tiles, load, compute);
}
/* A wgmma descriptor (PTX ISA, "Matrix Descriptor Format") with the 128-byte swizzle: start
   address, leading and stride byte offsets (each >> 4), swizzle mode 1. Its tile's 1024-byte
   swizzle atoms (8 rows of 128 bytes, 16-byte chunk c of row r at c XOR r % 8) start 1024-byte
   aligned (base offset 0).
   K-major (lg_bmma_at<64>: row r of the tile holds r's 64 k, one atom row): the 8-row groups are
   SBO = 1024 bytes apart (LBO unused, 1); the 16 k of one mma start 32 bytes further per 16 k.
   MN-major (lg_wgmma_mn_at: an atom row holds 64 consecutive m or n of one k): the atoms along
   m or n are LBO = 1024 bytes apart, the 8-k groups SBO = (MN / 64) * 1024; one mma reads two
   8-k groups, so the next 16 k start 2 * SBO further. */
LG_D uint64_t lg_wgmma_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return (uint64_t)((addr & 0x3ffff) >> 4) | (uint64_t)(lbo >> 4) << 16 | (uint64_t)(sbo >> 4) << 32 | (uint64_t)1 << 62;
}
/* Offset of element (k, x) of a 64 x MN MN-major tile (x along m or n): atom x / 64 of k-group
   k / 8, row k % 8 of the atom, chunk (x % 64) / 8 XOR k % 8. */
template <int MN> LG_D int lg_wgmma_mn_at(int k, int x) {
  return ((k >> 3) * (MN / 64) + (x >> 6)) * 512 + (k & 7) * 64 + ((((x & 63) >> 3) ^ (k & 7)) << 3) + (x & 7);
}
/* An MN-major 64 x MN tile from global memory (k rows ld elements apart, m or n contiguous) into
   shared memory by lg_wgmma_mn_at, one 16-byte cp.async per piece (consecutive threads,
   consecutive pieces of a row: coalesced). */
template <int MN, int THREADS> LG_D void lg_wgmma_copy_mn(uint16_t* s, const uint16_t* g, int64_t ld, int t) {
  static_assert(64 * MN / 8 % THREADS == 0, "a tile's 16-byte pieces are not a multiple of the threads");
#pragma unroll
  for (int i = 0; i < 64 * MN / 8 / THREADS; i++) {
    const int q = t + i * THREADS, k = q / (MN / 8), x = q % (MN / 8) * 8;
    lg_cp_async16(s + lg_wgmma_mn_at<MN>(k, x), g + k * ld + x);
  }
}
/* One warpgroup's mmas over a stage of 64 k (sa: the stage, A's tile then B's): wgmma.fence, 4
   wgmma m64nBNk16 (warpgroup wg's 64 rows of A, all of B, read by descriptor), one commit group.
   Per operand: where its 16 k number kk start, LBO and SBO. A K-major tile is lg_bmma_at<64>; an
   MN-major one lg_wgmma_mn_at (the swizzle atoms along m or n 1 KiB apart, the 8-k groups
   MN / 64 KiB), or with SLABS 64-wide slabs of 64 k rows as TMA writes them (atoms 8 KiB apart,
   8-k groups 1 KiB). */
template <int BM, int BN, bool A_K, bool B_K, bool BF16, bool SLABS>
LG_D void lg_wgmma_stage(lg_mma_f32x4* d, const uint16_t* sa, int wg) {
  constexpr int BK = 64, A_TILE = BM * BK;
  constexpr uint32_t a_mn_sbo = SLABS ? 1024 : (BM / 64) * 1024, b_mn_sbo = SLABS ? 1024 : (BN / 64) * 1024;
  constexpr uint32_t mn_lbo = SLABS ? 64 * 128 : 1024;
  constexpr uint32_t a_step = A_K ? 32 : 2 * a_mn_sbo, b_step = B_K ? 32 : 2 * b_mn_sbo;
  constexpr uint32_t a_lbo = A_K ? 16 : mn_lbo, a_sbo = A_K ? 1024 : a_mn_sbo;
  constexpr uint32_t b_lbo = B_K ? 16 : mn_lbo, b_sbo = B_K ? 1024 : b_mn_sbo;
  const uint32_t a0 = lg_smem_address(sa) + (A_K || SLABS ? wg * 64 * BK * 2 : wg * 1024), b0 = lg_smem_address(sa + A_TILE);
  lg_wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < BK / 16; kk++) {
    const uint64_t da = lg_wgmma_desc(a0 + kk * a_step, a_lbo, a_sbo), db = lg_wgmma_desc(b0 + kk * b_step, b_lbo, b_sbo);
    if constexpr (BN == 256) {
      if (BF16) lg_wgmma_m64n256k16_bf16<!A_K, !B_K>(d, da, db);
      else lg_wgmma_m64n256k16_f16<!A_K, !B_K>(d, da, db);
    } else {
      if (BF16) lg_wgmma_m64n128k16_bf16<!A_K, !B_K>(d, da, db);
      else lg_wgmma_m64n128k16_f16<!A_K, !B_K>(d, da, db);
    }
  }
  lg_wgmma_commit();
}
/* lg_block_mma with warpgroup mmas (sm_90a): the same copies (BK = 64) in lg_bmma_pipeline, and
   per k tile each warpgroup (warps 4g..4g+3: rows 64g..64g+63) issues 4 wgmma m64nBNk16 reading
   its A rows and all of B from the stage by descriptor, and commits them as one group, which
   runs on while the next tile's barrier and copies happen. A_K, B_K: the operand is contiguous
   along k (its tile K-major, lg_bmma_at<64>), else along m or n (MN-major, lg_wgmma_mn_at;
   wgmma's transpose flag for it).
   acc[0][tn] is the thread's 16 rows' columns 8tn.. as an mma.sync C fragment, which is wgmma's D
   layout. smem: block_mma_shared_bytes, the tiles from its first 1024-byte aligned address. */
template <int BM, int BN, int STAGES, bool A_K, bool B_K, bool BF16>
LG_D void lg_block_wgmma(const void* a_ptr, int64_t a_off, int64_t a_ld, const void* b_ptr, int64_t b_off, int64_t b_ld,
                         int64_t K, int wm, int t, bool first, uint16_t* smem, lg_mma_f32x4 (&acc)[1][BN / 8]) {
  constexpr int BK = 64, THREADS = 2 * BM, A_TILE = BM * BK, STAGE = (BM + BN) * BK;
  static_assert(BM % 64 == 0 && (BN == 128 || BN == 256), "warpgroups of 64 rows, wgmma n of 128 or 256");
  uint16_t* const lg_bmma_smem = smem + ((1024 - (lg_smem_address(smem) & 1023)) & 1023) / 2;
  const uint16_t* A = (const uint16_t*)a_ptr + a_off;
  const uint16_t* B = (const uint16_t*)b_ptr + b_off;
  if (first) {
#pragma unroll
    for (int j = 0; j < BN / 8; j++) acc[0][j] = lg_mma_f32x4{{0.f, 0.f, 0.f, 0.f}};
  } else {
    __syncthreads(); /* the previous product's last reads of shared memory are done */
  }
  const int tiles = (int)(K / BK);
  auto load = [&](int s, int kt) {
    uint16_t* sa = lg_bmma_smem + s * STAGE;
    const int64_t k0 = (int64_t)kt * BK;
    if (A_K) lg_bmma_copy<BM, BK, THREADS>(sa, A + k0, a_ld, t);
    else lg_wgmma_copy_mn<BM, THREADS>(sa, A + k0 * a_ld, a_ld, t);
    if (B_K) lg_bmma_copy<BN, BK, THREADS>(sa + A_TILE, B + k0, b_ld, t);
    else lg_wgmma_copy_mn<BN, THREADS>(sa + A_TILE, B + k0 * b_ld, b_ld, t);
  };
  lg_mma_f32x4* const d = acc[0];
  auto issue = [&](int s) { lg_wgmma_stage<BM, BN, A_K, B_K, BF16, false>(d, lg_bmma_smem + s * STAGE, wm / 4); };
  lg_bmma_pipeline<STAGES, 1>(tiles, load, issue);
}
/* The warp-specialized wgmma main loop (a `specialized` tiling, codegen/block_mma.h): the block's
   2 * BM consumer threads (warpgroups of 64 rows, as in lg_block_wgmma) only issue mmas, the 128
   producer threads after them only copy. Both walk one ring of STAGES stages in the same order,
   across the products of a sum, each keeping its place in its own `pipe` (zero before the first
   product). Per stage s, two mbarriers after the tiles:
     full[s]  (one arrival per producer thread) completes when every producer thread's copies into
              s have landed and been fenced for the async proxy (wgmma's reads);
     empty[s] (one arrival per consumer thread) completes when the mmas reading s are done.
   The producer waits empty[s] before it copies a tile into s (a fresh mbarrier's phase before the
   first counts as completed, so the first round passes) and arrives on full[] LAG tiles later,
   after cp.async.wait_group says that tile's copies landed and it fenced them (the writer fences
   its own writes, then releases them). A consumer waits full[s], issues and commits the stage's
   4 wgmmas, and once lg_wgmma_wait<1> says the previous tile's group is done arrives on that
   tile's empty[]. No barrier of the whole block after lg_ws_setup.
   The kernel splits after the setup: the producer threads run lg_ws_produce for every product and
   leave. Registers: 384 threads allow 168 each, and the consumers fit (ptxas: 154, no spills), so
   no setmaxnreg moves any from the producer (which ptxas only honours with a known register
   count at entry, and which deadlocks when the requests pass the register file). */
struct lg_ws_pipe { int stage; uint32_t phase; }; /* the next tile's stage and its round's parity */
template <int STAGES> LG_D void lg_ws_next(lg_ws_pipe& p) {
  if (++p.stage == STAGES) {
    p.stage = 0;
    p.phase ^= 1u;
  }
}
/* The stages (1024-byte aligned) and the mbarriers after them: full[s], then empty[s]. */
LG_D uint16_t* lg_ws_tiles(uint16_t* smem) {
  return smem + ((1024 - (lg_smem_address(smem) & 1023)) & 1023) / 2;
}
template <int BM, int BN, int STAGES> LG_D uint64_t* lg_ws_full(uint16_t* smem) {
  return (uint64_t*)(lg_ws_tiles(smem) + STAGES * (BM + BN) * 64);
}
/* Every thread of the block: t 0 initializes the mbarriers (FULL arrivals complete a full[] phase:
   the producer's threads, or 1 with TMA; an empty[] phase every consumer thread's, or in a cluster
   of CLUSTER blocks one per consumer warpgroup of each block: lg_ws_release), all wait for it (in
   a cluster, every block's threads: the others multicast into this block's stages and arrive on
   its mbarriers). */
template <int BM, int BN, int STAGES, int FULL, int CLUSTER = 1> LG_D void lg_ws_setup(int t, uint16_t* smem) {
  constexpr int CONSUMERS = 2 * BM, EMPTY = CLUSTER == 1 ? CONSUMERS : CLUSTER * CONSUMERS / 128;
  uint64_t* const full = lg_ws_full<BM, BN, STAGES>(smem);
  if (t == 0) {
    for (int s = 0; s < STAGES; s++) {
      lg_mbarrier_init(full + s, FULL);
      lg_mbarrier_init(full + STAGES + s, EMPTY);
    }
    lg_fence_mbarrier_init();
    /* the initialized mbarriers visible to the async proxy too, which TMA completes its bytes
       through (the CUDA programming guide's TMA example fences the same way) */
    lg_fence_proxy_async();
  }
  /* the mbarriers are initialized before anyone waits on them or arrives */
  if constexpr (CLUSTER == 1) __syncthreads();
  else lg_cluster_sync();
}
/* A consumer thread's release of a stage (bar: its empty[]): its own arrival, or in a cluster lane
   0 of warp r of each warpgroup arrives on block r's empty[] once the warpgroup's mmas reading
   the stage are done (wgmma.wait_group covers the warpgroup's group), since every block's
   producer multicasts into this block's stage. */
template <int CLUSTER> LG_D void lg_ws_release(uint64_t* bar) {
  if constexpr (CLUSTER == 1) {
    lg_mbarrier_arrive(bar);
  } else {
    const int x = (int)(threadIdx.x % 128);
    if (x % 32 == 0 && x / 32 < CLUSTER) lg_mbarrier_arrive_cluster(bar, (uint32_t)(x / 32));
  }
}
/* A cluster's producer thread before it leaves: waits until every block's consumers released the
   last STAGES stages, so no arrival from another block is still on its way to this block's
   mbarriers when it ends (the block's shared memory lives while one of its threads does). */
template <int BM, int BN, int STAGES> LG_D void lg_ws_drain(int t, uint16_t* smem, lg_ws_pipe pipe) {
  if (t != 2 * BM) return;
  uint64_t* const empty = lg_ws_full<BM, BN, STAGES>(smem) + STAGES;
  for (int i = 0; i < STAGES; i++) {
    lg_mbarrier_wait_cluster(empty + pipe.stage, pipe.phase ^ 1u);
    lg_ws_next<STAGES>(pipe);
  }
}
/* A producer thread (t in [2 * BM, 2 * BM + 128)): one product's k tiles into the ring. */
template <int BM, int BN, int STAGES, bool A_K, bool B_K>
LG_D void lg_ws_produce(const void* a_ptr, int64_t a_off, int64_t a_ld, const void* b_ptr, int64_t b_off, int64_t b_ld,
                        int64_t K, int t, uint16_t* smem, lg_ws_pipe& pipe) {
  constexpr int BK = 64, PRODUCERS = 128, LAG = STAGES / 2, A_TILE = BM * BK, STAGE = (BM + BN) * BK;
  static_assert(LAG >= 1, "a stage's arrival comes after later copies were issued");
  uint16_t* const tiles = lg_ws_tiles(smem);
  uint64_t* const full = lg_ws_full<BM, BN, STAGES>(smem);
  uint64_t* const empty = full + STAGES;
  const uint16_t* A = (const uint16_t*)a_ptr + a_off;
  const uint16_t* B = (const uint16_t*)b_ptr + b_off;
  const int pt = t - 2 * BM, tiles_k = (int)(K / BK);
  lg_ws_pipe due = pipe; /* the oldest tile whose full[] arrival is still to come */
  for (int kt = 0; kt < tiles_k; kt++) {
    lg_mbarrier_wait(empty + pipe.stage, pipe.phase ^ 1u);
    uint16_t* sa = tiles + pipe.stage * STAGE;
    const int64_t k0 = (int64_t)kt * BK;
    if (A_K) lg_bmma_copy<BM, BK, PRODUCERS>(sa, A + k0, a_ld, pt);
    else lg_wgmma_copy_mn<BM, PRODUCERS>(sa, A + k0 * a_ld, a_ld, pt);
    if (B_K) lg_bmma_copy<BN, BK, PRODUCERS>(sa + A_TILE, B + k0, b_ld, pt);
    else lg_wgmma_copy_mn<BN, PRODUCERS>(sa + A_TILE, B + k0 * b_ld, b_ld, pt);
    lg_cp_async_commit();
    lg_ws_next<STAGES>(pipe);
    if (kt >= LAG) {
      lg_cp_async_wait<LAG>(); /* tile kt - LAG's copies landed */
      lg_fence_proxy_async();
      lg_mbarrier_arrive(full + due.stage);
      lg_ws_next<STAGES>(due);
    }
  }
  lg_cp_async_wait<0>();
  lg_fence_proxy_async();
  for (int i = 0; i < LAG && i < tiles_k; i++) {
    lg_mbarrier_arrive(full + due.stage);
    lg_ws_next<STAGES>(due);
  }
}
/* A TMA tiling's producer: thread 2 * BM alone issues, per k tile, the expected bytes on full[s]
   with its arrival, then the tiles' bulk tensor copies, which complete those bytes when they land.
   A tile contiguous along k is one box (64 k by BM or BN rows, from column a_off % a_ld + k0 of
   row a_off / a_ld); one contiguous along m or n is BM / 64 (BN / 64) slabs of 64 x 64, slab j from
   column a_off % a_ld + 64 j of rows a_off / a_ld + k0 on, each 8 KiB in shared memory. The copy
   engine writes every box with the 128-byte swizzle the wgmma descriptors name.
   In a cluster of CLUSTER blocks (consecutive block rows of one block column: the same B tile),
   block r copies its A tile and slice r of B's (BN / CLUSTER rows contiguous along k, or slabs
   r * BN / 64 / CLUSTER.. contiguous along n) into every block of the cluster by multicast: each
   block's full[s] still expects the whole stage, its A and every block's slice. */
template <int BM, int BN, int STAGES, bool A_K, bool B_K, int CLUSTER = 1>
LG_D void lg_ws_produce_tma(const lg_tensor_map* ta, int64_t a_off, int64_t a_ld, const lg_tensor_map* tb, int64_t b_off,
                            int64_t b_ld, int64_t K, int t, uint16_t* smem, lg_ws_pipe& pipe) {
  constexpr int BK = 64, A_TILE = BM * BK, STAGE = (BM + BN) * BK;
  if (t != 2 * BM) return;
  uint16_t* const tiles = lg_ws_tiles(smem);
  uint64_t* const full = lg_ws_full<BM, BN, STAGES>(smem);
  uint64_t* const empty = full + STAGES;
  const int a_c = (int)(a_off % a_ld), a_r = (int)(a_off / a_ld), b_c = (int)(b_off % b_ld), b_r = (int)(b_off / b_ld);
  const int tiles_k = (int)(K / BK);
  for (int kt = 0; kt < tiles_k; kt++) {
    /* in a cluster the releases come from every block's consumers */
    if constexpr (CLUSTER > 1) lg_mbarrier_wait_cluster(empty + pipe.stage, pipe.phase ^ 1u);
    else lg_mbarrier_wait(empty + pipe.stage, pipe.phase ^ 1u);
    uint64_t* const bar = full + pipe.stage;
    uint16_t* sa = tiles + pipe.stage * STAGE;
    const int k0 = kt * BK;
    lg_mbarrier_arrive_expect_tx(bar, STAGE * 2);
    if constexpr (A_K) {
      lg_tma_load_2d(sa, ta, a_c + k0, a_r, bar);
    } else {
#pragma unroll
      for (int j = 0; j < BM / 64; j++) lg_tma_load_2d(sa + j * 64 * 64, ta, a_c + 64 * j, a_r + k0, bar);
    }
    if constexpr (CLUSTER > 1) {
      constexpr int ROWS = BN / CLUSTER, SLABS = BN / 64 / CLUSTER;
      const int r = (int)lg_cluster_rank();
      constexpr uint16_t everyone = (uint16_t)((1u << CLUSTER) - 1);
      if constexpr (B_K) {
        lg_tma_load_2d_multicast(sa + A_TILE + r * ROWS * 64, tb, b_c + k0, b_r + r * ROWS, bar, everyone);
      } else {
#pragma unroll
        for (int j = r * SLABS; j < (r + 1) * SLABS; j++)
          lg_tma_load_2d_multicast(sa + A_TILE + j * 64 * 64, tb, b_c + 64 * j, b_r + k0, bar, everyone);
      }
    } else if constexpr (B_K) {
      lg_tma_load_2d(sa + A_TILE, tb, b_c + k0, b_r, bar);
    } else {
#pragma unroll
      for (int j = 0; j < BN / 64; j++) lg_tma_load_2d(sa + A_TILE + j * 64 * 64, tb, b_c + 64 * j, b_r + k0, bar);
    }
    lg_ws_next<STAGES>(pipe);
  }
}
/* A consumer thread (warp wm, t < 2 * BM): one product's mmas into acc (zeroed first when `first`),
   in lg_block_wgmma's accumulator layout. SLABS: tiles contiguous along m or n as TMA writes them
   (lg_wgmma_stage). CLUSTER: the stages are released as lg_ws_release says. */
template <int BM, int BN, int STAGES, bool A_K, bool B_K, bool BF16, bool SLABS, int CLUSTER = 1>
LG_D void lg_ws_consume(int64_t K, int wm, bool first, uint16_t* smem, lg_mma_f32x4 (&acc)[1][BN / 8], lg_ws_pipe& pipe) {
  constexpr int BK = 64, STAGE = (BM + BN) * BK;
  static_assert(BM % 64 == 0 && (BN == 128 || BN == 256), "warpgroups of 64 rows, wgmma n of 128 or 256");
  uint16_t* const tiles = lg_ws_tiles(smem);
  uint64_t* const full = lg_ws_full<BM, BN, STAGES>(smem);
  uint64_t* const empty = full + STAGES;
  if (first) {
#pragma unroll
    for (int j = 0; j < BN / 8; j++) acc[0][j] = lg_mma_f32x4{{0.f, 0.f, 0.f, 0.f}};
  }
  lg_mma_f32x4* const d = acc[0];
  const int tiles_k = (int)(K / BK);
  int before = -1; /* the stage of the tile whose mmas are still in flight */
  for (int kt = 0; kt < tiles_k; kt++) {
    lg_mbarrier_wait(full + pipe.stage, pipe.phase);
    lg_wgmma_stage<BM, BN, A_K, B_K, BF16, SLABS>(d, tiles + pipe.stage * STAGE, wm / 4);
    lg_wgmma_wait<1>(); /* the previous tile's group is done */
    if (before >= 0) lg_ws_release<CLUSTER>(empty + before);
    before = pipe.stage;
    lg_ws_next<STAGES>(pipe);
  }
  lg_wgmma_wait<0>();
  if (before >= 0) lg_ws_release<CLUSTER>(empty + before);
}
)BMMA";

namespace {

// A cluster tiling's last template argument (the main loop's functions default it to 1).
std::string cluster_param(const BlockMmaTiling& g) { return g.cluster > 1 ? str(", ", g.cluster) : ""; }

// A specialized tiling's ring state and mbarriers: a thread's `pipe` (zero: the first stage, the
// first round) and lg_ws_setup, which every thread of the block runs once.
std::string specialized_setup(const BlockMmaTiling& g, const std::string& pipe, const std::string& t,
                              const std::string& smem) {
  return str("lg_ws_pipe ", pipe, "{0, 0u};\nlg_ws_setup<", g.bm, ", ", g.bn, ", ", g.stages, ", ",
             g.tma ? 1 : kBlockMmaProducerThreads, cluster_param(g), ">((int)", t, ", (uint16_t*)", smem,
             ");");
}

// A warp-specialized tiling's calls: the setup, the producer's loop over the products (then it
// leaves the kernel), the consumers' (one pipeline across the products, one `pipe` per side). A
// persistent tiling's setup came before the kernel's loop over the tiles (block_mma_persistent_setup),
// and its producer goes on to the next tile instead of leaving (the TMA producer's idle threads leave).
std::string specialized_calls(const BlockMmaArg& arg, DType input, const std::string& acc,
                              const std::vector<BlockMmaOperands>& operands, const std::string& wm,
                              const std::string& t, const std::string& smem) {
  const BlockMmaTiling& g = arg.tiling;
  LG_CHECK(g.wgmma && g.bk == 64 && g.warps_m * 16 == g.bm && g.warps_n == 1,
           "BLOCK_MMA: a specialized tiling it cannot run");
  const std::string shape = str(g.bm, ", ", g.bn, ", ", g.stages), sm = str("(uint16_t*)", smem);
  const std::string pipe = g.persistent ? std::string(kBlockMmaPersistentPipe) : acc + "_pipe";
  std::string out = g.persistent ? "" : "\n" + specialized_setup(g, pipe, t, smem);
  out += str("\nif (", t, " >= ", 2 * g.bm, ") {");
  if (g.persistent) out += str("\n  if (", t, " != ", 2 * g.bm, ") return;");
  std::string consume;
  for (size_t p = 0; p < operands.size(); p++) {
    const BlockMmaProduct& x = arg.products[p];
    const BlockMmaOperands& o = operands[p];
    const bool a_k = x.a_k == 1, b_k = x.b_k == 1;
    const int64_t a_ld = a_k ? x.a_m : x.a_k, b_ld = b_k ? x.b_n : x.b_k;
    const std::string layout = str(shape, ", ", a_k ? "true" : "false", ", ", b_k ? "true" : "false");
    // A TMA tiling reads through the tensor maps LaunchDims::tensor_maps lists: A's, B's per product.
    if (g.tma)
      out += str("\n  lg_ws_produce_tma<", layout, cluster_param(g), ">(&lg_tmap", 2 * p, ", ", o.a_off, ", ",
                 a_ld, "ll, &lg_tmap", 2 * p + 1, ", ", o.b_off, ", ", b_ld, "ll, ", arg.k, "ll, (int)", t,
                 ", ", sm, ", ", pipe, ");");
    else
      out += str("\n  lg_ws_produce<", layout, ">(", o.a, ", ", o.a_off, ", ", a_ld, "ll, ", o.b, ", ",
                 o.b_off, ", ", b_ld, "ll, ", arg.k, "ll, (int)", t, ", ", sm, ", ", pipe, ");");
    consume += str("\nlg_ws_consume<", layout, ", ", input == dtypes::bfloat16 ? "true" : "false", ", ",
                   g.tma ? "true" : "false", cluster_param(g), ">(", arg.k, "ll, (int)", wm, ", ",
                   p == 0 ? "true" : "false", ", ", sm, ", ", acc, ", ", pipe, ");");
  }
  // A cluster's producer waits for the last releases (lg_ws_drain) before it leaves (a persistent
  // one after its last tile: block_mma_persistent_teardown).
  if (g.cluster > 1 && !g.persistent)
    out += str("\n  lg_ws_drain<", shape, ">((int)", t, ", ", sm, ", ", pipe, ");");
  return out + (g.persistent ? "\n  continue;\n}" : "\n  return;\n}") + consume;
}

}  // namespace

std::string block_mma_persistent_setup(const BlockMmaArg& arg, const std::string& t, const std::string& smem) {
  LG_CHECK(arg.tiling.persistent, "BLOCK_MMA: the persistent setup of a tiling that is not persistent");
  return specialized_setup(arg.tiling, kBlockMmaPersistentPipe, t, smem);
}

std::string block_mma_persistent_teardown(const BlockMmaArg& arg, const std::string& t,
                                          const std::string& smem) {
  const BlockMmaTiling& g = arg.tiling;
  LG_CHECK(g.persistent, "BLOCK_MMA: the persistent teardown of a tiling that is not persistent");
  if (g.cluster == 1) return "";
  return str("lg_ws_drain<", g.bm, ", ", g.bn, ", ", g.stages, ">((int)", t, ", (uint16_t*)", smem, ", ",
             kBlockMmaPersistentPipe, ");");
}

std::string block_mma_call(const BlockMmaArg& arg, DType input, const std::string& acc,
                           const std::vector<BlockMmaOperands>& operands, const std::string& wm, const std::string& wn,
                           const std::string& lane, const std::string& t, const std::string& smem) {
  const BlockMmaTiling& g = arg.tiling;
  LG_CHECK(input == dtypes::bfloat16 || input == dtypes::float16, "BLOCK_MMA of ", name(input));
  LG_CHECK(operands.size() == arg.products.size(), "BLOCK_MMA: ", operands.size(), " operand pairs for ", arg.products.size(),
           " products");
  std::string out = str("lg_mma_f32x4 ", acc, "[", g.bm / g.warps_m / 16, "][", g.bn / g.warps_n / 8, "];");
  if (g.specialized) return out + specialized_calls(arg, input, acc, operands, wm, t, smem);
  for (size_t p = 0; p < operands.size(); p++) {
    const BlockMmaProduct& x = arg.products[p];
    const BlockMmaOperands& o = operands[p];
    const bool a_k = x.a_k == 1, b_k = x.b_k == 1;
    const int64_t a_ld = a_k ? x.a_m : x.a_k, b_ld = b_k ? x.b_n : x.b_k;
    if (g.wgmma) {
      LG_CHECK(g.bk == 64 && g.warps_m * 16 == g.bm && g.warps_n == 1, "BLOCK_MMA: a wgmma tiling it cannot run");
      out += str("\nlg_block_wgmma<", g.bm, ", ", g.bn, ", ", g.stages, ", ", a_k ? "true" : "false", ", ", b_k ? "true" : "false", ", ",
                 input == dtypes::bfloat16 ? "true" : "false", ">(",
                 o.a, ", ", o.a_off, ", ", a_ld, "ll, ", o.b, ", ", o.b_off, ", ", b_ld, "ll, ", arg.k, "ll, (int)", wm, ", (int)", t,
                 ", ", p == 0 ? "true" : "false", ", (uint16_t*)", smem, ", ", acc, ");");
      continue;
    }
    out += str("\nlg_block_mma<", g.bm, ", ", g.bn, ", ", g.bk, ", ", g.warps_m, ", ", g.warps_n, ", ", g.stages, ", ",
               a_k ? "true" : "false", ", ", b_k ? "true" : "false", ", ", input == dtypes::bfloat16 ? "true" : "false", ">(",
               o.a, ", ", o.a_off, ", ", a_ld, "ll, ", o.b, ", ", o.b_off, ", ", b_ld, "ll, ", arg.k, "ll, (int)", wm, ", (int)", wn,
               ", (int)", lane, ", (int)", t, ", ", p == 0 ? "true" : "false", ", (uint16_t*)", smem, ", ", acc, ");");
  }
  return out;
}

}  // namespace lg
