#include "runtime/compile_check.h"

#include <atomic>

#include "base/error.h"
#include "codegen/heuristic_gpu.h"
#include "codegen/heuristic_tc.h"
#include "codegen/render_cuda.h"
#include "codegen/render_hip.h"
#include "runtime/cpu.h"
#include "runtime/hipcc.h"
#include "runtime/nvrtc.h"
#include "runtime/program_build.h"

namespace lg {
namespace {

std::atomic<size_t> kernels{0};

// CUDANULL's kernels: compiled, never run.
class NullProgram : public Program {
 public:
  void run(const KernelArgs&) override {}
};

class CompileCheckDevice : public Device {
 public:
  // tensor_cores: the GPU heuristic may use Opt TC (CUDA for sm_80 and later, codegen/heuristic_tc.h).
  // run: kernels run as C programs on the CPU (CUDACHECK, HIPCHECK), or not at all (CUDANULL).
  CompileCheckDevice(std::string name, std::unique_ptr<Renderer> r, std::unique_ptr<Compiler> c, bool tensor_cores,
                     bool run = true)
      : name_(std::move(name)), renderer_(std::move(r)), compiler_(std::move(c)), cpu_(make_cpu_device("CPU")),
        tensor_cores_(tensor_cores), run_(run) {}
  const std::string& name() const override { return name_; }
  Allocator& allocator() override { return cpu_->allocator(); }
  const Renderer* renderer() const override { return renderer_.get(); }
  const Compiler* compiler() const override { return compiler_.get(); }
  std::vector<Opt> heuristic_opts(const NodeRef& ast) const override { return gpu_heuristic_opts(ast, tensor_cores_); }
  bool beam_supported() const override { return false; }  // no GPU Opts in the search, no GPU timing
  // binary: the GPU compiler's output for the GPU source; the program that runs is the C one.
  std::unique_ptr<Program> load(const LinearProgram& prog, const std::string&, const std::vector<uint8_t>& binary) override {
    LG_CHECK(!binary.empty(), prog.name, ": no GPU binary");
    kernels++;
    if (!run_) return std::make_unique<NullProgram>();
    return build_program(*cpu_, prog).program;
  }

 private:
  std::string name_;
  std::unique_ptr<Renderer> renderer_;
  std::unique_ptr<Compiler> compiler_;
  std::unique_ptr<Device> cpu_;  // its own CPU device (allocator, C renderer, C compiler)
  bool tensor_cores_;
  bool run_;
};

}  // namespace

// CUDA for CUDA_ARCH (default sm_90): kernels run on the CPU (CUDACHECK) or not at all (CUDANULL).
static std::unique_ptr<Device> make_cuda_compile_device(const std::string& name, bool run) {
  return std::make_unique<CompileCheckDevice>(name, std::make_unique<CudaRenderer>(),
                                              std::make_unique<NvrtcCompiler>(default_cuda_arch()),
                                              cuda_tensor_cores(default_cuda_arch()), run);
}

std::unique_ptr<Device> make_cuda_check_device(const std::string& name) { return make_cuda_compile_device(name, true); }

std::unique_ptr<Device> make_cuda_null_device(const std::string& name) { return make_cuda_compile_device(name, false); }

std::unique_ptr<Device> make_hip_check_device(const std::string& name) {
  return std::make_unique<CompileCheckDevice>(name, std::make_unique<HipRenderer>(), std::make_unique<HipccCompiler>(), false);
}

size_t compile_checked_kernels() { return kernels.load(); }

}  // namespace lg
