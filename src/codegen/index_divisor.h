#pragma once
// What every value of an integer index expression is known to be a multiple of, from its form alone:
// the alignment facts of vector memory accesses (codegen/gpu_vector_access.h, codegen/streaming_stores.h).
#include <cstdint>
#include <unordered_map>

#include "ir/node.h"

namespace lg {

// "Divisible by every power of two asked about": a constant 0, or a product with such a factor.
inline constexpr int64_t kAnyPowerOfTwo = int64_t{1} << 20;

// The largest power of two (up to kAnyPowerOfTwo) that divides every value of integer node n.
// Sound: a sum is divisible by what divides both terms, a product by the product of the factors',
// a left shift by a constant multiplies; anything else (a loop variable, a load) by 1. memo caches
// the answers of one program's nodes.
int64_t power_of_two_divisor(const Node* n, std::unordered_map<const Node*, int64_t>& memo);

}  // namespace lg
