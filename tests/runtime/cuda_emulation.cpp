#include "runtime/cuda_emulation.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "codegen/gpu_launch.h"
#include "codegen/render_cuda.h"
#include "codegen/render_gpu.h"

namespace lg::testing_util {
namespace {

// Stands in for the CUDA prelude (codegen/render_cuda.cpp) and the CUDA built-ins the kernel uses.
const char* const kHostShim = R"SHIM(#include <sys/mman.h>
#include <ucontext.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <math.h>
#include <type_traits>
#include <utility>
#include <vector>
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static
// Dynamic shared memory (LG_DYNAMIC_SHARED, codegen/gpu_launch.h): exactly the launch's bytes, right
// before an inaccessible page (a kernel that goes past what its launch asked for faults), and
// 0xff bytes (NaNs) at the start of every block, as uninitialized shared memory may hold anything.
static unsigned char* lg_dynamic_shared;
#define LG_DYNAMIC_SHARED(name) unsigned char* const name = lg_dynamic_shared
// Shared addresses (what __cvta_generic_to_shared gives, in wgmma descriptors) are offsets from the
// start of the page-aligned mapping that holds the dynamic shared memory, so an address is 1024-byte
// aligned exactly when the pointer is, as on a GPU. In a cluster each block has its own mapping
// (lg_cluster_windows[rank]), the same size: an address is an offset in any of them (mapa).
// Static __shared__ arrays are one per launch, so a cluster's blocks would share them: the cluster
// block matmul has none.
static unsigned char* lg_shared_window;
static size_t lg_shared_window_bytes;
static unsigned char* lg_cluster_windows[8];
static unsigned char* lg_cluster_views[8];
static unsigned lg_rank, lg_cluster_size; /* the running block's rank in its cluster; the cluster's blocks */
static unsigned lg_block_threads;
static bool lg_done[1024]; /* per fiber: it ran to its end */
// A block whose threads have all ended has no shared memory left for another block to reach.
static bool lg_block_ended(uint32_t rank) {
  for (unsigned f = rank * lg_block_threads; f < (rank + 1) * lg_block_threads; f++)
    if (!lg_done[f]) return false;
  return true;
}
static inline uint32_t lg_smem_address(const void* p) { return (uint32_t)((const unsigned char*)p - lg_shared_window); }
static inline bool lg_in_shared_window(const void* p) {
  return (const unsigned char*)p >= lg_shared_window && (const unsigned char*)p < lg_shared_window + lg_shared_window_bytes;
}
// The async proxy's view of that memory (what wgmma reads, by descriptor): a second copy of the
// window that a thread's landed cp.async writes reach only at that thread's next
// fence.proxy.async (PTX ISA: an async proxy fence orders earlier writes to shared memory before a
// wgmma's reads of them). A copy in flight makes its 16 bytes 0xff in both views, so a wgmma that
// reads a stage no fence published, or one that a copy is overwriting, computes NaNs.
static unsigned char* lg_async_view;
static std::vector<void*> lg_unfenced[1024]; /* per thread: landed copies not yet fenced */
// The first broken rule of the CUDA protocol the kernel ran into (none: null), read after the launch.
static const char* lg_emulation_error;
extern "C" const char* lg_emulation_error_of_launch() { return lg_emulation_error; }
struct lg_dim3 { unsigned x, y, z; };
// The block's threads (a cluster's blocks' threads) are fibers on this one OS thread (lg_launch
// below): each runs until its next barrier, then the next one runs, so a barrier is a context
// switch rather than a wake-up of hundreds of OS threads (what made the emulated tests slow).
// threadIdx and blockIdx are the running fiber's; lg_me numbers the fibers of the cluster
// (rank * blockDim.x + threadIdx.x) and indexes every per-thread state below.
static lg_dim3 threadIdx, blockIdx, gridDim;
static unsigned lg_me;
static ucontext_t lg_scheduler;
static ucontext_t* lg_fibers;
// A thread at __syncthreads (1) is not resumed until every unfinished thread of its block is at
// it; at the cluster barrier (2, barrier.cluster.arrive then wait), every one of the cluster.
static unsigned char lg_at_barrier[1024];
static inline void __syncthreads() {
  lg_at_barrier[lg_me] = 1;
  swapcontext(&lg_fibers[lg_me], &lg_scheduler);
}
static inline void lg_cluster_sync() {
  lg_at_barrier[lg_me] = 2;
  swapcontext(&lg_fibers[lg_me], &lg_scheduler);
}
static inline uint32_t lg_cluster_rank() { return lg_rank; }
#define __cluster_dims__(x, y, z)
// mbarriers (the warp-specialized block matmul): the 8 bytes in shared memory hold the expected
// arrivals (bits 0-15), the arrivals still missing in this phase (16-31), the number of completed
// phases (32-47) and a mark of initialization (48-63), so a barrier used before mbarrier.init (the
// launch fills shared memory with 0xff) is a protocol error. A wait for parity P returns once the
// phase of parity P that is current or just before has completed (the phase before the first
// counts as completed), else the thread yields to the next (lg_spun) and tries again in the
// scheduler's next round. lg_mbarrier_events counts inits, arrivals and passed waits: a round of
// the block without one, in which no thread reached a barrier or its end, is a deadlock.
static bool lg_spun;
static unsigned long lg_mbarrier_events;
static const uint64_t lg_mbarrier_mark = 0x4c47ull << 48;
// Asynchronous copies a phase also waits for (TMA): bytes expected and not yet landed, and the
// copies that will land them, per mbarrier. The copies land when a thread waits on it. The byte
// count may go below zero while arrivals are missing (another block's multicast may land before
// this block's producer expects its bytes, as the PTX ISA's tx-count allows); a phase whose
// arrivals are all in with more bytes landed than expected is a protocol error.
struct lg_tma_element { unsigned char *at, *view; uint16_t value; };
struct lg_mbarrier_tx { long bytes = 0; std::vector<std::vector<lg_tma_element>> copies; };
static std::map<const void*, lg_mbarrier_tx> lg_tx;
static inline void lg_mbarrier_init(uint64_t* bar, uint32_t count) {
  *bar = lg_mbarrier_mark | (uint64_t)count << 16 | count;
  lg_tx.erase(bar);
  lg_mbarrier_events++;
}
static inline void lg_fence_mbarrier_init() {}
static inline bool lg_mbarrier_valid(const uint64_t* bar) {
  if ((*bar >> 48) == (lg_mbarrier_mark >> 48)) return true;
  if (!lg_emulation_error) lg_emulation_error = "an mbarrier used before mbarrier.init";
  return false;
}
// The phase completes once no arrival is missing and no expected byte is still in flight.
static inline void lg_mbarrier_settle(uint64_t* bar) {
  uint64_t expected = *bar & 0xffff, missing = (*bar >> 16) & 0xffff, phases = (*bar >> 32) & 0xffff;
  if (missing != 0) return;
  if (lg_tx[bar].bytes < 0 && !lg_emulation_error) lg_emulation_error = "TMA copies landed more bytes than the mbarrier expected";
  if (lg_tx[bar].bytes != 0) return;
  *bar = lg_mbarrier_mark | ((phases + 1) & 0xffff) << 32 | expected << 16 | expected;
}
static inline void lg_mbarrier_count(uint64_t* bar) {
  if (!lg_mbarrier_valid(bar)) return;
  if (((*bar >> 16) & 0xffff) == 0) {
    if (!lg_emulation_error) lg_emulation_error = "an mbarrier arrival past its phase's count";
    return;
  }
  *bar -= 1ull << 16;
  lg_mbarrier_settle(bar);
  lg_mbarrier_events++;
}
// An arrival: the arriving thread goes on only in the next round, after the threads behind it in
// this one (a producer that waited on the phase among them), so what it does between its arrival
// and its next wait races with them, as on a GPU.
static inline void lg_mbarrier_arrive(uint64_t* bar) {
  lg_mbarrier_count(bar);
  swapcontext(&lg_fibers[lg_me], &lg_scheduler);
}
static inline void lg_mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  if (!lg_mbarrier_valid(bar)) return;
  lg_tx[bar].bytes += bytes;
  lg_mbarrier_count(bar); /* its copies follow at once (they complete the phase, not the arrival) */
}
// The copies an mbarrier waits for land (both views of shared memory), completing their bytes.
static inline void lg_mbarrier_land(uint64_t* bar) {
  lg_mbarrier_tx& tx = lg_tx[bar];
  for (const std::vector<lg_tma_element>& c : tx.copies) {
    for (const lg_tma_element& e : c) {
      std::memcpy(e.at, &e.value, 2);
      std::memcpy(e.view, &e.value, 2);
    }
    tx.bytes -= 2 * (long)c.size();
  }
  if (!tx.copies.empty()) lg_mbarrier_events++;
  tx.copies.clear();
  lg_mbarrier_settle(bar);
}
static inline void lg_mbarrier_wait(uint64_t* bar, uint32_t parity) {
  if (lg_mbarrier_valid(bar)) lg_mbarrier_land(bar);
  while (lg_mbarrier_valid(bar) && ((*bar >> 32) & 1) == (parity & 1)) {
    lg_spun = true;
    swapcontext(&lg_fibers[lg_me], &lg_scheduler);
    lg_mbarrier_land(bar);
  }
  lg_mbarrier_events++;
}
// Scopes are not modelled: one OS thread runs every fiber, in program order.
static inline void lg_mbarrier_wait_cluster(uint64_t* bar, uint32_t parity) { lg_mbarrier_wait(bar, parity); }
// TMA (a tensor map as emulate_cuda builds it: the buffer, ceil(elements / ld) rows of ld 16-bit
// elements): the box of box0 x box1 elements at column c0, row c1 goes to dst in shared memory,
// row r of the box at r * 128 bytes, each 16-byte chunk at its index XOR (address bits 7-9), the
// 128-byte swizzle (written here from the CUDA documentation, apart from the kernel's layout);
// elements outside the tensor are zeros. Until the copy lands (a wait on bar) the box is 0xff in
// both views. dst must be 1024-byte aligned and a box row 128 bytes.
#define __grid_constant__
struct lg_tensor_map { const unsigned char* base; uint64_t dim0, dim1, row_bytes; uint32_t box0, box1; };
// A cluster block's mbarrier or tile at the same offset in block `rank` (mapa).
template <class T> static T* lg_in_block(T* p, uint32_t rank) {
  return reinterpret_cast<T*>(lg_cluster_windows[rank] + lg_smem_address(p));
}
static inline void lg_mbarrier_arrive_cluster(uint64_t* bar, uint32_t rank) {
  if (rank >= lg_cluster_size || lg_block_ended(rank)) {
    if (!lg_emulation_error) lg_emulation_error = "an mbarrier arrival on a block outside the cluster or one that ended";
    return;
  }
  lg_mbarrier_arrive(lg_in_block(bar, rank));
}
// The box into block `rank` of the cluster, at dst's offset, its bytes counted on bar's there.
static inline void lg_tma_box(void* dst, const lg_tensor_map* map, int c0, int c1, uint64_t* bar, uint32_t rank) {
  if (!lg_in_shared_window(dst) || lg_smem_address(dst) % 1024 != 0 || map->box0 * 2 != 128) {
    if (!lg_emulation_error) lg_emulation_error = "a TMA copy to shared memory not 1024-byte aligned, or a box row not 128 bytes";
    return;
  }
  if (lg_block_ended(rank)) {
    if (!lg_emulation_error) lg_emulation_error = "a TMA copy into a block that ended";
    return;
  }
  if (!lg_mbarrier_valid(lg_in_block(bar, rank))) return;
  std::vector<lg_tma_element> copy;
  for (uint32_t r = 0; r < map->box1; r++)
    for (uint32_t i = 0; i < map->box0; i++) {
      const int64_t x = (int64_t)c0 + i, y = (int64_t)c1 + r;
      uint16_t v = 0;
      if (x >= 0 && y >= 0 && (uint64_t)x < map->dim0 && (uint64_t)y < map->dim1) std::memcpy(&v, map->base + y * map->row_bytes + 2 * x, 2);
      uint32_t at = lg_smem_address(dst) + r * 128 + 2 * i;
      at ^= ((at >> 7) & 7) << 4;
      if (at + 2 > lg_shared_window_bytes) {
        if (!lg_emulation_error) lg_emulation_error = "a TMA box past the shared memory";
        return;
      }
      unsigned char *window = lg_cluster_windows[rank] + at, *view = lg_cluster_views[rank] + at;
      std::memset(window, 0xff, 2);
      std::memset(view, 0xff, 2);
      copy.push_back({window, view, v});
    }
  lg_tx[lg_in_block(bar, rank)].copies.push_back(std::move(copy));
}
static inline void lg_tma_load_2d(void* dst, const lg_tensor_map* map, int c0, int c1, uint64_t* bar) {
  lg_tma_box(dst, map, c0, c1, bar, lg_rank);
}
// Multicast: the same box into every block of the mask (bit r: block r).
static inline void lg_tma_load_2d_multicast(void* dst, const lg_tensor_map* map, int c0, int c1, uint64_t* bar, uint16_t mask) {
  if (mask == 0 || mask >> lg_cluster_size != 0) {
    if (!lg_emulation_error) lg_emulation_error = "a TMA multicast to a block outside the cluster, or to none";
    return;
  }
  for (uint32_t r = 0; r < lg_cluster_size; r++)
    if (mask >> r & 1) lg_tma_box(dst, map, c0, c1, bar, r);
}
// Fibers switch only at barriers, so a read-modify-write is atomic here as it is.
template <class T> static void lg_atomic_add(T* p, T v) { *p += v; }
static inline void lg_fence_proxy_async() {
  for (void* d : lg_unfenced[lg_me]) std::memcpy(lg_async_view + lg_smem_address(d), d, 16);
  lg_unfenced[lg_me].clear();
}
// Every thread of the block calls it together (the renderer only shuffles in uniform code): each
// publishes its value, then reads its xor partner's.
static unsigned char lg_shuffle[1024 * 8];
template <class T> static T __shfl_xor_sync(unsigned, T v, int mask) {
  std::memcpy(lg_shuffle + lg_me * sizeof(T), &v, sizeof(T));
  __syncthreads();
  T r;
  std::memcpy(&r, lg_shuffle + (lg_me ^ (unsigned)mask) * sizeof(T), sizeof(T));
  __syncthreads();
  return r;
}
template <class T, class F> static inline T lg_bit_cast(F f) { T t; std::memcpy(&t, &f, sizeof t); return t; }
template <class I> static inline float __int_as_float(I i) { return lg_bit_cast<float>((uint32_t)i); }
static inline float __uint_as_float(uint32_t u) { return lg_bit_cast<float>(u); }
static inline uint32_t __float_as_uint(float f) { return lg_bit_cast<uint32_t>(f); }
static inline double __longlong_as_double(long long i) { return lg_bit_cast<double>(i); }
static inline long long __double_as_longlong(double d) { return lg_bit_cast<long long>(d); }
// CUDA's vector types (aligned to their size, as in CUDA) for the renderer's vector accesses.
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
static inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
struct alignas(8) uint2 { unsigned x, y; };
static inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
struct alignas(8) float2 { float x, y; };
static inline float2 make_float2(float x, float y) { return {x, y}; }
// Byte i of the result is byte (s >> 4i) & 7 of the 8 bytes y:x (x the low four).
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const uint64_t b = (uint64_t)y << 32 | x;
  unsigned r = 0;
  for (int i = 0; i < 4; i++) r |= (unsigned)((b >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
}
typedef uint16_t lg_bf16_t;
typedef uint16_t lg_f16_t;
static inline float lg_bf16_to_f(lg_bf16_t b) { return __uint_as_float((uint32_t)b << 16); }
static inline lg_bf16_t lg_f_to_bf16(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (lg_bf16_t)((u >> 16) | 0x0040u);
  return (lg_bf16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static inline float lg_f16_to_f(lg_f16_t h) { return (float)lg_bit_cast<_Float16>(h); }
static inline lg_f16_t lg_f_to_f16(float f) { return lg_bit_cast<uint16_t>((_Float16)f); }
static inline unsigned short lg_bf16_bits(lg_bf16_t x) { return x; }
static inline lg_bf16_t lg_bits_bf16(unsigned short b) { return b; }
static inline unsigned short lg_f16_bits(lg_f16_t x) { return x; }
static inline lg_f16_t lg_bits_f16(unsigned short b) { return b; }
// Tensor cores: mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32 for one warp, from
// the PTX ISA's fragment layout (written here on its own, not from codegen/tensor_core.cpp, so a
// wrong layout there fails the tests). Every thread of the block calls it together (the renderer
// issues it in uniform code); each publishes its registers, then builds its warp's A (16x16) and
// B (16x8) and computes its four elements of D. With g = lane / 4, t = lane % 4:
//   A register r (0..3) = elements (2t, 2t+1) + 8*(r / 2) of row g + 8*(r % 2), the first low
//   B register r (0..1) = rows (2t, 2t+1) + 8*r of column g
//   C/D element i (0..3) = row g + 8*(i / 2), column 2t + i % 2
// The sum is the C renderer's (ir/ops.def): the 16 products in k order, then C.
struct lg_mma_f32x4 { float x[4]; };
static inline uint32_t lg_pack_bf16x2(float lo, float hi) { return (uint32_t)lg_f_to_bf16(lo) | ((uint32_t)lg_f_to_bf16(hi) << 16); }
static inline uint32_t lg_pack_f16x2(float lo, float hi) { return (uint32_t)lg_f_to_f16(lo) | ((uint32_t)lg_f_to_f16(hi) << 16); }
static uint32_t lg_mma_regs[1024][6];
template <float (*to_float)(uint16_t)>
static lg_mma_f32x4 lg_mma_warp(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1, float c0,
                                float c1, float c2, float c3) {
  const unsigned me = lg_me, warp = me / 32 * 32;
  const uint32_t mine[6] = {a0, a1, a2, a3, b0, b1};
  std::memcpy(lg_mma_regs[me], mine, sizeof mine);
  __syncthreads();
  float A[16][16], B[16][8];
  for (unsigned lane = 0; lane < 32; lane++) {
    const uint32_t* r = lg_mma_regs[warp + lane];
    unsigned g = lane / 4, t = lane % 4;
    for (unsigned reg = 0; reg < 4; reg++)
      for (unsigned h = 0; h < 2; h++) A[g + 8 * (reg % 2)][2 * t + h + 8 * (reg / 2)] = to_float((uint16_t)(r[reg] >> (16 * h)));
    for (unsigned reg = 0; reg < 2; reg++)
      for (unsigned h = 0; h < 2; h++) B[2 * t + h + 8 * reg][g] = to_float((uint16_t)(r[4 + reg] >> (16 * h)));
  }
  __syncthreads();  // before the registers are published again
  const float c[4] = {c0, c1, c2, c3};
  lg_mma_f32x4 d;
  unsigned g = me % 32 / 4, t = me % 4;
  for (unsigned i = 0; i < 4; i++) {
    unsigned row = g + 8 * (i / 2), col = 2 * t + i % 2;
    float s = A[row][0] * B[0][col];
    for (unsigned k = 1; k < 16; k++) s += A[row][k] * B[k][col];
    d.x[i] = c[i] + s;
  }
  return d;
}
static lg_mma_f32x4 (*const lg_mma_m16n8k16_bf16)(uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, float, float,
                                                 float, float) = lg_mma_warp<lg_bf16_to_f>;
static lg_mma_f32x4 (*const lg_mma_m16n8k16_f16)(uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, float, float,
                                                float, float) = lg_mma_warp<lg_f16_to_f>;
// Asynchronous copies (block-tiled matmuls, codegen/render_block_mma.h; the attention kernels): as
// late as the PTX ISA allows. cp.async reads its 16 source bytes at once but writes them into shared
// memory only when a cp.async.wait_group that covers its group returns; until then the destination
// holds 0xff bytes (a NaN in bf16 and fp16, as is any sum it enters). So a kernel that reads a tile
// before waiting for it, or whose copy overwrites a stage another warp still reads, computes NaNs.
// Copies not yet committed belong to no group: a wait does not complete them.
struct lg_cp_async_copy { void* dst; unsigned char bytes[16]; };
struct lg_cp_async_state { std::vector<lg_cp_async_copy> open; std::vector<std::vector<lg_cp_async_copy>> groups; };
static lg_cp_async_state lg_cp_async[1024]; /* per thread of the block */
static inline void lg_cp_async16(void* s, const void* g) {
  lg_cp_async_copy c{s, {}};
  std::memcpy(c.bytes, g, 16);
  std::memset(s, 0xff, 16);
  if (lg_in_shared_window(s)) std::memset(lg_async_view + lg_smem_address(s), 0xff, 16);
  lg_cp_async[lg_me].open.push_back(c);
}
static inline void lg_cp_async_commit() {
  lg_cp_async_state& a = lg_cp_async[lg_me];
  a.groups.push_back(std::move(a.open));
  a.open.clear();
}
template <int N> static inline void lg_cp_async_wait() {
  std::vector<std::vector<lg_cp_async_copy>>& groups = lg_cp_async[lg_me].groups;
  size_t done = 0;
  for (; groups.size() - done > (size_t)N; done++)
    for (const lg_cp_async_copy& c : groups[done]) {
      std::memcpy(c.dst, c.bytes, 16);
      if (lg_in_shared_window(c.dst)) lg_unfenced[lg_me].push_back(c.dst);
    }
  groups.erase(groups.begin(), groups.begin() + (long)done);
}
// ldmatrix.x4 per warp from the PTX ISA: every thread of
// the block calls it together, each publishes its row address, then lane l of a warp takes from
// matrix i (rows given by lanes 8i..8i+7) register i = elements (l/4, 2(l%4)) and (l/4, 2(l%4)+1),
// or with .trans elements (2(l%4), l/4) and (2(l%4)+1, l/4), the first in the low half.
static const uint16_t* lg_ldmatrix_rows[1024];
static void lg_ldmatrix_warp(uint32_t (&r)[4], const void* p, bool trans) {
  const unsigned me = lg_me, warp = me / 32 * 32, lane = me % 32;
  lg_ldmatrix_rows[me] = static_cast<const uint16_t*>(p);
  __syncthreads();
  for (unsigned i = 0; i < 4; i++) {
    const uint16_t* const* rows = lg_ldmatrix_rows + warp + 8 * i;
    uint16_t lo, hi;
    if (!trans) {
      lo = rows[lane / 4][2 * (lane % 4)];
      hi = rows[lane / 4][2 * (lane % 4) + 1];
    } else {
      lo = rows[2 * (lane % 4)][lane / 4];
      hi = rows[2 * (lane % 4) + 1][lane / 4];
    }
    r[i] = (uint32_t)lo | (uint32_t)hi << 16;
  }
  __syncthreads();  // before the addresses are published again
}
static inline void lg_ldmatrix_x4(uint32_t (&r)[4], const void* p) { lg_ldmatrix_warp(r, p, false); }
static inline void lg_ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) { lg_ldmatrix_warp(r, p, true); }
// Warpgroup mmas (wgmma.mma_async m64nNk16, f32 accumulators, both operands from shared memory by
// descriptor), from the PTX ISA, written apart from render_block_mma.cpp: as late as the ISA
// allows. An mma is only recorded at issue; the lg_wgmma_wait that covers its commit group reads
// the tiles from the async proxy's view (lg_async_view) and updates D then (so a kernel that
// overwrites a tile, or reads D, before that wait computes something else). An mma issued with no
// wgmma.fence since the thread's last wait (when it may have touched D) or the kernel's start is
// a protocol error (lg_emulation_error), as is a descriptor it cannot read. Descriptor: start
// address bits 0-13 (>> 4), leading byte offset bits 16-29 (>> 4), stride byte offset bits 32-45
// (>> 4), swizzle mode bits 62-63; only the 128-byte swizzle (mode 1) is implemented, in the PTX
// ISA's canonical layouts for 16-bit types: element (r, k) (r along m for A, n for B) of the 64 x 16
// A or N x 16 B at, K-major (transpose 0), start + (r / 8) * SBO + (r % 8) * 128 + 2k; MN-major
// (transpose 1), start + (r / 64) * LBO + (k / 8) * SBO + (k % 8) * 128 + 2 (r % 64); then address
// bits 4-6 XOR bits 7-9 (an address past the shared memory is a protocol error). D: this thread
// (warp w of the warpgroup, lane l) holds for each 8 columns j the floats 4j..4j+3 at rows
// 16w + l/4 (+8 for the last two), columns 8j + 2(l%4) (+1 for the odd ones). Each element is its
// 16 products summed in k order, then added to D (the mma.sync order, ir/ops.def BLOCK_MMA).
struct lg_wgmma_op { lg_mma_f32x4* d; uint64_t a, b; int n; bool bf16, ta, tb; };
struct lg_wgmma_state { std::vector<lg_wgmma_op> open; std::vector<std::vector<lg_wgmma_op>> groups; bool fenced = false; };
static lg_wgmma_state lg_wgmma[1024];
static inline void lg_wgmma_fence() { lg_wgmma[lg_me].fenced = true; }
static inline void lg_wgmma_commit() {
  lg_wgmma_state& w = lg_wgmma[lg_me];
  w.groups.push_back(std::move(w.open));
  w.open.clear();
}
static float lg_wgmma_element(uint64_t desc, unsigned r, unsigned k, bool bf16, bool mn_major) {
  if ((desc >> 62) != 1) { /* only the 128-byte swizzle */
    if (!lg_emulation_error) lg_emulation_error = "a wgmma descriptor without the 128-byte swizzle";
    return NAN;
  }
  const uint32_t start = (uint32_t)(desc & 0x3fff) << 4, lbo = (uint32_t)((desc >> 16) & 0x3fff) << 4,
                 sbo = (uint32_t)((desc >> 32) & 0x3fff) << 4;
  uint32_t at = mn_major ? start + (r / 64) * lbo + (k / 8) * sbo + (k % 8) * 128 + 2 * (r % 64)
                         : start + (r / 8) * sbo + (r % 8) * 128 + 2 * k;
  at ^= ((at >> 7) & 7) << 4;
  if (at + 2 > lg_shared_window_bytes) {
    if (!lg_emulation_error) lg_emulation_error = "a wgmma descriptor addresses past the shared memory";
    return NAN;
  }
  uint16_t v;
  std::memcpy(&v, lg_async_view + at, 2);
  return bf16 ? lg_bf16_to_f(v) : lg_f16_to_f(v);
}
static void lg_wgmma_run(const lg_wgmma_op& op, unsigned f) { /* f: the issuing fiber */
  const unsigned w = f % 128 / 32, l = f % 32;
  for (int j = 0; j < op.n / 8; j++)
    for (unsigned e = 0; e < 4; e++) {
      const unsigned row = 16 * w + l / 4 + 8 * (e / 2), col = 8 * j + 2 * (l % 4) + e % 2;
      float s = lg_wgmma_element(op.a, row, 0, op.bf16, op.ta) * lg_wgmma_element(op.b, col, 0, op.bf16, op.tb);
      for (unsigned k = 1; k < 16; k++)
        s += lg_wgmma_element(op.a, row, k, op.bf16, op.ta) * lg_wgmma_element(op.b, col, k, op.bf16, op.tb);
      op.d[j].x[e] += s;
    }
}
// wgmma.wait_group is .aligned across the warpgroup and a group's mmas are the warpgroup's: a wait
// returns in no thread before all 128 of its warpgroup are at it (with the same N), and then every
// one's groups past the N newest are done (so one thread may release a stage for its warpgroup).
static unsigned lg_wg_waiting[16], lg_wg_n[16];
static unsigned long lg_wg_rounds[16];
template <int N> static inline void lg_wgmma_wait() {
  const unsigned g = lg_me / 128;
  const unsigned long round = lg_wg_rounds[g];
  if (lg_wg_waiting[g] == 0) lg_wg_n[g] = N;
  else if (lg_wg_n[g] != (unsigned)N && !lg_emulation_error) lg_emulation_error = "a warpgroup's threads wait for different wgmma groups";
  if (++lg_wg_waiting[g] == 128) {
    for (unsigned f = g * 128; f < g * 128 + 128; f++) {
      std::vector<std::vector<lg_wgmma_op>>& groups = lg_wgmma[f].groups;
      size_t done = 0;
      for (; groups.size() - done > (size_t)N; done++)
        for (const lg_wgmma_op& op : groups[done]) lg_wgmma_run(op, f);
      groups.erase(groups.begin(), groups.begin() + (long)done);
    }
    lg_wg_waiting[g] = 0;
    lg_wg_rounds[g]++;
    lg_mbarrier_events++;
  } else {
    while (lg_wg_rounds[g] == round) {
      lg_spun = true;
      swapcontext(&lg_fibers[lg_me], &lg_scheduler);
    }
  }
  lg_wgmma[lg_me].fenced = false;
}
#define LG_WGMMA_EMU(name, n_, bf16_) \
  template <int TA, int TB> static inline void name(lg_mma_f32x4* d, uint64_t a, uint64_t b) { \
    if (!lg_wgmma[lg_me].fenced && !lg_emulation_error) lg_emulation_error = "a wgmma issued without wgmma.fence after a wait"; \
    lg_wgmma[lg_me].open.push_back({d, a, b, n_, bf16_, TA != 0, TB != 0}); \
  }
LG_WGMMA_EMU(lg_wgmma_m64n128k16_bf16, 128, true)
LG_WGMMA_EMU(lg_wgmma_m64n128k16_f16, 128, false)
LG_WGMMA_EMU(lg_wgmma_m64n256k16_bf16, 256, true)
LG_WGMMA_EMU(lg_wgmma_m64n256k16_f16, 256, false)
)SHIM";

// After the kernel: runs the grid one block (one cluster of blocks) at a time, each block's threads
// as fibers (ucontext) on a 256 KiB stack each, in rounds: every unfinished thread not held at a
// barrier runs to its next barrier, its next failed wait or its end, block 0's thread 0 first, then
// the next round. A cluster's blocks start one after another, each once the ones before it can no
// longer move alone (a GPU starts them together but keeps no block in step with another: a block
// that reaches another's shared memory before that one is set up is a protocol error here). A barrier is met
// (its threads released at the next round's start) when every unfinished thread of its block (of the cluster,
// for the cluster barrier) has reached it. A round in which nothing moves (no thread reached a barrier or its
// end, no mbarrier or warpgroup event) is a deadlock: a protocol error, and the launch stops.
const char* const kLauncher = R"SHIM(
static void** lg_args;
// A pointer argument is the buffer; a tensor map is passed by value from the struct a[i] points to.
template <class P> static P lg_arg(void* a) {
  if constexpr (std::is_pointer_v<P>) return static_cast<P>(a);
  else return *static_cast<const P*>(a);
}
template <class... P, size_t... I>
static void lg_call(void (*f)(P...), void** a, std::index_sequence<I...>) { f(lg_arg<P>(a[I])...); }
template <class... P>
static void lg_run(void (*f)(P...), void** a) { lg_call(f, a, std::index_sequence_for<P...>{}); }
static void lg_fiber() {
  lg_run(lg_kernel, lg_args);
  lg_done[lg_me] = true;  /* then back to the scheduler (uc_link) */
}
// Releases the threads at a barrier of kind `kind` among fibers [first, first + n) once every
// unfinished one is at it; whether it did.
static bool lg_meet(unsigned first, unsigned n, unsigned char kind) {
  bool any = false;
  for (unsigned f = first; f < first + n; f++)
    if (!lg_done[f]) {
      if (lg_at_barrier[f] != kind) return false;
      any = true;
    }
  if (!any) return false;
  for (unsigned f = first; f < first + n; f++) lg_at_barrier[f] = 0;
  return true;
}
extern "C" void lg_launch(unsigned gx, unsigned gy, unsigned bx, size_t shared, void** args, unsigned cluster) {
  const unsigned fibers_n = bx * cluster;
  if (cluster == 0 || cluster > 8 || fibers_n > 1024 || gx % cluster != 0 || bx % 128 != 0 && cluster > 1) {
    lg_emulation_error = "a launch whose clusters the emulation cannot run (at most 8 blocks of 1024 threads in all, the grid a multiple)";
    return;
  }
  const size_t stack = 256 << 10;
  char* stacks = (char*)mmap(nullptr, stack * fibers_n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (stacks == MAP_FAILED) abort();
  const size_t page = 4096, shared_pages = (shared + page - 1) / page * page;
  unsigned char* dyn[8];
  std::vector<std::vector<unsigned char>> async_views(cluster, std::vector<unsigned char>(shared_pages));
  for (unsigned r = 0; r < cluster; r++) {
    dyn[r] = (unsigned char*)mmap(nullptr, shared_pages + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (dyn[r] == MAP_FAILED || mprotect(dyn[r] + shared_pages, page, PROT_NONE) != 0) abort();
    lg_cluster_windows[r] = dyn[r];
    lg_cluster_views[r] = async_views[r].data();
  }
  lg_cluster_size = cluster;
  lg_block_threads = bx;
  lg_shared_window_bytes = shared_pages;
  std::vector<ucontext_t> fibers(fibers_n);
  lg_fibers = fibers.data();
  lg_args = args;
  gridDim = {gx, gy, 1};
  bool deadlocked = false;
  for (unsigned by = 0; by < gy && !deadlocked; by++)
    for (unsigned c = 0; c < gx / cluster && !deadlocked; c++) {
      for (unsigned r = 0; r < cluster; r++) {
        std::memset(dyn[r] + shared_pages - shared, 0xff, shared);
        std::memset(lg_cluster_views[r], 0xff, shared_pages);
      }
      for (unsigned f = 0; f < fibers_n; f++) {
        getcontext(&fibers[f]);
        fibers[f].uc_stack.ss_sp = stacks + stack * f;
        fibers[f].uc_stack.ss_size = stack;
        fibers[f].uc_link = &lg_scheduler;
        makecontext(&fibers[f], lg_fiber, 0);
        lg_done[f] = false;
        lg_at_barrier[f] = 0;
        lg_cp_async[f] = {};
        lg_wgmma[f] = {};
        lg_unfenced[f].clear();
      }
      for (unsigned g = 0; g < 16; g++) lg_wg_waiting[g] = 0;
      lg_tx.clear();
      unsigned started = 1; /* blocks of the cluster running */
      for (;;) {
        bool left = false, moved = false;
        for (unsigned f = 0; f < fibers_n; f++) left = left || !lg_done[f];
        if (!left) break;
        for (unsigned r = 0; r < cluster; r++) moved = lg_meet(r * bx, bx, 1) || moved;
        moved = lg_meet(0, fibers_n, 2) || moved;
        const unsigned long events = lg_mbarrier_events;
        for (unsigned f = 0; f < started * bx; f++)
          if (!lg_done[f] && !lg_at_barrier[f]) {
            lg_me = f;
            lg_rank = f / bx;
            threadIdx = {f % bx, 0, 0};
            blockIdx = {c * cluster + lg_rank, by, 0};
            lg_shared_window = dyn[lg_rank];
            lg_async_view = lg_cluster_views[lg_rank];
            lg_dynamic_shared = dyn[lg_rank] + shared_pages - shared;
            lg_spun = false;
            swapcontext(&lg_scheduler, &fibers[f]);
            moved = moved || !lg_spun;
          }
        if (!moved && events == lg_mbarrier_events && started < cluster) {
          started++;
          continue;
        }
        if (!moved && events == lg_mbarrier_events) {
          if (!lg_emulation_error) lg_emulation_error = "the block deadlocked: its threads wait on mbarriers or a barrier that never complete";
          deadlocked = true;  /* no further blocks */
          break;
        }
      }
    }
  munmap(stacks, stack * fibers_n);
  for (unsigned r = 0; r < cluster; r++) munmap(dyn[r], shared_pages + page);
}
)SHIM";

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

// The shim's lg_tensor_map: what the launch passes for each of LaunchDims::tensor_maps.
struct EmulatedTensorMap {
  const void* base;
  uint64_t dim0, dim1, row_bytes;
  uint32_t box0, box1;
};

void emulate_cuda(const LinearProgram& prog, const std::vector<void*>& buffers, bool warp_shuffle,
                  const std::vector<int64_t>& sizes) {
  std::string source = render_gpu_kernel(prog, kCudaPrelude, warp_shuffle);
  std::string prelude = kCudaPrelude;
  ASSERT_EQ(source.compare(0, prelude.size(), prelude), 0) << "the source starts with the CUDA prelude";
  source = kHostShim + source.substr(prelude.size()) + kLauncher;
  char dir[] = "/tmp/lazygrad-emu-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string d = dir, src = d + "/k.cpp", so = d + "/k.so", err = d + "/err.txt";
  std::ofstream(src) << source;
  std::string cmd = "c++ -std=c++20 -O1 -fno-strict-aliasing -fPIC -shared -pthread -w " + src + " -o " + so + " 2> " + err;
  int rc = std::system(cmd.c_str());
  std::string msg = slurp(err);
  void* lib = rc == 0 ? dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
  std::system(("rm -rf " + d).c_str());
  ASSERT_EQ(rc, 0) << cmd << "\n" << msg << "\n--- source ---\n" << source;
  ASSERT_NE(lib, nullptr) << dlerror();
  auto launch = reinterpret_cast<void (*)(unsigned, unsigned, unsigned, size_t, void**, unsigned)>(
      dlsym(lib, "lg_launch"));
  ASSERT_NE(launch, nullptr);
  auto error = reinterpret_cast<const char* (*)()>(dlsym(lib, "lg_emulation_error_of_launch"));
  ASSERT_NE(error, nullptr);
  LaunchDims dims = gpu_launch_dims(prog);
  cap_persistent_grid(dims, kEmulatedResidentBlocks * dims.cluster);
  std::vector<void*> args = buffers;
  std::vector<EmulatedTensorMap> maps;
  for (const GpuTensorMap& m : dims.tensor_maps) {
    ASSERT_LT(static_cast<size_t>(m.slot), sizes.size())
        << prog.name << ": a TMA kernel needs its buffers' sizes";
    // the arguments the CUDA runtime encodes, held to the driver's requirements as it holds them
    const TensorMapEncoding e = tensor_map_encoding(m, sizes[m.slot]);
    const std::string violation = tensor_map_violation(e, reinterpret_cast<uintptr_t>(buffers[m.slot]));
    ASSERT_EQ(violation, "") << prog.name << ": the tensor map of buffer slot " << m.slot;
    maps.push_back({buffers[m.slot], e.dims[0], e.dims[1], e.row_stride_bytes, e.box[0], e.box[1]});
  }
  for (EmulatedTensorMap& m : maps) args.push_back(&m);
  launch(dims.grid[0], dims.grid[1], dims.block[0], static_cast<size_t>(dims.shared_bytes), args.data(),
         static_cast<unsigned>(dims.cluster));
  const char* broken = error();
  std::string why = broken ? broken : "";
  dlclose(lib);
  EXPECT_EQ(why, "") << prog.name << ": the emulated kernel broke a rule of the CUDA protocol";
}

}  // namespace lg::testing_util
