#pragma once
// The CUDA driver API, loaded at run time from libcuda.so.1 (runtime/dynlib.h): lazygrad has no
// link-time dependency on CUDA. Only the entry points lazygrad uses, with cuda.h's signatures and
// the handle types spelled out (CUresult is an int, 0 = CUDA_SUCCESS). Names with _v2 are the
// symbols cuda.h maps the plain names to.
#include <cstddef>
#include <cstdint>
#include <string>

namespace lg {

using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;

// cuDeviceGetAttribute attributes lazygrad reads (values from cuda.h).
inline constexpr int kCuAttrComputeCapabilityMajor = 75;
inline constexpr int kCuAttrComputeCapabilityMinor = 76;
inline constexpr int kCuAttrMaxSharedMemoryPerBlockOptin = 97;
inline constexpr int kCuAttrMultiprocessorCount = 16;
// cuFuncGetAttribute / cuFuncSetAttribute attributes.
inline constexpr int kCuFuncAttrSharedSizeBytes = 1;            // the kernel's static __shared__ bytes
inline constexpr int kCuFuncAttrMaxDynamicSharedSizeBytes = 8;  // most dynamic shared memory a launch may ask
inline constexpr int kCuErrorOutOfMemory = 2;
inline constexpr int kCuErrorStubLibrary = 34;

// CUlaunchConfig (cuda.h), for cuOccupancyMaxActiveClusters: lazygrad passes no attributes (a
// cluster kernel's __cluster_dims__ gives its cluster).
struct CuLaunchConfig {
  unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
  CUstream stream;
  void* attrs;
  unsigned num_attrs;
};
static_assert(sizeof(CuLaunchConfig) == 56, "CUlaunchConfig's layout (cuda.h) on a 64-bit host");

struct CudaApi {
  int (*cuInit)(unsigned);
  int (*cuGetErrorName)(int, const char**);
  int (*cuGetErrorString)(int, const char**);
  int (*cuDeviceGetCount)(int*);
  int (*cuDeviceGet)(CUdevice*, int);
  int (*cuDeviceGetName)(char*, int, CUdevice);
  int (*cuDeviceGetAttribute)(int*, int, CUdevice);
  int (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  int (*cuCtxSetCurrent)(CUcontext);
  int (*cuMemAlloc)(CUdeviceptr*, size_t);                         // cuMemAlloc_v2
  int (*cuMemFree)(CUdeviceptr);                                   // cuMemFree_v2
  int (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  int (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);  // _v2
  int (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);        // _v2
  int (*cuMemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
  int (*cuModuleLoadData)(CUmodule*, const void*);
  int (*cuModuleUnload)(CUmodule);
  int (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  int (*cuFuncGetAttribute)(int*, int, CUfunction);
  int (*cuFuncSetAttribute)(CUfunction, int, int);
  // (numBlocks, func, blockSize, dynamicSMemSize): how many blocks of func fit on one SM at once.
  int (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, CUfunction, int, size_t);
  // (numClusters, func, config): how many clusters of func the whole GPU runs at once.
  int (*cuOccupancyMaxActiveClusters)(int*, CUfunction, const CuLaunchConfig*);
  int (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                        void**, void**);
  int (*cuStreamCreate)(CUstream*, unsigned);
  int (*cuStreamSynchronize)(CUstream);
  int (*cuEventCreate)(CUevent*, unsigned);
  int (*cuEventRecord)(CUevent, CUstream);
  int (*cuEventSynchronize)(CUevent);
  int (*cuEventElapsedTime)(float*, CUevent, CUevent);
  int (*cuEventDestroy)(CUevent);  // cuEventDestroy_v2
  // (CUtensorMap*, CUtensorMapDataType, rank, globalAddress, globalDim, globalStrides, boxDim,
  // elementStrides, interleave, swizzle, l2Promotion, oobFill): the enums are ints here.
  int (*cuTensorMapEncodeTiled)(void*, int, uint32_t, void*, const uint64_t*, const uint64_t*,
                                const uint32_t*, const uint32_t*, int, int, int, int);
};
// cuTensorMapEncodeTiled's enum values lazygrad passes (cuda.h).
inline constexpr int kCuTensorMapDataTypeUint16 = 1;
inline constexpr int kCuTensorMapInterleaveNone = 0;
inline constexpr int kCuTensorMapSwizzle128B = 3;
inline constexpr int kCuTensorMapL2Promotion256B = 3;
inline constexpr int kCuTensorMapOobFillNone = 0;

// The driver, loaded and initialized (cuInit) on first use. No libcuda.so.1, or cuInit failing
// (no GPU, a driver/kernel-module mismatch): a user error that says so.
const CudaApi& cuda_api();

// Whether the driver loads and initializes; `why` says what failed. Never throws.
bool cuda_driver_available(std::string* why = nullptr);

// Aborts (internal error) naming `call` and the driver's error name and text when status != 0,
// and for a status a faulting kernel leaves (cu_kernel_fault_hint) what to do next.
void cu_check(int status, const char* call);
// For the statuses a kernel that faults or traps leaves on its context (CUDA_ERROR_ILLEGAL_ADDRESS,
// _ASSERT, _HARDWARE_STACK_ERROR, _ILLEGAL_INSTRUCTION, _MISALIGNED_ADDRESS, _INVALID_ADDRESS_SPACE,
// _INVALID_PC, _LAUNCH_FAILED): that the failing launch may be any since the last synchronization,
// how to name it (DEBUG=1), and that an mbarrier wait past its watchdog traps (docs/gpu.md); ""
// for any other status.
std::string cu_kernel_fault_hint(int status);
// The driver's name and text for a status ("CUDA_ERROR_OUT_OF_MEMORY: out of memory").
std::string cu_error_text(int status);

}  // namespace lg
