#include "codegen/streaming_stores.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "base/config.h"
#include "codegen/access.h"
#include "codegen/index_divisor.h"

namespace lg {

std::unordered_set<const Node*> streaming_stores(const LinearProgram& prog) {
  std::unordered_set<const Node*> out;
  if (!config().stream_stores) return out;
  std::unordered_set<const Node*> loaded;  // DEFINE_GLOBALs some LOAD reads
  bool reduces = false;
  for (const NodeRef& n : prog.ops) {
    if (n->op == Op::LOAD && n->src[0]->op == Op::INDEX) loaded.insert(n->src[0]->src[0].get());
    reduces = reduces || n->op == Op::DEFINE_ACC;
  }
  if (!reduces && !loaded.empty()) return out;  // elementwise: as memory-bound as its stores
  std::unordered_map<const Node*, int64_t> divisors;
  std::unordered_map<const Node*, std::vector<const Node*>> candidates;  // by DEFINE_GLOBAL
  std::unordered_map<const Node*, int64_t> bytes_of;                     // their bytes per launch
  std::vector<const Node*> loops;                                        // the open RANGEs, innermost last
  for (const NodeRef& n : prog.ops) {
    if (n->op == Op::RANGE) loops.push_back(n.get());
    if (n->op == Op::END && !loops.empty() && loops.back() == n->src[0].get()) loops.pop_back();
    if (n->op != Op::STORE || is_atomic_add(*n)) continue;
    const Node& idx = *n->src[0];
    if (idx.op != Op::INDEX) continue;
    const Node* buffer = idx.src[0].get();
    DType t = n->src[1]->dtype;
    if (t.count != 16 || t.scalar != Scalar::Float32 || idx.src.size() != 2 || loaded.count(buffer)) continue;
    if (power_of_two_divisor(idx.src[1].get(), divisors) % 16 != 0) continue;
    int64_t bytes = 64;
    bool moves = true;
    for (const Node* r : loops) {
      moves = moves && r->src[0]->is_const() && index_stride(idx.src[1], r) != 0;
      if (!moves) break;
      int64_t trips = std::min(r->src[0]->const_as_int(), kStreamingStoreBytes);  // no overflow below
      bytes = std::min(bytes * trips, kStreamingStoreBytes);
    }
    if (!moves) continue;
    candidates[buffer].push_back(n.get());
    bytes_of[buffer] = std::min(bytes_of[buffer] + bytes, kStreamingStoreBytes);
  }
  for (const auto& [buffer, stores] : candidates)
    if (bytes_of[buffer] >= kStreamingStoreBytes) out.insert(stores.begin(), stores.end());
  return out;
}

}  // namespace lg
