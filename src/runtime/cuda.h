#pragma once
// CUDA devices "CUDA" (= "CUDA:0"), "CUDA:1", ...: one per GPU of this machine, driven through the
// driver API loaded at run time (runtime/cuda_api.h). Kernels are rendered as CUDA C++
// (codegen/render_cuda.h) with the GPU heuristic's Opts (codegen/heuristic_gpu.h), compiled by
// NVRTC for the GPU's own architecture (CUDA_ARCH overrides) through the disk cache, loaded as
// modules and launched on the device's stream with gpu_launch_dims' grid and block.
//
// Memory: a caching allocator (freed blocks are kept per size class and reused; when the driver
// runs out, the cache is released and the allocation retried; still out: a user error). Every
// operation of a device is ordered on its one stream; copies to and from the host wait for it.
// Launches are asynchronous; with DEBUG>=1 each launch waits and DEBUG>=2 prints its time measured
// with CUDA events. Copies between two CUDA devices are peer copies (cuMemcpyPeerAsync), not
// staged through host memory by lazygrad.
#include <memory>
#include <string>

#include "runtime/device.h"

namespace lg {

// A missing driver, no GPU, or an index past the last GPU: a user error.
std::unique_ptr<Device> make_cuda_device(const std::string& name);

}  // namespace lg
