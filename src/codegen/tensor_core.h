#pragma once
// Tensor cores: the TC Opt maps a matmul-shaped reduction onto NVIDIA's warp-wide
// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32 (sm_80 and later), as tinygrad's
// TC opt does with its WMMA UOp.
//
// The tile: D (16x8, float32) = A (16x16, bf16 or f16) * B (16x8, same) + C (16x8, float32), computed
// by the 32 lanes of a warp together. Each lane holds a fragment of every matrix (PTX ISA, "Matrix
// Fragments for mma.m16n8k16 with floating point type"), with g = lane / 4 and t = lane % 4:
//   A  8 elements a0..a7:  row g + 8*((j/2)%2),   col 2t + j%2 + 8*(j/4)
//   B  4 elements b0..b3:  row 2t + j%2 + 8*(j/2), col g
//   C  4 elements c0..c3:  row g + 8*(j/2),       col 2t + j%2      (D likewise)
// In registers, elements 2r and 2r+1 of A and B share one 32-bit register r, the even one in the low
// half.
//
// The IR: one WMMA node per element of this lane's D fragment (ir/ops.def). Its sources are the
// lane (a LOCAL RANGE of 32), this lane's A and B fragment values (expressions of the lane) and its
// C fragment; its value needs the other lanes' A and B fragments, which are the same expressions
// at another lane (the CUDA renderer issues one mma.sync for the four WMMAs of a tile; the C renderer
// evaluates the expressions at every lane, codegen/render_c.cpp).
#include <string>
#include <vector>

#include "ir/node.h"

namespace lg {

inline constexpr int64_t kTcM = 16, kTcN = 8, kTcK = 16, kWarpLanes = 32;
// The warp's lane range has this id: after every other range, so it varies fastest across the
// threads of a block (codegen/gpu_launch.h: lane = threadIdx.x % 32). Opts number new ranges below it.
inline constexpr int64_t kTcLaneRangeId = int64_t{1} << 40;

enum class TcOperand { A, B, C };

// Elements of operand's fragment in one lane: 8 (A), 4 (B, C, D).
int tc_fragment_size(TcOperand operand);

// Where element j of a lane's fragment sits in its tile: row (row = true) or column, as a number,
// as an IR expression of the lane range, or as a C expression of a lane variable.
int64_t tc_place(TcOperand operand, bool row, int64_t lane, int j);
NodeRef tc_place(TcOperand operand, bool row, const NodeRef& lane, int j);
std::string tc_place_c(TcOperand operand, bool row, const std::string& lane, int j);

// A matmul the TC Opt can map, as kernel axes (kernel_axes order): m and n output axes (LOOP), k a
// reduce axis; the 16-bit input dtype. Only the first operand moves along m, only the second along
// n, both along k.
struct TcAxes {
  int m, n, k;
  DType input;
  int products = 1;  // mmas per tile and k step: the reduction sums this many products
};

// Every (m, n, k) the TC Opt accepts for this kernel, in the order Opt TC's axis selects them: k
// ascending, then n from the last output axis, then m from the last. Empty when the kernel is not a
// single float32 ADD reduction of CAST(x_1) * CAST(y_1) + ... + CAST(x_P) * CAST(y_P), P <= 4 (every
// x_p, y_p of one 16-bit float dtype; optionally masked by a PADTO of k) that every store uses:
// the backward of a tensor read by several matmuls sums their products in one reduction. Axis
// sizes are not checked here (apply_tensor_core does).
std::vector<TcAxes> tc_candidates(const NodeRef& ast);

// Lane runs. An mma sums its 16 products over k in any order the A columns and B rows agree on, so
// which memory k a tile column stands for is free as long as both operands use the same map. The
// PTX order gives lane t the k pairs (2t, 2t+1) and (2t+8, 2t+9) of a 16-wide step: 4-byte pieces
// 16 bytes apart. With lane runs of S steps (S = 1, 2 or 4), a k step is 16*S wide and lane t's
// elements of all S mmas are the one run k = 4S*t .. 4S*t + 4S - 1 (8*S contiguous bytes of an
// operand contiguous along k: one 8- or 16-byte load, or several, instead of 2*S 4-byte ones):
// element j of operand A or B in step u sits at
//   k = 4S*t + 4u + 2p + j%2,   p = j/4 (A) or j/2 (B): the half (8 apart) of the PTX step,
// a bijection of each lane's run onto its PTX places in the S steps (tests: each k once).
inline constexpr int kTcMostLaneRunSteps = 4;
NodeRef tc_lane_run_k(const NodeRef& lane, TcOperand operand, int steps, int step, int j);

// Opt TC with axis `choice`: m, n, k (tc_candidates(ast)[choice]) are split by the tile, 16, 8 and
// 16 (16 * lane_runs with lane runs, above); the tile's rows and columns become the lanes of a
// LOCAL range of 32 (id kTcLaneRangeId) and the four elements of each lane's D fragment (four
// copies of every store); the reduction over k becomes a reduction over the k steps of WMMA nodes,
// one per product (and per step of a lane run), chained (each link's C is the previous link's D).
// lane_runs 0: the PTX order. Throws OptError when there is no such candidate or a size is not a
// multiple of its tile dimension (PADTO first).
NodeRef apply_tensor_core(const NodeRef& ast, int choice, int lane_runs = 0);

// After lower_reduce: the four accumulators of one tile (ACCUMULATE(acc_i, acc_i + WMMA_i(..., 0, 0,
// 0, 0))) become ACCUMULATE(acc_i, WMMA_i(..., acc_0, acc_1, acc_2, acc_3)): the mma adds into the
// accumulators itself. For a chain of mmas (several products) the first link's zero C becomes the
// accumulators. Same values (WMMA adds C after summing the products, ops.def).
NodeRef fuse_wmma_accumulate(const NodeRef& kernel);

}  // namespace lg
