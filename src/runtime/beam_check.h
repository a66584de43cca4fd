#pragma once
// Checking BEAM's candidates (runtime/beam.h): a candidate's output must match the reference
// candidate's (the search's first start, the device's heuristic choice) before its time counts. A
// list that lowers, compiles and runs fast but computes something else (a codegen bug, or a tiling
// that has never run on this GPU) is dropped, not chosen.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "runtime/device.h"

namespace lg {

// Fills `bytes` of device memory at p with 0xFF: NaN in every float dtype, all ones in integers and
// bools. An output poisoned before each candidate runs shows the elements a candidate left unwritten.
void poison_output(Allocator& alloc, void* p, size_t bytes);

// The relative tolerance of two correct evaluations of one kernel with output dtype t (summation
// order, fused multiply-adds and one rounding to t may differ): 1e-3 for f32, 1e-2 for f16, 3e-2
// for bf16 (about 4 of its ulps), 1e-9 for f64; 0 (bitwise) for integers and bools.
double output_tolerance(DType t);

// "" when `got` matches `ref` (two outputs of dtype t, as bytes, the same size), else the first
// element that does not, its index and both values. Floats: |got - ref| <= tol * (|ref| + rms),
// with tol = output_tolerance(t) and rms the root mean square of ref's finite values (so a sum
// that cancels to near 0 is judged against the output's scale); NaN matches only NaN and an
// infinity only itself. Integers and bools: bitwise.
std::string output_mismatch(const std::vector<uint8_t>& ref, const std::vector<uint8_t>& got, DType t);

}  // namespace lg
