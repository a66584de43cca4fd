#pragma once
// Structural hashing helpers. Hashes never depend on pointer values (house style rule 16).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace lg {

inline uint64_t hash_mix(uint64_t h, uint64_t v) {
  // splitmix64-style finalizer folded into a running hash.
  v += 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  v ^= v >> 30;
  v *= 0xbf58476d1ce4e5b9ull;
  v ^= v >> 27;
  v *= 0x94d049bb133111ebull;
  v ^= v >> 31;
  return h ^ v;
}

inline uint64_t hash_bytes(std::string_view s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

inline uint64_t hash_double(double d) { return std::bit_cast<uint64_t>(d); }

}  // namespace lg
