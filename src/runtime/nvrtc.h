#pragma once
// NVRTC, CUDA's run-time compiler, loaded with dlopen (runtime/dynlib.h): CUDA C++ from the CUDA
// renderer (codegen/render_cuda.h) -> a cubin for one GPU architecture (sm_XY), or PTX for a
// virtual one (compute_XY), which the driver JIT-compiles when it loads it.
//
// Options: --fmad=false (no contraction into FMA: results match the interpreter's rounding, as
// the CPU's -ffp-contract=off), -std=c++17 (hexadecimal float literals), and -I the toolkit's
// include folder (cuda_fp16.h and cuda_bf16.h are not built into NVRTC). The key (part of every
// disk cache entry) names NVRTC's version, the architecture, the options and the header folder.
// A compile error is an internal error showing NVRTC's log and the source; every other NVRTC
// status is checked at its call, naming the call.
#include <cstddef>
#include <optional>
#include <string>

#include "runtime/device.h"

namespace lg {

class NvrtcCompiler : public Compiler {
 public:
  // arch: "sm_90", "compute_90", ...; a malformed one is a user error. NVRTC or the CUDA headers
  // missing: a user error saying what was tried.
  explicit NvrtcCompiler(std::string arch);
  std::vector<uint8_t> compile(const std::string& source) const override;
  // ptxas's report of the source's kernel (runtime/ptxas_report.h): NVRTC with
  // --ptxas-options=-v, the log kept in the disk cache ("ptxas" entries, the kernels' key), so a
  // kernel is compiled for it once; compile() under PTXAS=1 keeps it as well. None for a virtual
  // architecture (compute_XY: ptxas runs in the driver).
  std::optional<ResourceReport> resource_report(const std::string& source) const override;
  std::string key() const override { return key_; }
  const std::string& arch() const { return arch_; }

 private:
  struct Output {
    std::vector<uint8_t> binary;
    std::string log;  // NVRTC's, ptxas's lines included when asked for
  };
  Output run(const std::string& source, bool ptxas_verbose) const;

  std::string arch_, include_dir_, key_;
  std::vector<std::string> options_;
};

// The architecture to compile for without a GPU to ask: CUDA_ARCH, else sm_90a (an H100 or H200,
// as the CUDA device targets them: sm_90 with its arch-specific instructions, wgmma).
std::string default_cuda_arch();

// Whether NVRTC loads and the CUDA headers are found (tests skip without them); `why` says what
// is missing.
bool nvrtc_available(std::string* why = nullptr);

// Number of NVRTC compilations in this process (disk cache misses).
size_t nvrtc_compiles();

}  // namespace lg
