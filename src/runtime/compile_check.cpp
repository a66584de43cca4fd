#include "runtime/compile_check.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "base/error.h"
#include "codegen/gpu_launch.h"
#include "codegen/heuristic_gpu.h"
#include "codegen/heuristic_tc.h"
#include "codegen/render_cuda.h"
#include "codegen/render_hip.h"
#include "runtime/beam.h"
#include "runtime/cpu.h"
#include "runtime/hip_batch.h"
#include "runtime/hipcc.h"
#include "runtime/nvrtc.h"
#include "runtime/program_build.h"

namespace lg {
namespace {

std::atomic<size_t> kernels{0};

// HIPRECORD's compiler: the compile is put off (the source is recorded at load for a batch compile,
// runtime/hip_batch.h); its "binary" says so.
class DeferredHipCompiler : public Compiler {
 public:
  std::vector<uint8_t> compile(const std::string&) const override {
    static const std::string kNote = "HIP source recorded for a batch compile (HIPRECORD)";
    return {kNote.begin(), kNote.end()};
  }
  std::string key() const override { return "hip deferred to a batch compile v1"; }
};

// CUDANULL's kernels: compiled, never run; a timed run takes no time (PROFILE's rows keep their
// costs, with no rates, and the launch the GPU would make).
class NullProgram : public Program {
 public:
  explicit NullProgram(const LinearProgram& prog) : dims_(gpu_launch_dims(prog)) {}
  void run(const KernelArgs&) override {}
  double timed_run(const KernelArgs&) override { return 0; }
  const LaunchDims* launch_dims() const override { return &dims_; }

 private:
  LaunchDims dims_;
};

// CUDANULL's memory: address space only (no kernel runs, so only host uploads touch pages), mapped
// without reserving swap, so the full 8B model's step compiles on a machine with less memory than
// its buffers (a plain mapping of 29 GiB fails on a 24 GiB machine).
class AddressSpaceAllocator : public Allocator {
 public:
  void* alloc(size_t bytes) override {
    void* p = mmap(nullptr, std::max<size_t>(bytes, 1), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    LG_USER_CHECK(p != MAP_FAILED, "CUDANULL: no address space for ", bytes, " bytes");
    return p;
  }
  void free(void* p, size_t bytes) override { munmap(p, std::max<size_t>(bytes, 1)); }
  void copy_in(void* dst, const void* host, size_t bytes) override { std::memcpy(dst, host, bytes); }
  void copy_out(void* host, const void* src, size_t bytes) override { std::memcpy(host, src, bytes); }
  bool host_memory() const override { return true; }
  void fill(void*, uint8_t, size_t) override {}  // never touched: no kernel reads it
};

class CompileCheckDevice : public Device {
 public:
  // tensor_cores: the GPU heuristic may use Opt TC (CUDA for sm_80 and later, codegen/heuristic_tc.h).
  // run: kernels run as C programs on the CPU (CUDACHECK, HIPCHECK), or not at all (CUDANULL).
  // search: BEAM searches the GPU space here (beam_space).
  // record: every kernel's GPU source is recorded for a batch compile (HIPRECORD, runtime/hip_batch.h).
  CompileCheckDevice(std::string name, std::unique_ptr<Renderer> r, std::unique_ptr<Compiler> c, bool tensor_cores,
                     bool run, bool search, bool record = false)
      : name_(std::move(name)), renderer_(std::move(r)), compiler_(std::move(c)), cpu_(make_checking_cpu_device("CPU")),
        tensor_cores_(tensor_cores), run_(run), search_(search), record_(record) {}
  const std::string& name() const override { return name_; }
  Allocator& allocator() override { return run_ ? cpu_->allocator() : null_memory_; }
  const Renderer* renderer() const override { return renderer_.get(); }
  const Compiler* compiler() const override { return compiler_.get(); }
  bool runs_kernels() const override { return run_; }
  std::vector<Opt> heuristic_opts(const NodeRef& ast) const override { return gpu_heuristic_opts(ast, knobs()); }
  // CUDACHECK: the GPU space, each candidate compiled by NVRTC and timed as its C program on the
  // CPU (the times say nothing of a GPU; the search proves every candidate compiles and computes the
  // right values). CUDANULL runs nothing to time; HIPCHECK has no HIP device to tune for.
  std::unique_ptr<BeamSpace> beam_space(const NodeRef& ast) const override {
    if (!run_ || !search_) return nullptr;
    return gpu_beam_space(ast, knobs());
  }
  // The C programs of these kernels compiled together (compile_programs), kept until load takes
  // them: each is rendered and compiled once (also with CACHE=0), not again in load.
  void prepare_loads(const std::vector<const LinearProgram*>& progs) override {
    if (!run_) return;
    std::vector<PendingProgram> pending;
    pending.reserve(progs.size());  // compile_programs holds pointers to them
    std::vector<std::pair<Device*, PendingProgram*>> to_compile;
    for (const LinearProgram* p : progs) {
      pending.push_back(render_program(*cpu_, *p));
      if (pending.back().needs_compile) to_compile.emplace_back(cpu_.get(), &pending.back());
    }
    compile_programs(to_compile);
    std::lock_guard lock(prepared_mu_);
    prepared_.clear();  // what an earlier schedule prepared and did not load (it failed)
    for (PendingProgram& p : pending) prepared_.emplace(p.prog.name, std::move(p));
  }
  // binary: the GPU compiler's output for the GPU source; the program that runs is the C one.
  std::unique_ptr<Program> load(const LinearProgram& prog, const std::string& source, const std::vector<uint8_t>& binary) override {
    LG_CHECK(!binary.empty(), prog.name, ": no GPU binary");
    if (record_) record_hip_source(source);  // on every load: a cached "binary" was recorded elsewhere
    kernels++;
    if (!run_) return std::make_unique<NullProgram>(prog);
    if (std::optional<PendingProgram> p = take_prepared(prog)) return load_program(*cpu_, *p).program;
    return build_program(*cpu_, prog).program;
  }

 private:
  std::string name_;
  std::unique_ptr<Renderer> renderer_;
  std::unique_ptr<Compiler> compiler_;
  std::unique_ptr<Device> cpu_;  // its own CPU device (allocator, C renderer, C compiler)
  // The GPU heuristic's knobs: CUDA for sm_90a (the default CUDA_ARCH) models an H200, which has
  // wgmma and gives a block 227 KiB of shared memory.
  GpuKnobs knobs() const {
    const bool wgmma = tensor_cores_ && cuda_wgmma(default_cuda_arch());  // tensor_cores_: CUDA only
    GpuKnobs k = GpuKnobs::defaults(tensor_cores_, wgmma);
    if (wgmma) k.shared_limit = 227 << 10;
    return k;
  }

  // The prepared C program of prog, if prepare_loads made one: the same name, slots and ops (the
  // IR is hash-consed, and the entry holds its ops, so equal pointers are the same nodes).
  std::optional<PendingProgram> take_prepared(const LinearProgram& prog) {
    std::lock_guard lock(prepared_mu_);
    auto [begin, end] = prepared_.equal_range(prog.name);
    for (auto it = begin; it != end; ++it) {
      if (it->second.prog.globals != prog.globals || it->second.prog.ops != prog.ops) continue;
      PendingProgram p = std::move(it->second);
      prepared_.erase(it);
      return p;
    }
    return std::nullopt;
  }

  bool tensor_cores_;
  bool run_, search_, record_;
  AddressSpaceAllocator null_memory_;
  std::mutex prepared_mu_;
  std::multimap<std::string, PendingProgram> prepared_;  // by kernel name
};

}  // namespace

// CUDA for CUDA_ARCH (default sm_90a): kernels run on the CPU (CUDACHECK) or not at all (CUDANULL).
static std::unique_ptr<Device> make_cuda_compile_device(const std::string& name, bool run) {
  return std::make_unique<CompileCheckDevice>(name, std::make_unique<CudaRenderer>(),
                                              std::make_unique<NvrtcCompiler>(default_cuda_arch()),
                                              cuda_tensor_cores(default_cuda_arch()), run, run);
}

std::unique_ptr<Device> make_cuda_check_device(const std::string& name) { return make_cuda_compile_device(name, true); }

std::unique_ptr<Device> make_cuda_null_device(const std::string& name) { return make_cuda_compile_device(name, false); }

std::unique_ptr<Device> make_hip_check_device(const std::string& name) {
  return std::make_unique<CompileCheckDevice>(name, std::make_unique<HipRenderer>(), std::make_unique<HipccCompiler>(), false, true, false);
}

// HIPRECORD runs its kernels on the CPU; HIPNULL runs none (CUDANULL's memory).
static std::unique_ptr<Device> make_hip_recording_device(const std::string& name, bool run) {
  return std::make_unique<CompileCheckDevice>(name, std::make_unique<HipRenderer>(), std::make_unique<DeferredHipCompiler>(), false,
                                              run, false, true);
}

std::unique_ptr<Device> make_hip_record_device(const std::string& name) { return make_hip_recording_device(name, true); }

std::unique_ptr<Device> make_hip_null_device(const std::string& name) { return make_hip_recording_device(name, false); }

size_t compile_checked_kernels() { return kernels.load(); }

}  // namespace lg
