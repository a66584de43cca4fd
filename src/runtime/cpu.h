#pragma once
// CPU: kernels rendered as C (codegen/render_c.h), compiled by clang (or gcc, or $CC) into a shared
// object, loaded with dlopen from memory, and run on the thread pool split over their outer loop.
// Compiled objects go through the disk cache (runtime/disk_cache.h), keyed by source and compiler.
#include <memory>
#include <string>

#include "runtime/device.h"

namespace lg {

std::unique_ptr<Device> make_cpu_device(const std::string& name);

// The CPU device a compile-check device (runtime/compile_check.h) runs its kernels' C programs on:
// the same, except that very large sources build at -O0 (the values are the same; the build is
// what such a program costs, since most run once).
std::unique_ptr<Device> make_checking_cpu_device(const std::string& name);

// Number of kernels the C compiler built in this process (cache misses).
size_t cpu_compiles();

// Number of times the C compiler ran in this process: one run builds one kernel, or many in one
// unit (Compiler::compile_many, runtime/c_batch.h).
size_t cpu_compiler_runs();

}  // namespace lg
