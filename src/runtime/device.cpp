#include "runtime/device.h"

#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

#include "base/config.h"
#include "base/error.h"
#include "runtime/beam.h"
#include "runtime/compile_check.h"
#include "runtime/cpu.h"
#include "runtime/cuda.h"
#include "runtime/interp.h"
#include "runtime/transport.h"

namespace lg {

void Allocator::fill(void* p, uint8_t byte, size_t bytes) {
  LG_CHECK(host_memory(), "this allocator's memory cannot be filled from the host");
  std::memset(p, byte, bytes);
}

void* allocate(Allocator& a, size_t bytes) {
  void* p = a.alloc(bytes);
  if (config().poison && bytes > 0) a.fill(p, kPoisonByte, bytes);
  return p;
}

double Program::timed_run(const KernelArgs& args) {
  auto t0 = std::chrono::steady_clock::now();
  run(args);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::unique_ptr<BeamSpace> Device::beam_space(const NodeRef& ast) const { return append_beam_space(ast, heuristic_opts(ast)); }

namespace {
struct Kind {
  const char* name;
  std::unique_ptr<Device> (*create)(const std::string& full_name);
  const char* about;
  bool gpu;  // a GPU or a compile check of one (is_gpu_device)
};
// Every backend of this build, one line each.
const Kind kKinds[] = {
    {"INTERP", make_interp_device, "reference interpreter of linear programs (scalar C++)", false},
    {"CPU", make_cpu_device, "C kernels compiled by clang into shared objects, run on a thread pool", false},
    {"CUDA", make_cuda_device, "NVIDIA GPUs (CUDA:0..n-1): CUDA C kernels compiled by NVRTC, driver API loaded at run time", true},
    {"CUDACHECK", make_cuda_check_device, "CUDA compile check without a GPU: every kernel through NVRTC, then run on the CPU", true},
    {"CUDANULL", make_cuda_null_device, "CUDA compile only: every kernel through NVRTC into the cache, never run (values meaningless)", true},
    {"HIPCHECK", make_hip_check_device, "HIP compile check: every kernel through hipcc (gfx90a, gfx940), then run on the CPU", true},
    {"HIPRECORD", make_hip_record_device, "HIPCHECK with the hipcc compiles batched afterwards: sources recorded, kernels run on the CPU", true},
    {"HIPNULL", make_hip_null_device, "HIP sources recorded for a batched hipcc compile, never run (values meaningless)", true},
};
// Memory of another process: never allocated or touched here (kernels on it do not run; copies to
// and from it go through the transport).
class RemoteAllocator : public Allocator {
 public:
  explicit RemoteAllocator(std::string name) : name_(std::move(name)) {}
  void* alloc(size_t) override { return nullptr; }
  void free(void*, size_t) override {}
  void fill(void*, uint8_t, size_t) override {}
  void copy_in(void*, const void*, size_t) override { fail(); }
  void copy_out(void*, const void*, size_t) override { fail(); }

 private:
  [[noreturn]] void fail() const {
    user_error("device ", name_, " belongs to another process of this distributed run: its values can be read only there");
  }
  std::string name_;
};

// A device of process `rank` as seen from this one.
class RemoteDevice : public Device {
 public:
  RemoteDevice(std::string name, int rank) : name_(std::move(name)), rank_(rank), alloc_(name_) {}
  const std::string& name() const override { return name_; }
  int remote_rank() const override { return rank_; }
  Allocator& allocator() override { return alloc_; }
  const Renderer* renderer() const override { return nullptr; }
  const Compiler* compiler() const override { return nullptr; }
  std::unique_ptr<Program> load(const LinearProgram&, const std::string&, const std::vector<uint8_t>&) override {
    internal_error(__FILE__, __LINE__, str("a kernel of ", name_, " was loaded in process ", process_rank()));
  }

 private:
  std::string name_;
  int rank_;
  RemoteAllocator alloc_;
};

// "NAME@r" -> r (-1 without '@'); a malformed rank is a user error.
int rank_suffix(const std::string& name, std::string* base) {
  size_t at = name.find('@');
  *base = name.substr(0, at);
  if (at == std::string::npos) return -1;
  std::string r = name.substr(at + 1);
  LG_USER_CHECK(!r.empty() && r.size() < 6 && r.find_first_not_of("0123456789") == std::string::npos, "device \"",
                name, "\": the process rank after '@' must be a number, e.g. CPU:1@0");
  return std::stoi(r);
}

}  // namespace

std::vector<std::string> device_kinds() {
  std::vector<std::string> out;
  for (const Kind& k : kKinds) out.push_back(std::string(k.name) + "  " + k.about);
  return out;
}

bool is_gpu_device(const std::string& name) {
  std::string base;
  rank_suffix(name, &base);
  std::string kind = base.substr(0, base.find(':'));
  for (const Kind& k : kKinds)
    if (kind == k.name) return k.gpu;
  return false;
}

std::string canonical_device(const std::string& name) {
  std::string base;
  int rank = rank_suffix(name, &base);
  if (base.size() > 2 && base.compare(base.size() - 2, 2, ":0") == 0) base = base.substr(0, base.size() - 2);
  if (rank < 0 || rank == process_rank()) return base;
  return base + "@" + std::to_string(rank);
}

Device& get_device(const std::string& requested) {
  static std::mutex mu;
  // Never destroyed: buffers and programs released during static destruction still use their
  // device (a GPU allocator's cache, a context).
  static auto& devices = *new std::map<std::string, std::unique_ptr<Device>>;
  std::string name = canonical_device(requested);
  std::lock_guard lock(mu);
  if (auto it = devices.find(name); it != devices.end()) return *it->second;
  std::string base;
  if (int rank = rank_suffix(name, &base); rank >= 0) {
    Transport* t = transport();
    LG_USER_CHECK(t && rank < t->size(), "device \"", requested, "\" names process ", rank, " but this run has ",
                  t ? t->size() : 1, " process(es) (start it under mpirun with that many)");
    auto& slot = devices[name];
    slot = std::make_unique<RemoteDevice>(name, rank);
    return *slot;
  }
  std::string kind = name.substr(0, name.find(':'));
  if (size_t colon = name.find(':'); colon != std::string::npos) {
    std::string idx = name.substr(colon + 1);
    LG_USER_CHECK(!idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos, "device \"",
                  requested, "\": the index after ':' must be a number, e.g. ", kind, ":1");
  }
  for (const Kind& k : kKinds) {
    if (kind != k.name) continue;
    auto& slot = devices[name];
    slot = k.create(name);
    return *slot;
  }
  std::string known;
  for (const Kind& k : kKinds) known += std::string(known.empty() ? "" : ", ") + k.name;
  user_error("unknown device \"", requested, "\"; this build has: ", known,
             " (set DEVICE= or pass a device name)");
}

}  // namespace lg
