// runtime/cuda_api.h spells out the driver API's handles, constants and entry points instead of
// including cuda.h (lazygrad has no build-time dependency on CUDA). Where the toolkit's cuda.h is
// found (CMake: LG_CUDA_INCLUDE_DIR), this test holds them to it: every constant lazygrad passes,
// CUlaunchConfig's layout, and each bound entry point's parameters (their number, and each one's
// size and kind: a wrong enum value or a 32-bit size would not fail on the emulation or the
// compile checks, only on a GPU).
#include <gtest/gtest.h>

#include <cstddef>
#include <tuple>
#include <type_traits>

#include "runtime/cuda_api.h"

#if defined(LG_HAVE_CUDA_H)
// The entry points' types, named before cuda.h's macros rename the _v2 ones (cuMemAlloc is
// cuMemAlloc_v2 after it, CudaApi's member too).
namespace lg::abi {
using cuInit_t = decltype(CudaApi::cuInit);
using cuGetErrorName_t = decltype(CudaApi::cuGetErrorName);
using cuGetErrorString_t = decltype(CudaApi::cuGetErrorString);
using cuDeviceGetCount_t = decltype(CudaApi::cuDeviceGetCount);
using cuDeviceGet_t = decltype(CudaApi::cuDeviceGet);
using cuDeviceGetName_t = decltype(CudaApi::cuDeviceGetName);
using cuDeviceGetAttribute_t = decltype(CudaApi::cuDeviceGetAttribute);
using cuDevicePrimaryCtxRetain_t = decltype(CudaApi::cuDevicePrimaryCtxRetain);
using cuCtxSetCurrent_t = decltype(CudaApi::cuCtxSetCurrent);
using cuMemAlloc_t = decltype(CudaApi::cuMemAlloc);
using cuMemFree_t = decltype(CudaApi::cuMemFree);
using cuMemsetD8Async_t = decltype(CudaApi::cuMemsetD8Async);
using cuMemcpyHtoDAsync_t = decltype(CudaApi::cuMemcpyHtoDAsync);
using cuMemcpyDtoHAsync_t = decltype(CudaApi::cuMemcpyDtoHAsync);
using cuMemcpyPeerAsync_t = decltype(CudaApi::cuMemcpyPeerAsync);
using cuModuleLoadData_t = decltype(CudaApi::cuModuleLoadData);
using cuModuleUnload_t = decltype(CudaApi::cuModuleUnload);
using cuModuleGetFunction_t = decltype(CudaApi::cuModuleGetFunction);
using cuFuncGetAttribute_t = decltype(CudaApi::cuFuncGetAttribute);
using cuFuncSetAttribute_t = decltype(CudaApi::cuFuncSetAttribute);
using cuOccupancyMaxActiveBlocksPerMultiprocessor_t =
    decltype(CudaApi::cuOccupancyMaxActiveBlocksPerMultiprocessor);
using cuOccupancyMaxActiveClusters_t = decltype(CudaApi::cuOccupancyMaxActiveClusters);
using cuLaunchKernel_t = decltype(CudaApi::cuLaunchKernel);
using cuStreamCreate_t = decltype(CudaApi::cuStreamCreate);
using cuStreamSynchronize_t = decltype(CudaApi::cuStreamSynchronize);
using cuEventCreate_t = decltype(CudaApi::cuEventCreate);
using cuEventRecord_t = decltype(CudaApi::cuEventRecord);
using cuEventSynchronize_t = decltype(CudaApi::cuEventSynchronize);
using cuEventElapsedTime_t = decltype(CudaApi::cuEventElapsedTime);
using cuEventDestroy_t = decltype(CudaApi::cuEventDestroy);
using cuTensorMapEncodeTiled_t = decltype(CudaApi::cuTensorMapEncodeTiled);
}  // namespace lg::abi

#include <cuda.h>

namespace lg {
namespace {

// A parameter's kind: a pointer, or an integer or enum, with its size (a handle is a pointer).
template <class T>
constexpr int kind_of() {
  if constexpr (std::is_pointer_v<T>)
    return 1;
  else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>)
    return 2;
  else
    return 3;
}
template <class F>
struct Params;
template <class R, class... A>
struct Params<R (*)(A...)> {
  using type = std::tuple<A...>;
  using result = R;
};
template <class R, class... A>
struct Params<R(A...)> : Params<R (*)(A...)> {};
// Lazygrad's pointer L and cuda.h's function C take the same parameters, as far as the call
// passes them: as many, each of the same size and kind, and return an int-sized status.
template <class L, class C, size_t... I>
constexpr bool same_call_impl(std::index_sequence<I...>) {
  using LP = typename Params<L>::type;
  using CP = typename Params<C>::type;
  return ((sizeof(std::tuple_element_t<I, LP>) == sizeof(std::tuple_element_t<I, CP>) &&
           kind_of<std::tuple_element_t<I, LP>>() == kind_of<std::tuple_element_t<I, CP>>()) &&
          ...);
}
template <class L, class C>
constexpr bool same_call() {
  using LP = typename Params<L>::type;
  using CP = typename Params<C>::type;
  if constexpr (std::tuple_size_v<LP> != std::tuple_size_v<CP>)
    return false;
  else
    return sizeof(typename Params<L>::result) == sizeof(typename Params<C>::result) &&
           same_call_impl<L, C>(std::make_index_sequence<std::tuple_size_v<LP>>{});
}

TEST(CudaAbi, TheConstantsLazygradPassesAreCudaHs) {
  EXPECT_EQ(kCuAttrComputeCapabilityMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  EXPECT_EQ(kCuAttrComputeCapabilityMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  EXPECT_EQ(kCuAttrMaxSharedMemoryPerBlockOptin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  EXPECT_EQ(kCuAttrMultiprocessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  EXPECT_EQ(kCuFuncAttrSharedSizeBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  EXPECT_EQ(kCuFuncAttrMaxDynamicSharedSizeBytes, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  EXPECT_EQ(kCuErrorOutOfMemory, CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(kCuErrorStubLibrary, CUDA_ERROR_STUB_LIBRARY);
  // the TMA tilings' tensor maps (codegen/block_mma.h): 16-bit elements, the 128-byte swizzle the
  // wgmma descriptors name, zeros past the tensor
  EXPECT_EQ(kCuTensorMapDataTypeUint16, CU_TENSOR_MAP_DATA_TYPE_UINT16);
  EXPECT_EQ(kCuTensorMapInterleaveNone, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(kCuTensorMapSwizzle128B, CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(kCuTensorMapL2Promotion256B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  EXPECT_EQ(kCuTensorMapOobFillNone, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  // the kernel-fault statuses cu_kernel_fault_hint names
  for (int s : {CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ASSERT, CUDA_ERROR_HARDWARE_STACK_ERROR,
                CUDA_ERROR_ILLEGAL_INSTRUCTION, CUDA_ERROR_MISALIGNED_ADDRESS,
                CUDA_ERROR_INVALID_ADDRESS_SPACE, CUDA_ERROR_INVALID_PC, CUDA_ERROR_LAUNCH_FAILED})
    EXPECT_NE(cu_kernel_fault_hint(s), "") << s;
  EXPECT_EQ(cu_kernel_fault_hint(CUDA_ERROR_OUT_OF_MEMORY), "");
}

TEST(CudaAbi, CuLaunchConfigHasCudaHsLayout) {
  EXPECT_EQ(sizeof(CuLaunchConfig), sizeof(CUlaunchConfig));
  EXPECT_EQ(offsetof(CuLaunchConfig, grid_x), offsetof(CUlaunchConfig, gridDimX));
  EXPECT_EQ(offsetof(CuLaunchConfig, block_z), offsetof(CUlaunchConfig, blockDimZ));
  EXPECT_EQ(offsetof(CuLaunchConfig, shared_bytes), offsetof(CUlaunchConfig, sharedMemBytes));
  EXPECT_EQ(offsetof(CuLaunchConfig, stream), offsetof(CUlaunchConfig, hStream));
  EXPECT_EQ(offsetof(CuLaunchConfig, attrs), offsetof(CUlaunchConfig, attrs));
  EXPECT_EQ(offsetof(CuLaunchConfig, num_attrs), offsetof(CUlaunchConfig, numAttrs));
}

// Each entry point against the function cuda.h declares under the name runtime/cuda_api.cpp binds
// (cuda.h's macros map the plain names of the _v2 ones to them: cuMemAlloc is cuMemAlloc_v2).
// cuEventElapsedTime is bound as the plain symbol, which CUDA 13's cuda.h maps to _v2 (drivers
// before 12.8 have no _v2); both take these parameters.
#define LG_SAME_CALL(member, cuda_fn)                                                       \
  static_assert(same_call<abi::member##_t, decltype(cuda_fn)>(), #member " does not match " \
                                                                         "cuda.h's " #cuda_fn)
LG_SAME_CALL(cuInit, cuInit);
LG_SAME_CALL(cuGetErrorName, cuGetErrorName);
LG_SAME_CALL(cuGetErrorString, cuGetErrorString);
LG_SAME_CALL(cuDeviceGetCount, cuDeviceGetCount);
LG_SAME_CALL(cuDeviceGet, cuDeviceGet);
LG_SAME_CALL(cuDeviceGetName, cuDeviceGetName);
LG_SAME_CALL(cuDeviceGetAttribute, cuDeviceGetAttribute);
LG_SAME_CALL(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain);
LG_SAME_CALL(cuCtxSetCurrent, cuCtxSetCurrent);
LG_SAME_CALL(cuMemAlloc, cuMemAlloc_v2);
LG_SAME_CALL(cuMemFree, cuMemFree_v2);
LG_SAME_CALL(cuMemsetD8Async, cuMemsetD8Async);
LG_SAME_CALL(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2);
LG_SAME_CALL(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2);
LG_SAME_CALL(cuMemcpyPeerAsync, cuMemcpyPeerAsync);
LG_SAME_CALL(cuModuleLoadData, cuModuleLoadData);
LG_SAME_CALL(cuModuleUnload, cuModuleUnload);
LG_SAME_CALL(cuModuleGetFunction, cuModuleGetFunction);
LG_SAME_CALL(cuFuncGetAttribute, cuFuncGetAttribute);
LG_SAME_CALL(cuFuncSetAttribute, cuFuncSetAttribute);
LG_SAME_CALL(cuOccupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxActiveBlocksPerMultiprocessor);
LG_SAME_CALL(cuOccupancyMaxActiveClusters, cuOccupancyMaxActiveClusters);
LG_SAME_CALL(cuLaunchKernel, cuLaunchKernel);
LG_SAME_CALL(cuStreamCreate, cuStreamCreate);
LG_SAME_CALL(cuStreamSynchronize, cuStreamSynchronize);
LG_SAME_CALL(cuEventCreate, cuEventCreate);
LG_SAME_CALL(cuEventRecord, cuEventRecord);
LG_SAME_CALL(cuEventSynchronize, cuEventSynchronize);
LG_SAME_CALL(cuEventElapsedTime, cuEventElapsedTime_v2);
LG_SAME_CALL(cuEventDestroy, cuEventDestroy_v2);
LG_SAME_CALL(cuTensorMapEncodeTiled, cuTensorMapEncodeTiled);
#undef LG_SAME_CALL

TEST(CudaAbi, TheCheckerTellsADifferentCallApart) {
  // the static_asserts above hold; the checker itself must fail on what they guard against
  static_assert(!same_call<int (*)(int*, unsigned), decltype(cuMemAlloc_v2)>(), "a 32-bit size");
  static_assert(!same_call<int (*)(void*), decltype(cuMemFree_v2)>(), "a pointer for an integer");
  static_assert(!same_call<int (*)(CUdeviceptr*, size_t, int), decltype(cuMemAlloc_v2)>(),
                "an extra parameter");
  SUCCEED();
}

}  // namespace
}  // namespace lg

#else

TEST(CudaAbi, TheConstantsLazygradPassesAreCudaHs) {
  GTEST_SKIP() << "the CUDA toolkit's cuda.h was not found";
}

#endif
