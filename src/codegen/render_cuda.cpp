#include "codegen/render_cuda.h"

#include "codegen/render_gpu.h"

namespace lg {

// The contract of codegen/render_gpu.h. __float2bfloat16_rn and __float2half_rn round to nearest
// even with correct subnormals and overflow to infinity, as ir/scalar.cpp does; a NaN comes back as
// the canonical NaN (the CPU keeps its sign and payload: both are NaN).
const char* const kCudaPrelude = R"CUDA(#include <cuda_fp16.h>
#include <cuda_bf16.h>
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
typedef __nv_bfloat16 lg_bf16_t;
typedef __half lg_f16_t;
__device__ __forceinline__ float lg_bf16_to_f(lg_bf16_t x) { return __bfloat162float(x); }
__device__ __forceinline__ lg_bf16_t lg_f_to_bf16(float x) { return __float2bfloat16_rn(x); }
__device__ __forceinline__ float lg_f16_to_f(lg_f16_t x) { return __half2float(x); }
__device__ __forceinline__ lg_f16_t lg_f_to_f16(float x) { return __float2half_rn(x); }
__device__ __forceinline__ unsigned short lg_bf16_bits(lg_bf16_t x) { return __bfloat16_as_ushort(x); }
__device__ __forceinline__ lg_bf16_t lg_bits_bf16(unsigned short b) { return __ushort_as_bfloat16(b); }
__device__ __forceinline__ unsigned short lg_f16_bits(lg_f16_t x) { return __half_as_ushort(x); }
__device__ __forceinline__ lg_f16_t lg_bits_f16(unsigned short b) { return __ushort_as_half(b); }
/* Opt ATOMIC's adds (codegen/atomic_scatter.h): float32, float64, int32. */
template <class T> __device__ __forceinline__ void lg_atomic_add(T* p, T v) { atomicAdd(p, v); }
/* Tensor cores (codegen/tensor_core.h; sm_80 and later). Two 16-bit values in one register, the
   first in the low half; one warp-wide mma.sync, called by all 32 lanes of the warp together. */
struct lg_mma_f32x4 { float x[4]; };
__device__ __forceinline__ uint32_t lg_pack_bf16x2(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi); /* one cvt.rn.bf16x2.f32; exact: lo, hi are bf16 */
  return *reinterpret_cast<uint32_t*>(&v);
}
__device__ __forceinline__ uint32_t lg_pack_f16x2(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}
#define LG_MMA_M16N8K16(name, type)                                                                    \
  __device__ __forceinline__ lg_mma_f32x4 name(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,     \
                                               uint32_t b0, uint32_t b1, float c0, float c1, float c2, \
                                               float c3) {                                             \
    lg_mma_f32x4 d;                                                                                    \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." type "." type ".f32 "                        \
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"                 \
                 : "=f"(d.x[0]), "=f"(d.x[1]), "=f"(d.x[2]), "=f"(d.x[3])                              \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2),    \
                   "f"(c3));                                                                           \
    return d;                                                                                          \
  }
LG_MMA_M16N8K16(lg_mma_m16n8k16_bf16, "bf16")
LG_MMA_M16N8K16(lg_mma_m16n8k16_f16, "f16")
/* Block-tiled matmuls (codegen/render_block_mma.h; sm_80 and later): 16-byte asynchronous copies
   from global to shared memory, and ldmatrix: four 8x8 16-bit matrices from shared memory, lanes
   8i..8i+7 giving the row addresses of matrix i (.trans: each matrix transposed). */
__device__ __forceinline__ uint32_t lg_smem_address(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void lg_cp_async16(void* s, const void* g) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(lg_smem_address(s)), "l"(g) : "memory");
}
__device__ __forceinline__ void lg_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void lg_cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }
__device__ __forceinline__ void lg_ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(lg_smem_address(p)) : "memory");
}
__device__ __forceinline__ void lg_ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(lg_smem_address(p)) : "memory");
}
/* Warpgroup mmas (sm_90a; codegen/render_block_mma.h): D (64 x N: this thread's N/2 floats as N/8
   fragments d[0..N/8), each the mma.sync C layout of the warp's 16 rows and 8 columns, indexed as
   fragments: C++ does not define them as one run of floats) += A (64 x 16) B (16 x N), both read
   from shared memory through descriptors (lg_wgmma_desc); TA, TB: 0 the operand is K-major, 1
   MN-major (the instruction's transpose immediates). Asynchronous: issued by the 4 warps of a
   warpgroup together after lg_wgmma_fence, done once lg_wgmma_commit and an lg_wgmma_wait that
   covers it return; until then neither D nor the tiles it reads may be touched. */
__device__ __forceinline__ void lg_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
/* wgmma reads shared memory through the async proxy, cp.async writes it through the generic one:
   each thread fences its completed copies before the barrier after which a wgmma reads them. */
__device__ __forceinline__ void lg_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ void lg_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void lg_wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }
#define LG_WGMMA_F8(i) "+f"(d[(i) / 4].x[0]), "+f"(d[(i) / 4].x[1]), "+f"(d[(i) / 4].x[2]), "+f"(d[(i) / 4].x[3]), \
  "+f"(d[(i) / 4 + 1].x[0]), "+f"(d[(i) / 4 + 1].x[1]), "+f"(d[(i) / 4 + 1].x[2]), "+f"(d[(i) / 4 + 1].x[3])
#define LG_WGMMA_N128(name, type) \
  template <int TA, int TB> __device__ __forceinline__ void name(lg_mma_f32x4* d, uint64_t a, uint64_t b) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." type "." type " {" \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
                 "}, %64, %65, p, 1, 1, %67, %68;\n}\n" \
                 : LG_WGMMA_F8(0), LG_WGMMA_F8(8), LG_WGMMA_F8(16), LG_WGMMA_F8(24), LG_WGMMA_F8(32), LG_WGMMA_F8(40), LG_WGMMA_F8(48), LG_WGMMA_F8(56) \
                 : "l"(a), "l"(b), "r"(1), "n"(TA), "n"(TB)); \
  }
LG_WGMMA_N128(lg_wgmma_m64n128k16_bf16, "bf16")
LG_WGMMA_N128(lg_wgmma_m64n128k16_f16, "f16")
#define LG_WGMMA_N256(name, type) \
  template <int TA, int TB> __device__ __forceinline__ void name(lg_mma_f32x4* d, uint64_t a, uint64_t b) { \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32." type "." type " {" \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
                 "}, %128, %129, p, 1, 1, %131, %132;\n}\n" \
                 : LG_WGMMA_F8(0), LG_WGMMA_F8(8), LG_WGMMA_F8(16), LG_WGMMA_F8(24), LG_WGMMA_F8(32), LG_WGMMA_F8(40), LG_WGMMA_F8(48), LG_WGMMA_F8(56), LG_WGMMA_F8(64), LG_WGMMA_F8(72), LG_WGMMA_F8(80), LG_WGMMA_F8(88), LG_WGMMA_F8(96), LG_WGMMA_F8(104), LG_WGMMA_F8(112), LG_WGMMA_F8(120) \
                 : "l"(a), "l"(b), "r"(1), "n"(TA), "n"(TB)); \
  }
LG_WGMMA_N256(lg_wgmma_m64n256k16_bf16, "bf16")
LG_WGMMA_N256(lg_wgmma_m64n256k16_f16, "f16")
/* mbarriers (sm_90; the warp-specialized block matmul): an 8-byte barrier in shared memory whose
   phase completes after `count` arrivals; a wait is for the completion of the phase of the given
   parity (the phase before the first counts as completed for parity 1). */
__device__ __forceinline__ void lg_mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(lg_smem_address(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void lg_fence_mbarrier_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
__device__ __forceinline__ void lg_mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(lg_smem_address(bar)) : "memory");
}
/* An arrival that also expects `bytes` more of asynchronous copies before the phase completes. */
__device__ __forceinline__ void lg_mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(lg_smem_address(bar)), "r"(bytes) : "memory");
}
/* TMA (sm_90): a CUtensorMap the runtime encodes (codegen/gpu_launch.h: GpuTensorMap), a
   __grid_constant__ kernel parameter; one bulk tensor copy of the box at columns c0.., rows c1..
   into shared memory (1024-byte aligned for the 128-byte swizzle), its bytes completed on bar. */
struct __align__(64) lg_tensor_map { unsigned long long opaque[16]; };
__device__ __forceinline__ void lg_tma_load_2d(void* dst, const lg_tensor_map* map, int c0, int c1, uint64_t* bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               ::"r"(lg_smem_address(dst)), "l"(map), "r"(c0), "r"(c1), "r"(lg_smem_address(bar)) : "memory");
}
/* Thread-block clusters (sm_90; a cluster block matmul, codegen/block_mma.h): this block's rank in
   its cluster; a barrier of every thread of the cluster (each block's writes before it, its
   mbarrier inits included, are seen by the others' threads after it); an arrival on the mbarrier
   at bar's offset in the shared memory of block `rank` (mapa: that block's address of it); a TMA
   copy whose box lands at dst's offset in every block of `mask` (bit r: block r), each block's
   share of the bytes completed on its mbarrier at bar's offset. */
__device__ __forceinline__ uint32_t lg_cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void lg_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ void lg_mbarrier_arrive_cluster(uint64_t* bar, uint32_t rank) {
  asm volatile("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\nmbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\n}\n"
               ::"r"(lg_smem_address(bar)), "r"(rank) : "memory");
}
__device__ __forceinline__ void lg_tma_load_2d_multicast(void* dst, const lg_tensor_map* map, int c0, int c1, uint64_t* bar,
                                                         uint16_t mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%2, %3}], [%4], %5;"
               ::"r"(lg_smem_address(dst)), "l"(map), "r"(c0), "r"(c1), "r"(lg_smem_address(bar)), "h"(mask) : "memory");
}
/* A wait for the phase of the given parity: mbarrier.try_wait until it says done, one loop in PTX
   as CUTLASS writes it (the compiler sees no loop to keep values live across). The _cluster one
   waits at cluster scope: it acquires what threads of other blocks of the cluster released with
   their arrivals (lg_mbarrier_arrive_cluster).
   The watchdog: no wait of a working hand-over lasts more than microseconds (a stage's copies or
   mmas), so one still waiting LG_MBARRIER_WATCHDOG_NS (default 2 s) after its first failed try,
   by the GPU's clock (%globaltimer, nanoseconds), is a deadlock, a bug in the kernel: the thread
   traps, and the launch fails at the next synchronization instead of hanging the process
   (docs/gpu.md "The mbarrier watchdog"). Written into the loop, it costs the waits no registers
   (ptxas: none of the step's warp-specialized kernels spills, as a loop in C++ made two). */
#ifndef LG_MBARRIER_WATCHDOG_NS /* MBARRIER_WATCHDOG_MS sets it through NVRTC (runtime/nvrtc.cpp) */
#define LG_MBARRIER_WATCHDOG_NS 2000000000ull
#endif
#define LG_MBARRIER_WAIT(name, sem_scope) \
  __device__ __forceinline__ void name(uint64_t* bar, uint32_t parity) { \
    asm volatile("{\n.reg .pred p;\n.reg .u64 t0, t;\n" \
                 "mbarrier.try_wait.parity" sem_scope ".shared::cta.b64 p, [%0], %1;\n" \
                 "@p bra LG_DONE;\n" \
                 "mov.u64 t0, %%globaltimer;\n" \
                 "LG_RETRY:\n" \
                 "mbarrier.try_wait.parity" sem_scope ".shared::cta.b64 p, [%0], %1;\n" \
                 "@p bra LG_DONE;\n" \
                 "mov.u64 t, %%globaltimer;\n" \
                 "sub.u64 t, t, t0;\n" \
                 "setp.lt.u64 p, t, %2;\n" \
                 "@p bra LG_RETRY;\n" \
                 "trap;\n" \
                 "LG_DONE:\n}\n" :: "r"(lg_smem_address(bar)), "r"(parity), "n"(LG_MBARRIER_WATCHDOG_NS) : "memory"); \
  }
LG_MBARRIER_WAIT(lg_mbarrier_wait, "")
LG_MBARRIER_WAIT(lg_mbarrier_wait_cluster, ".acquire.cluster")
)CUDA";

std::string CudaRenderer::render(const LinearProgram& prog) const { return render_gpu_kernel(prog, kCudaPrelude, true); }

}  // namespace lg
