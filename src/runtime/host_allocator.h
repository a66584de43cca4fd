#pragma once
// Host memory for the CPU devices (docs/cpu_backend.md "Memory").
//
// Small buffers (under kMapThreshold): 64-byte aligned heap memory, zeroed. Large ones: anonymous
// mappings; from kHugeThreshold on they start on a 2 MiB boundary and are advised as transparent
// huge pages. A freed mapping goes to one process-wide pool (at most 1/kCacheFraction of physical
// memory; the rest is unmapped). An allocation takes, in order:
//   1. a pooled mapping of exactly its size, as it was;
//   2. otherwise a new address range whose pages are moved out of pooled mappings (mremap: the
//      page tables move, nothing is faulted or zeroed), in whole 2 MiB pieces while more than one
//      is left, largest mapping first; whatever the pool cannot cover is fresh memory.
// Why: a fresh page costs a fault that zeroes it on first touch, and on the virtual machines this
// project runs on, memory handed back to the kernel is reported to the hypervisor, which drops it:
// touching it again costs the host's fault and zeroing too (0.1-1.5 GB/s measured for fresh huge
// pages, against 10 GB/s for a memset of faulted memory). A Jit's arena is one new size the step
// never allocated before; it now takes the captured intermediates' pages.
// RECYCLE_PAGES=0 (config().recycle_pages) skips step 2: an A/B switch.
// Contents are unspecified (the Allocator contract): a recycled range holds old values.
// Thread-safe; the pool is never destroyed (nodes may free buffers during static destruction).
#include <cstddef>

#include "runtime/device.h"

namespace lg {

class HostAllocator : public Allocator {
 public:
  static constexpr size_t kMapThreshold = size_t{1} << 20;
  static constexpr size_t kHugeThreshold = size_t{4} << 20;
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr size_t kCacheFraction = 8;  // pool at most 1/8 of physical memory

  void* alloc(size_t bytes) override;
  void free(void* p, size_t bytes) override;
  void copy_in(void* dst, const void* host, size_t bytes) override;
  void copy_out(void* host, const void* src, size_t bytes) override;
  bool host_memory() const override { return true; }

  // Process-wide counts since start (all HostAllocators share the pool), in bytes.
  struct Stats {
    size_t fresh = 0;     // newly mapped memory handed out (faults on first touch)
    size_t reused = 0;    // pooled mappings handed out whole (step 1 above)
    size_t recycled = 0;  // pages moved out of pooled mappings into new ranges (step 2)
    size_t pooled = 0;    // held by the pool now
  };
  static Stats stats();
  // Unmaps every pooled mapping (the next allocations are fresh memory).
  static void release_pool();
};

}  // namespace lg
