#include "runtime/cuda_api.h"

#include <algorithm>
#include <iterator>
#include <memory>

#include "base/error.h"
#include "runtime/dynlib.h"

namespace lg {
namespace {

struct Loaded {
  std::unique_ptr<DynLib> lib;
  CudaApi api{};
  std::string error;  // empty: usable
};

const Loaded& loaded() {
  // Never destroyed: programs and buffers released during static destruction still call into
  // the library, so it stays loaded until the process ends.
  static const Loaded& l = *new Loaded([] {
    Loaded x;
    x.lib = std::make_unique<DynLib>(std::vector<std::string>{"libcuda.so.1"});
    if (!x.lib->loaded()) {
      x.error = str("cannot load the NVIDIA driver library libcuda.so.1 (", x.lib->why(), "): no NVIDIA driver on this machine");
      return x;
    }
    CudaApi& a = x.api;
    const DynLib& d = *x.lib;
    try {
      d.bind(a.cuInit, "cuInit");
      d.bind(a.cuGetErrorName, "cuGetErrorName");
      d.bind(a.cuGetErrorString, "cuGetErrorString");
      d.bind(a.cuDeviceGetCount, "cuDeviceGetCount");
      d.bind(a.cuDeviceGet, "cuDeviceGet");
      d.bind(a.cuDeviceGetName, "cuDeviceGetName");
      d.bind(a.cuDeviceGetAttribute, "cuDeviceGetAttribute");
      d.bind(a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
      d.bind(a.cuCtxSetCurrent, "cuCtxSetCurrent");
      d.bind(a.cuMemAlloc, "cuMemAlloc_v2");
      d.bind(a.cuMemFree, "cuMemFree_v2");
      d.bind(a.cuMemsetD8Async, "cuMemsetD8Async");
      d.bind(a.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
      d.bind(a.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
      d.bind(a.cuMemcpyPeerAsync, "cuMemcpyPeerAsync");
      d.bind(a.cuModuleLoadData, "cuModuleLoadData");
      d.bind(a.cuModuleUnload, "cuModuleUnload");
      d.bind(a.cuModuleGetFunction, "cuModuleGetFunction");
      d.bind(a.cuFuncGetAttribute, "cuFuncGetAttribute");
      d.bind(a.cuFuncSetAttribute, "cuFuncSetAttribute");
      d.bind(a.cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
      d.bind(a.cuOccupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters");
      d.bind(a.cuLaunchKernel, "cuLaunchKernel");
      d.bind(a.cuStreamCreate, "cuStreamCreate");
      d.bind(a.cuStreamSynchronize, "cuStreamSynchronize");
      d.bind(a.cuEventCreate, "cuEventCreate");
      d.bind(a.cuEventRecord, "cuEventRecord");
      d.bind(a.cuEventSynchronize, "cuEventSynchronize");
      // the plain symbol: CUDA 13's cuda.h maps the name to _v2, which drivers before 12.8 lack
      d.bind(a.cuEventElapsedTime, "cuEventElapsedTime");
      d.bind(a.cuEventDestroy, "cuEventDestroy_v2");
      d.bind(a.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
    } catch (const Error& e) {
      x.error = e.what();
      return x;
    }
    if (int s = a.cuInit(0); s == kCuErrorStubLibrary) {
      x.error = str("cuInit failed (CUDA_ERROR_STUB_LIBRARY, ", s, "): the CUDA toolkit's stub libcuda.so.1 was ",
                    "loaded, not a driver (no NVIDIA driver here, or lib64/stubs is on LD_LIBRARY_PATH)");
    } else if (s != 0) {
      const char* name = nullptr;
      a.cuGetErrorName(s, &name);
      x.error = str("cuInit failed (", name ? name : "unknown error", ", ", s,
                    "): no usable NVIDIA GPU, or the driver does not match its kernel module");
    }
    return x;
  }());
  return l;
}

}  // namespace

const CudaApi& cuda_api() {
  const Loaded& l = loaded();
  LG_USER_CHECK(l.error.empty(), "CUDA: ", l.error);
  return l.api;
}

bool cuda_driver_available(std::string* why) {
  const Loaded& l = loaded();
  if (why) *why = l.error;
  return l.error.empty();
}

std::string cu_error_text(int status) {
  const CudaApi& a = loaded().api;
  const char *name = nullptr, *text = nullptr;
  if (a.cuGetErrorName) a.cuGetErrorName(status, &name);
  if (a.cuGetErrorString) a.cuGetErrorString(status, &text);
  return str(name ? name : "CUDA error", ": ", text ? text : "no description", " (", status, ")");
}

std::string cu_kernel_fault_hint(int status) {
  // cuda.h's CUresult values of a kernel's fault: the context is unusable after any of them
  constexpr int kFaults[] = {700, 710, 714, 715, 716, 717, 718, 719};
  if (std::find(std::begin(kFaults), std::end(kFaults), status) == std::end(kFaults)) return "";
  return "; a kernel faulted: the failing launch is any since the last synchronization (DEBUG=1 waits "
         "for each launch and names the kernel that fails). A warp-specialized matmul "
         "(BLOCK_MMA_TILE 12-16) traps when one of its mbarrier waits passes the watchdog "
         "(MBARRIER_WATCHDOG_MS, default 2000), a "
         "deadlock in its hand-over (docs/gpu.md \"The mbarrier watchdog\"); without BLOCK_MMA_TILE "
         "and BEAM no matmul takes those tilings";
}

void cu_check(int status, const char* call) {
  if (status != 0)
    internal_error(__FILE__, __LINE__,
                   str(call, " failed: ", cu_error_text(status), cu_kernel_fault_hint(status)));
}

}  // namespace lg
