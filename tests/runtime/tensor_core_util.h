#pragma once
// Matmuls for the tensor-core tests (tensor_core_test.cpp, tensor_core_lane_run_test.cpp): the graph
// the front end builds, a float64 reference, and the one kernel run as emulated CUDA or as the C
// program CUDACHECK runs.
//
// Inputs are multiples of 1/8 (|x| <= 1.5), exact in bf16 and fp16, so every product and partial
// sum is exact in float32 and the reference is exact; real mma.sync sums in its own order and
// rounding (ops.def defines WMMA's order for the CPU), hence the tolerance on the comparisons.
#include <string>
#include <vector>

#include "codegen/program.h"
#include "ir/node.h"
#include "schedule/schedule.h"

namespace lg::tc_testing {

// out (batch, m, n) = a (batch, m, k) @ b (batch, k, n), a and b in dtype t, as the front end builds
// it (tensor/reduce.cpp): both cast to float32, multiplied, summed over k in float32; the result is
// float32, or cast back to t (out16). Storage: a row-major (m, k), or (k, m) with a_t (an operand
// contiguous along m, as dY^T in a weight gradient); b row-major (k, n) (contiguous along n), or
// (n, k) with b_t (contiguous along k: x @ W^T).
struct Matmul {
  int64_t batch, m, n, k;
  DType t;
  bool out16 = false;
  bool a_t = false, b_t = false;
};

// The inputs' values, by element of their storage.
float a_value(int64_t i);
float b_value(int64_t i);
uint16_t bits16(float f, DType t);
float from16(uint16_t u, DType t);

// A buffer of n elements of dtype t on device, element i = value(i).
NodeRef filled(const std::string& device, DType t, int64_t n, float (*value)(int64_t));

NodeRef matmul_graph(const std::string& device, const Matmul& c);
std::vector<double> reference(const Matmul& c);
// A realized output's elements as float.
std::vector<float> read(const NodeRef& out, DType t);

// The one kernel of the matmul, lowered with the CUDA heuristic (tensor cores on).
LinearProgram tc_program(const ScheduleItem& item);
int wmma_count(const LinearProgram& p);

enum class Run { EmulatedCuda, CProgram };
// Runs program p (lowered from `item`) once over the item's buffers, as emulated CUDA or as the C
// program CUDACHECK runs.
void run_program(const LinearProgram& p, const ScheduleItem& item, Run how);
// The matmul's kernel with tensor cores, run as emulated CUDA or as the C program CUDACHECK runs.
std::vector<float> run_tc(const Matmul& c, Run how);

// |got - want| within tol relative to the row's magnitude (a rounding of the output to 16 bits
// is relative to the value itself).
void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol, const std::string& what);

std::string label(const Matmul& c);

// A sum of two products in one reduction (the backward of a tensor two matmuls read):
// out (m, n) = sum over k of a (m, k) * b (k, n) + c (m, k) * d (k, n), bf16 inputs (a_value,
// b_value, c_value, d_value), float32 sum; and its float64 reference.
float c_value(int64_t i);
float d_value(int64_t i);
NodeRef two_products_graph(int64_t M, int64_t N, int64_t K);
std::vector<double> two_products_reference(int64_t M, int64_t N, int64_t K);

}  // namespace lg::tc_testing
