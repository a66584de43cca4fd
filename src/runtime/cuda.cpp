#include "runtime/cuda.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <vector>

#include "base/config.h"
#include "base/error.h"
#include "codegen/gpu_launch.h"
#include "codegen/heuristic_gpu.h"
#include "codegen/heuristic_tc.h"
#include "codegen/render_cuda.h"
#include "runtime/beam.h"
#include "runtime/cuda_api.h"
#include "runtime/nvrtc.h"

namespace lg {
namespace {

CUdeviceptr dptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

// The GPU's context and stream; every driver call of the device makes the context current first,
// so any host thread may use the device.
struct CudaContext {
  int index = 0;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  std::string arch;  // sm_XY of the GPU, or CUDA_ARCH
  int shared_optin = 0;  // most shared memory (static and dynamic) a kernel may ask for per block
  int sms = 0;           // streaming multiprocessors
  std::string gpu_name;  // as the driver names it (cuDeviceGetName)

  explicit CudaContext(const std::string& name) {
    size_t colon = name.find(':');
    index = colon == std::string::npos ? 0 : std::stoi(name.substr(colon + 1));
    const CudaApi& a = cuda_api();
    int count = 0;
    cu_check(a.cuDeviceGetCount(&count), "cuDeviceGetCount");
    LG_USER_CHECK(index < count, "device ", name, ": this machine has ", count, " CUDA GPU", count == 1 ? "" : "s",
                  " (CUDA:0..", count - 1, ")");
    cu_check(a.cuDeviceGet(&dev, index), "cuDeviceGet");
    cu_check(a.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    use();
    cu_check(a.cuStreamCreate(&stream, 0), "cuStreamCreate");
    int major = 0, minor = 0;
    cu_check(a.cuDeviceGetAttribute(&major, kCuAttrComputeCapabilityMajor, dev), "cuDeviceGetAttribute");
    cu_check(a.cuDeviceGetAttribute(&minor, kCuAttrComputeCapabilityMinor, dev), "cuDeviceGetAttribute");
    // Compute capability 9.0 (H100, H200) gets its arch-specific target, sm_90a: what wgmma needs.
    arch = !config().cuda_arch.empty() ? config().cuda_arch : str("sm_", major, minor, major == 9 && minor == 0 ? "a" : "");
    cu_check(a.cuDeviceGetAttribute(&shared_optin, kCuAttrMaxSharedMemoryPerBlockOptin, dev), "cuDeviceGetAttribute");
    cu_check(a.cuDeviceGetAttribute(&sms, kCuAttrMultiprocessorCount, dev), "cuDeviceGetAttribute");
    char gpu[256] = {0};
    cu_check(a.cuDeviceGetName(gpu, sizeof gpu - 1, dev), "cuDeviceGetName");
    gpu_name = gpu;
    if (config().debug >= 1)
      std::fprintf(stderr, "%s: %s, compute capability %d.%d, kernels for %s\n", name.c_str(), gpu, major,
                   minor, arch.c_str());
  }
  void use() const { cu_check(cuda_api().cuCtxSetCurrent(ctx), "cuCtxSetCurrent"); }
  void sync() const { cu_check(cuda_api().cuStreamSynchronize(stream), "cuStreamSynchronize"); }
};

// Freed blocks are kept by size class (multiples of 512 bytes) and handed out again; nothing is
// returned to the driver until an allocation fails. free() makes no driver call, so buffers may be
// released at any time (even while their last kernel runs: the stream orders the next use).
class CudaAllocator : public Allocator {
 public:
  explicit CudaAllocator(const CudaContext& c, std::string name) : c_(c), name_(std::move(name)) {}

  void* alloc(size_t bytes) override {
    size_t size = (std::max<size_t>(bytes, 1) + 511) / 512 * 512;
    CUdeviceptr p = take_cached(size);
    if (!p) p = fresh(size);
    return reinterpret_cast<void*>(p);  // not cleared (the Allocator contract; POISON fills it)
  }
  // On the stream: after the work queued before, before the kernels that use the memory.
  void fill(void* p, uint8_t byte, size_t bytes) override {
    c_.use();
    cu_check(cuda_api().cuMemsetD8Async(dptr(p), byte, bytes, c_.stream), "cuMemsetD8Async");
  }
  void free(void* p, size_t bytes) override {
    size_t size = (std::max<size_t>(bytes, 1) + 511) / 512 * 512;
    std::lock_guard lock(mu_);
    cache_[size].push_back(dptr(p));
  }
  void copy_in(void* dst, const void* host, size_t bytes) override {
    if (bytes == 0) return;
    c_.use();
    cu_check(cuda_api().cuMemcpyHtoDAsync(dptr(dst), host, bytes, c_.stream), "cuMemcpyHtoDAsync");
    c_.sync();  // the host memory may go away when this returns
  }
  void copy_out(void* host, const void* src, size_t bytes) override {
    if (bytes == 0) return;
    c_.use();
    cu_check(cuda_api().cuMemcpyDtoHAsync(host, dptr(src), bytes, c_.stream), "cuMemcpyDtoHAsync");
    c_.sync();
  }
  // From another GPU of this process: after the source's queued work, on this device's stream;
  // waits, since the source's memory may be reused once this returns.
  bool copy_from(void* dst, Allocator& src_alloc, const void* src, size_t bytes) override {
    auto* other = dynamic_cast<CudaAllocator*>(&src_alloc);
    if (!other) return false;
    if (bytes == 0) return true;
    other->c_.sync();
    c_.use();
    cu_check(cuda_api().cuMemcpyPeerAsync(dptr(dst), c_.ctx, dptr(src), other->c_.ctx, bytes, c_.stream),
             "cuMemcpyPeerAsync");
    c_.sync();
    return true;
  }

 private:
  const CudaContext& c_;
  std::string name_;
  std::mutex mu_;
  std::map<size_t, std::vector<CUdeviceptr>> cache_;

  CUdeviceptr take_cached(size_t size) {
    std::lock_guard lock(mu_);
    auto it = cache_.find(size);
    if (it == cache_.end() || it->second.empty()) return 0;
    CUdeviceptr p = it->second.back();
    it->second.pop_back();
    return p;
  }
  void release_cache() {
    std::lock_guard lock(mu_);
    c_.sync();  // cached blocks may still be read by queued kernels
    for (auto& [size, blocks] : cache_)
      for (CUdeviceptr p : blocks) cu_check(cuda_api().cuMemFree(p), "cuMemFree");
    cache_.clear();
  }
  CUdeviceptr fresh(size_t size) {
    const CudaApi& a = cuda_api();
    c_.use();
    CUdeviceptr p = 0;
    int s = a.cuMemAlloc(&p, size);
    if (s == kCuErrorOutOfMemory) {
      release_cache();
      s = a.cuMemAlloc(&p, size);
    }
    LG_USER_CHECK(s != kCuErrorOutOfMemory, name_, " is out of memory allocating ", size, " bytes (",
                  cu_error_text(s), "); use a smaller batch, sequence or model (or, for long sequences, ",
                  "FLASH_ATTENTION=1: attention that stores no S x S scores)");
    cu_check(s, "cuMemAlloc");
    return p;
  }
};

// One kernel: its module, its entry point and its launch geometry. The module stays loaded while
// the program lives. It holds a copy of the context's handles, not the device: cached programs
// may outlive their device at exit.
class CudaProgram : public Program {
 public:
  CudaProgram(const CudaContext& c, const LinearProgram& prog, const std::vector<uint8_t>& binary)
      : c_(c), name_(prog.name), dims_(gpu_launch_dims(prog)), slots_(prog.globals.size()) {
    const CudaApi& a = cuda_api();
    c_.use();
    cu_check(a.cuModuleLoadData(&module_, binary.data()), "cuModuleLoadData");
    cu_check(a.cuModuleGetFunction(&fn_, module_, "lg_kernel"), "cuModuleGetFunction");
    allow_dynamic_shared();
    size_persistent_grid();
  }
  // At exit the driver may be shut down already (CUDA_ERROR_DEINITIALIZED from every call, seen on
  // an H200): nothing is checked here, and nothing is unloaded when the context cannot be made current.
  ~CudaProgram() override {
    const CudaApi& a = cuda_api();
    if (a.cuCtxSetCurrent(c_.ctx) == 0) a.cuModuleUnload(module_);
  }

  const LaunchDims* launch_dims() const override { return &dims_; }
  // Asynchronous; with DEBUG>=1 it waits for the kernel and DEBUG>=2 prints its time.
  void run(const KernelArgs& args) override {
    if (config().debug < 1) return launch(args);
    double seconds = timed_run(args);
    if (config().debug >= 2)
      std::fprintf(stderr, "CUDA %-28s grid %u x %u block %u: %10.1f us\n", name_.c_str(), dims_.grid[0], dims_.grid[1],
                   dims_.block[0], seconds * 1e6);
  }

  // The kernel's time between two events on the stream around its launch; waits for it.
  double timed_run(const KernelArgs& args) override {
    const CudaApi& a = cuda_api();
    c_.use();
    CUevent start = nullptr, stop = nullptr;
    cu_check(a.cuEventCreate(&start, 0), "cuEventCreate");
    cu_check(a.cuEventCreate(&stop, 0), "cuEventCreate");
    cu_check(a.cuEventRecord(start, c_.stream), "cuEventRecord");
    launch(args);
    cu_check(a.cuEventRecord(stop, c_.stream), "cuEventRecord");
    cu_check(a.cuEventSynchronize(stop), str("cuEventSynchronize after kernel ", name_).c_str());
    float ms = 0;
    cu_check(a.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    cu_check(a.cuEventDestroy(start), "cuEventDestroy");
    cu_check(a.cuEventDestroy(stop), "cuEventDestroy");
    return ms * 1e-3;
  }

 private:
  void launch(const KernelArgs& args) {
    LG_CHECK(args.buffers.size() == slots_, name_, ": ", args.buffers.size(), " buffers for ", slots_, " slots");
    const CudaApi& a = cuda_api();
    c_.use();
    std::vector<void*> ptrs = args.buffers;  // kernel parameters: the address of each pointer
    std::vector<void*> params;
    for (void*& p : ptrs) {
      // The renderer's 16-byte vector accesses assume it (codegen/gpu_vector_access.h).
      LG_CHECK(reinterpret_cast<uintptr_t>(p) % 16 == 0, name_, ": a kernel argument is not 16-byte aligned");
      params.push_back(&p);
    }
    std::vector<TensorMap> maps(dims_.tensor_maps.size());
    for (size_t i = 0; i < maps.size(); i++) {
      encode_tensor_map(dims_.tensor_maps[i], args, maps[i]);
      params.push_back(&maps[i]);
    }
    cu_check(a.cuLaunchKernel(fn_, dims_.grid[0], dims_.grid[1], dims_.grid[2], dims_.block[0], dims_.block[1],
                              dims_.block[2], static_cast<unsigned>(dims_.shared_bytes), c_.stream, params.data(), nullptr),
             "cuLaunchKernel");
  }

  // A CUtensorMap: 128 opaque bytes, 64-byte aligned, passed by value after the buffers.
  struct alignas(64) TensorMap {
    uint64_t opaque[16];
  };
  // The tensor map of GpuTensorMap m over this launch's buffer (codegen/gpu_launch.h): 16-bit
  // elements, rows of m.ld, boxes of 64 x m.box_rows, the 128-byte swizzle.
  void encode_tensor_map(const GpuTensorMap& m, const KernelArgs& args, TensorMap& out) const {
    LG_CHECK(
        static_cast<size_t>(m.slot) < args.buffers.size() && static_cast<size_t>(m.slot) < args.sizes.size(),
        name_, ": a tensor map of buffer slot ", m.slot, " of ", args.sizes.size());
    const TensorMapEncoding e = tensor_map_encoding(m, args.sizes[m.slot]);
    const std::string violation = tensor_map_violation(e, reinterpret_cast<uintptr_t>(args.buffers[m.slot]));
    LG_CHECK(violation.empty(), name_, ": the tensor map of buffer slot ", m.slot, ": ", violation);
    const uint64_t strides[1] = {e.row_stride_bytes};
    const uint32_t element_strides[2] = {1, 1};
    cu_check(cuda_api().cuTensorMapEncodeTiled(&out, kCuTensorMapDataTypeUint16, 2, args.buffers[m.slot],
                                               e.dims, strides, e.box, element_strides,
                                               kCuTensorMapInterleaveNone, kCuTensorMapSwizzle128B,
                                               kCuTensorMapL2Promotion256B, kCuTensorMapOobFillNone),
             "cuTensorMapEncodeTiled");
  }

  // A kernel asks for more than 48 KiB of dynamic shared memory (codegen/gpu_launch.h) by raising its
  // limit first; static and dynamic together must fit the GPU's opt-in limit.
  void allow_dynamic_shared() {
    if (dims_.shared_bytes == 0) return;
    const CudaApi& a = cuda_api();
    int static_bytes = 0;
    cu_check(a.cuFuncGetAttribute(&static_bytes, kCuFuncAttrSharedSizeBytes, fn_), "cuFuncGetAttribute");
    if (static_bytes + dims_.shared_bytes > c_.shared_optin) a.cuModuleUnload(module_);  // no destructor runs
    LG_USER_CHECK(static_bytes + dims_.shared_bytes <= c_.shared_optin, "kernel ", name_, " needs ",
                  static_bytes + dims_.shared_bytes, " bytes of shared memory per block (", dims_.shared_bytes,
                  " dynamic); this GPU allows ", c_.shared_optin, ": pick a smaller block matmul tiling (BLOCK_MMA_TILE, ",
                  "docs/gpu.md) or BLOCK_MMA=0");
    if (dims_.shared_bytes > kGpuDefaultSharedLimit)
      cu_check(a.cuFuncSetAttribute(fn_, kCuFuncAttrMaxDynamicSharedSizeBytes, static_cast<int>(dims_.shared_bytes)),
               "cuFuncSetAttribute");
  }

  // A persistent kernel (codegen/gpu_launch.h) gets as many blocks as run at once: every SM's. In
  // clusters, as many clusters as the GPU places at once (its SMs come in groups, GPCs, that may
  // not all hold a whole number of clusters: a cluster that waits for a free place would start
  // its walk over the tiles only when another ends its own).
  void size_persistent_grid() {
    if (!dims_.persistent) return;
    int64_t resident = 0;
    if (dims_.cluster == 1) {
      int per_sm = 0;
      cu_check(cuda_api().cuOccupancyMaxActiveBlocksPerMultiprocessor(
                   &per_sm, fn_, static_cast<int>(dims_.threads), static_cast<size_t>(dims_.shared_bytes)),
               "cuOccupancyMaxActiveBlocksPerMultiprocessor");
      resident = int64_t{c_.sms} * std::max(per_sm, 1);
    } else {
      // a kernel with required cluster dimensions is asked only how many clusters fit (whether the
      // per-SM query accepts it, cuda.h does not say)
      const CuLaunchConfig config{.grid_x = dims_.grid[0], .grid_y = 1, .grid_z = 1, .block_x = dims_.block[0],
                                  .block_y = 1, .block_z = 1,
                                  .shared_bytes = static_cast<unsigned>(dims_.shared_bytes), .stream = nullptr,
                                  .attrs = nullptr, .num_attrs = 0};
      int clusters = 0;
      cu_check(cuda_api().cuOccupancyMaxActiveClusters(&clusters, fn_, &config),
               "cuOccupancyMaxActiveClusters");
      resident = int64_t{std::max(clusters, 1)} * dims_.cluster;
    }
    cap_persistent_grid(dims_, resident);
  }

  CudaContext c_;
  std::string name_;
  LaunchDims dims_;
  size_t slots_;
  CUmodule module_ = nullptr;
  CUfunction fn_ = nullptr;
};

class CudaDevice : public Device {
 public:
  explicit CudaDevice(std::string name)
      : name_(std::move(name)), ctx_(name_), alloc_(ctx_, name_), compiler_(ctx_.arch) {}
  const std::string& name() const override { return name_; }
  std::string hardware() const override { return ctx_.gpu_name; }
  Allocator& allocator() override { return alloc_; }
  const Renderer* renderer() const override { return &renderer_; }
  const Compiler* compiler() const override { return &compiler_; }
  std::vector<Opt> heuristic_opts(const NodeRef& ast) const override {
    return gpu_heuristic_opts(ast, GpuKnobs::defaults(cuda_tensor_cores(ctx_.arch), cuda_wgmma(ctx_.arch)));
  }
  std::unique_ptr<BeamSpace> beam_space(const NodeRef& ast) const override {
    GpuKnobs k = GpuKnobs::defaults(cuda_tensor_cores(ctx_.arch), cuda_wgmma(ctx_.arch));
    k.shared_limit = ctx_.shared_optin;  // less the kernel's static arrays, which a block matmul has none of
    return gpu_beam_space(ast, k);
  }
  std::unique_ptr<Program> load(const LinearProgram& prog, const std::string&, const std::vector<uint8_t>& binary) override {
    return std::make_unique<CudaProgram>(ctx_, prog, binary);
  }

 private:
  std::string name_;
  CudaContext ctx_;
  CudaAllocator alloc_;
  CudaRenderer renderer_;
  NvrtcCompiler compiler_;
};

}  // namespace

std::unique_ptr<Device> make_cuda_device(const std::string& name) { return std::make_unique<CudaDevice>(name); }

}  // namespace lg
