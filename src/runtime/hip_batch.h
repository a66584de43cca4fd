#pragma once
// HIP compile checks in batches. hipcc spends about a second per call parsing the HIP headers, so
// checking every kernel of the op harness and the training steps one call each (HIPCHECK) takes
// minutes on two cores. HIPRECORD is HIPCHECK with the compile put off: each kernel's HIP source is
// recorded in the kernel cache folder (<cache_dir>/hip-sources/, content-addressed, written
// atomically) and the kernel runs on the CPU as under HIPCHECK; afterwards
// compile_recorded_hip_sources compiles them all, many kernels per hipcc call, with HIPCHECK's flags
// (gfx90a and gfx940). The tests' CI runs do so (tests/CMakeLists.txt: label hip-record). HIPNULL
// records without running (programs too large for this machine: the llama3.1-8b step).
#include <string>
#include <vector>

namespace lg {

// Records a HIP source for a later batch compile (HIPRECORD). A failed write is a user error
// naming the file.
void record_hip_source(const std::string& source);

// The folder sources are recorded in: <cache_dir>/hip-sources.
std::string hip_record_dir();

// One translation unit of several HIP renderer sources (each starts with the HIP prelude,
// codegen/render_hip.h): the prelude once, then each source's own part (the common helpers and its
// kernel) in a namespace of its own, its entry point lg_kernel renamed lg_kernel_<i> (extern "C"
// names are global). The same code as each source alone: only the names differ. A source that
// does not start with the prelude is an internal error.
std::string hip_batch_source(const std::vector<std::string>& sources);

struct HipBatchResult {
  size_t kernels = 0;  // sources compiled
  size_t batches = 0;  // hipcc calls for them
};

// Compiles every *.hip file in dir with hipcc, up to `batch_size` kernels a call, `jobs` calls at
// once. A batch that fails is compiled again kernel by kernel, and the first kernel that fails is an
// internal error with hipcc's message and its source (HipccCompiler). hipcc missing: a user error.
HipBatchResult compile_recorded_hip_sources(const std::string& dir, size_t batch_size = 128, int jobs = 2);

}  // namespace lg
