#pragma once
// Compile-check devices for machines without the GPU (CI): CUDACHECK, HIPCHECK (and HIPRECORD). Every kernel
// takes the GPU path up to the driver: the GPU heuristic's Opts (codegen/heuristic_gpu.h),
// lowering, the GPU renderer and the GPU compiler (CUDA: NVRTC for CUDA_ARCH, default sm_90a;
// HIP: hipcc for gfx90a and gfx940), through the disk cache; a compile error is an internal error.
// The kernel then runs on this machine's CPU: the same linear program (GLOBAL and LOCAL ranges as
// plain loops) rendered as C and compiled by a private CPU device, in host memory. So a test suite
// run with DEVICE=CUDACHECK proves every kernel it makes compiles for CUDA, and checks the values
// the GPU schedule computes. A missing compiler (NVRTC, hipcc) is a user error.
//
// CUDANULL is CUDACHECK without the run (tinygrad's NULL device): every kernel is compiled and
// cached, none is executed, and memory is host mappings never touched, so buffers hold zeros. It
// compiles the kernels of programs far too large to run on the CPU (the llama3.1-8b step) and
// fills the kernel cache for a GPU machine (cubins are keyed by NVRTC version, options and source,
// not by the device). Values read back are meaningless.
#include <cstddef>
#include <memory>
#include <string>

#include "runtime/device.h"

namespace lg {

std::unique_ptr<Device> make_cuda_check_device(const std::string& name);
std::unique_ptr<Device> make_cuda_null_device(const std::string& name);
std::unique_ptr<Device> make_hip_check_device(const std::string& name);
// HIPRECORD: HIPCHECK with the hipcc compile put off; each kernel's HIP source is recorded for a
// batch compile (runtime/hip_batch.h), then it runs on the CPU.
std::unique_ptr<Device> make_hip_record_device(const std::string& name);
// HIPNULL: HIPRECORD without the run (as CUDANULL): records the HIP sources of programs too large to
// run here (the llama3.1-8b step) for the batch compile.
std::unique_ptr<Device> make_hip_null_device(const std::string& name);

// Kernels loaded on compile-check devices in this process, each with a non-empty GPU binary.
size_t compile_checked_kernels();

}  // namespace lg
