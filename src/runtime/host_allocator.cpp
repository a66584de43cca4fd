#include "runtime/host_allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include "base/config.h"
#include "base/error.h"

namespace lg {
namespace {

size_t page_size() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}
size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }
// What a mapping of `bytes` spans: whole pages.
size_t mapped_length(size_t bytes) { return round_up(bytes, page_size()); }

// Freed mappings by their byte size (a mapping of key bytes spans mapped_length(key)), and the
// counts of HostAllocator::Stats. Never destroyed: buffers are freed when their nodes die, which may
// be during static destruction, after the devices.
struct Pool {
  std::mutex mu;
  std::multimap<size_t, void*> mappings;
  HostAllocator::Stats stats;  // pooled: the mapped lengths of `mappings`, summed
};
Pool& pool() {
  static Pool* p = new Pool();
  return *p;
}

size_t pool_limit() {
  static const size_t limit =
      static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * page_size() / HostAllocator::kCacheFraction;
  return limit;
}

// A fresh mapping of `bytes`; from kHugeThreshold on it starts on a huge-page boundary (so that
// pages moved in or out in whole huge pages keep their huge page table entries) and is advised as
// transparent huge pages: kernels that stride through big tensors (a matmul's transposed operand)
// otherwise miss the TLB on every access.
void* map_fresh(size_t bytes) {
  size_t len = mapped_length(bytes);
  if (len < HostAllocator::kHugeThreshold)
    return mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  size_t span = len + HostAllocator::kHugePage;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return raw;
  auto start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = round_up(start, HostAllocator::kHugePage);
  if (aligned > start) munmap(raw, aligned - start);
  if (size_t tail = start + span - (aligned + len); tail > 0)
    munmap(reinterpret_cast<void*>(aligned + len), tail);
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, len, MADV_HUGEPAGE);
  return p;
}

// Moves pooled pages into [dst, dst + len) (dst on a huge-page boundary), until what is left is
// under one huge page or no pooled mapping can give one; returns the bytes covered from dst on.
// Only whole huge pages move, from mappings that start on a huge-page boundary, largest mapping
// first: moved that way the page tables move whole (a huge page stays one TLB entry; a piece out of
// alignment would be split into 4 KiB entries, and the kernels that read it run slower). The rest
// of a mapping stays pooled when it is at least kMapThreshold, else it is unmapped.
// Caller holds the pool's lock.
size_t move_pooled_pages(Pool& c, char* dst, size_t len) {
  constexpr size_t kHuge = HostAllocator::kHugePage;
  size_t filled = 0;
  auto it = c.mappings.end();
  while (len - filled >= kHuge && it != c.mappings.begin()) {
    --it;
    char* src = static_cast<char*>(it->second);
    size_t have = mapped_length(it->first);
    size_t take = std::min(have, len - filled) / kHuge * kHuge;
    if (take == 0) break;  // every mapping from here down is smaller than a huge page
    if (reinterpret_cast<uintptr_t>(src) % kHuge != 0) continue;
    if (mremap(src, take, take, MREMAP_MAYMOVE | MREMAP_FIXED, dst + filled) == MAP_FAILED) break;
    it = c.mappings.erase(it);
    c.stats.pooled -= have;
    c.stats.recycled += take;
    filled += take;
    if (size_t rest = have - take; rest >= HostAllocator::kMapThreshold) {
      c.mappings.emplace(rest, src + take);  // ordered below `it`: the walk may take it later
      c.stats.pooled += rest;
    } else if (rest > 0) {
      munmap(src + take, rest);
    }
  }
  return filled;
}

void* alloc_small(size_t bytes) {
  void* p = nullptr;
  LG_CHECK(posix_memalign(&p, 64, bytes == 0 ? 64 : bytes) == 0, "out of host memory allocating ", bytes,
           " bytes");
  std::memset(p, 0, bytes);
  return p;
}

}  // namespace

void* HostAllocator::alloc(size_t bytes) {
  if (bytes < kMapThreshold) return alloc_small(bytes);
  Pool& c = pool();
  {
    std::lock_guard lock(c.mu);
    if (auto it = c.mappings.find(bytes); it != c.mappings.end()) {
      void* p = it->second;
      c.mappings.erase(it);
      c.stats.pooled -= mapped_length(bytes);
      c.stats.reused += mapped_length(bytes);
      return p;
    }
  }
  void* p = map_fresh(bytes);
  if (p == MAP_FAILED) {  // address space held by the pool may be what is missing
    release_pool();
    p = map_fresh(bytes);
  }
  LG_USER_CHECK(p != MAP_FAILED, "out of host memory: mapping ", bytes, " bytes (", bytes >> 30,
                " GiB) failed; use a smaller batch, sequence or model");
  std::lock_guard lock(c.mu);
  size_t len = mapped_length(bytes);
  c.stats.fresh += len - (config().recycle_pages ? move_pooled_pages(c, static_cast<char*>(p), len) : 0);
  return p;
}

void HostAllocator::free(void* p, size_t bytes) {
  if (bytes < kMapThreshold) return std::free(p);
  size_t len = mapped_length(bytes);
  Pool& c = pool();
  {
    std::lock_guard lock(c.mu);
    if (c.stats.pooled + len <= pool_limit()) {
      c.mappings.emplace(bytes, p);
      c.stats.pooled += len;
      return;
    }
  }
  munmap(p, len);
}

void HostAllocator::copy_in(void* dst, const void* host, size_t bytes) { std::memcpy(dst, host, bytes); }
void HostAllocator::copy_out(void* host, const void* src, size_t bytes) { std::memcpy(host, src, bytes); }

HostAllocator::Stats HostAllocator::stats() {
  Pool& c = pool();
  std::lock_guard lock(c.mu);
  return c.stats;
}

void HostAllocator::release_pool() {
  Pool& c = pool();
  std::lock_guard lock(c.mu);
  for (auto& [bytes, p] : c.mappings) munmap(p, mapped_length(bytes));
  c.mappings.clear();
  c.stats.pooled = 0;
}

}  // namespace lg
