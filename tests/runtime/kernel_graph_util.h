#pragma once
// Graphs for the scheduler and heuristic tests (heuristic_test.cpp, split_reduce_test.cpp), built
// as the tensor front end builds them, and a way to run them and read their values.
//
// Inputs are float32 buffers whose element i is scale * ((i * 7) % 11 - 5): small integers times
// the scale, so sums of a few thousand are exact in float32 and a host sum is the reference.
#include <string>
#include <vector>

#include "ir/node.h"
#include "schedule/schedule.h"

namespace lg::graph_testing {

// A float32 buffer of shape's elements on device, element i = scale * ((i * 7) % 11 - 5), reshaped.
NodeRef input(const std::string& device, const Shape& shape, float scale);
NodeRef permute(const NodeRef& x, const Shape& order);

// out (n, m) = sum_k a(n, k) * bt(m, k), as the tensor front end builds a matmul.
NodeRef matmul_nt(const NodeRef& a, const NodeRef& bt);

enum class Layout { NN, NT, TN };

// (n, k) @ (k, m) with the operands stored as the layout says (T: stored transposed).
NodeRef matmul(const std::string& dev, Layout l, int64_t n, int64_t k, int64_t m);

// The schedule's one item (a test failure when there are others).
const ScheduleItem& only_item(const Schedule& s);

// A realized float32 view's values; root realized and read.
std::vector<float> values(const NodeRef& view);
std::vector<float> run(const NodeRef& root);

// Equal within 1e-4, relative above 1.
void expect_close(const std::vector<float>& got, const std::vector<float>& want);

}  // namespace lg::graph_testing
