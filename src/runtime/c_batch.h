#pragma once
// Several rendered C kernels in one translation unit, so that one compiler process builds them.
// Starting clang 14 costs about 0.09 s of a small kernel's 0.12 s build on this machine (loading
// libLLVM); 83 kernels of a tiny Llama step took 14.4 s one file each and 3.7 s as one file.
// CCompiler::compile_many (runtime/cpu.cpp) compiles such a unit once, then links each kernel's
// shared object out of its object file (only that kernel's code, exported as lg_kernel).
#include <string>
#include <vector>

namespace lg {

// A source the C renderer made (codegen/render_c.h) with nothing between the shared prelude and its
// kernel: such sources can share one unit. A kernel with its own helpers (the hand-written
// attention's functions) is not: it builds alone.
bool c_batchable(const std::string& source);

// One unit of batchable sources: the prelude once, then each source's own part (a comment with its
// name and its function), the function lg_kernel renamed lg_kernel_<i>. Each function's code is
// what it was alone; only its name differs. A source that is not batchable is an internal error.
std::string c_batch_source(const std::vector<std::string>& sources);

// The name of source i's function in c_batch_source's unit.
std::string c_batch_entry(size_t i);

}  // namespace lg
