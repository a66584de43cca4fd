#include "runtime/device.h"

#include <cstdint>
#include <map>
#include <mutex>

#include "base/error.h"
#include "runtime/cpu.h"
#include "runtime/cuda.h"
#include "runtime/compile_check.h"
#include "runtime/interp.h"

namespace lg {

namespace {
struct Kind {
  const char* name;
  std::unique_ptr<Device> (*create)(const std::string& full_name);
  const char* about;
};
// Every backend of this build, one line each.
const Kind kKinds[] = {
    {"INTERP", make_interp_device, "reference interpreter of linear programs (scalar C++)"},
    {"CPU", make_cpu_device, "C kernels compiled by clang into shared objects, run on a thread pool"},
    {"CUDA", make_cuda_device, "NVIDIA GPUs (CUDA:0..n-1): CUDA C kernels compiled by NVRTC, driver API loaded at run time"},
    {"CUDACHECK", make_cuda_check_device, "CUDA compile check without a GPU: every kernel through NVRTC, then run on the CPU"},
    {"HIPCHECK", make_hip_check_device, "HIP compile check: every kernel through hipcc (gfx90a, gfx940), then run on the CPU"},
};
}  // namespace

void copy_between_devices(Device& dst, void* dst_ptr, Device& src, const void* src_ptr, size_t bytes) {
  if (dst.allocator().copy_from(dst_ptr, src.allocator(), src_ptr, bytes)) return;
  std::vector<uint8_t> host(bytes);
  src.allocator().copy_out(host.data(), src_ptr, bytes);
  dst.allocator().copy_in(dst_ptr, host.data(), bytes);
}

std::vector<std::string> device_kinds() {
  std::vector<std::string> out;
  for (const Kind& k : kKinds) out.push_back(std::string(k.name) + "  " + k.about);
  return out;
}

std::string canonical_device(const std::string& name) {
  if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) return name.substr(0, name.size() - 2);
  return name;
}

Device& get_device(const std::string& requested) {
  static std::mutex mu;
  // Never destroyed: buffers and programs released during static destruction still use their
  // device (a GPU allocator's cache, a context).
  static auto& devices = *new std::map<std::string, std::unique_ptr<Device>>;
  std::string name = canonical_device(requested);
  std::lock_guard lock(mu);
  if (auto it = devices.find(name); it != devices.end()) return *it->second;
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
