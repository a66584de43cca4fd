#pragma once
// `lazygrad bench matmul --probe`: products whose every entry says where it came from, so a wrong
// matmul kernel's log says how it is wrong, not only that it is (docs/gpu.md "Probing a wrong
// matmul"; tools/gpu_check.sh runs it for a setting whose check failed). Five probes of n x n,
// C = A @ B, where enc(x) is an index x in two products, x / 32 and x % 32: small integers, exact
// in bf16 and fp16 and summed exactly in float32 (I: the identity):
//   a_rows  A[i][k] = enc(i), B = I  ->  C[i][j] = enc(i)  the row of A each output row got
//   a_k     A[i][k] = enc(k), B = I  ->  C[i][j] = enc(j)  the k of A that met row j of B
//   b_cols  A = I, B[k][j] = enc(j)  ->  C[i][j] = enc(j)  the column of B each output column got
//   b_k     A = I, B[k][j] = enc(k)  ->  C[i][j] = enc(i)  the k of B that met column i of A
//   k_sum   A = B = ones             ->  C[i][j] = n       how many k each output summed
// a_rows and b_cols do not see a k mix-up (every k of a row or column holds the same value); a_k
// and b_k see only k mix-ups of one operand against the other.
// One line per probe and size:
//   probe <device> <dtype> N=<n> [a=X^T] [b=W^T] kernel=<block|tc|no> <probe>: ok
//   probe ... <probe>: FAIL wrong=<w>/<n*n> nan=<k> unreadable=<u> map=<8 rows of 8 cells>
//         offsets=<d>:<count>,... xors=<x>:<count>,... first=(i,j):got<g>/want<w>;...
// map: the output in 8 x 8 bands (rows of bands separated by '/'): '.' no entry wrong, 'x' some,
// '#' all. An entry is unreadable when its products are not one index (a sum of several, a NaN,
// out of range); offsets and xors are (index it came from) - (index it should have) and their XOR
// over the readable wrong entries, commonest first (a swizzle shows as XORs, a shifted copy as an
// offset); for k_sum the offsets are the sum's difference from n. A FAIL line is followed by a
// non-zero exit.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench/device_matmul.h"

namespace lg::bench {

// What one probe found in an n x n output (row-major).
struct ProbeOutcome {
  int64_t n = 0, wrong = 0, nan = 0, unreadable = 0;
  std::string map;                                   // 8 bands x 8 bands, rows joined by '/'
  std::vector<std::pair<int64_t, int64_t>> offsets;  // (difference, entries), commonest first, <= 4
  std::vector<std::pair<int64_t, int64_t>> xors;     // (XOR, entries), commonest first, <= 4
  std::vector<std::string> first;                    // "(i,j):got<g>/want<w>", row-major, <= 4
  bool ok() const { return wrong == 0; }
  std::string text() const;  // "ok" or "FAIL wrong=... first=..."
};

// An index probe: entry (i, j) came from index hi * 32 + lo (the two products' values) and should
// have come from i (want_row) or j. n: a multiple of 8.
ProbeOutcome analyze_index_probe(const std::vector<double>& hi, const std::vector<double>& lo, int64_t n,
                                 bool want_row);
// k_sum: every entry should be n.
ProbeOutcome analyze_sum_probe(const std::vector<double>& got, int64_t n);

// Runs the five probes for each of o.sizes (multiples of 8, 8 to 8192) on o.device in o.dtype and
// layout, printing a line each; any FAIL is a user error after all lines are printed.
void run_matmul_probe(const DeviceMatmulOptions& o);

}  // namespace lg::bench
