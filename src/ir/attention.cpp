#include "ir/attention.h"

#include "base/error.h"

namespace lg {

Shape attention_shape(Op op, const std::vector<NodeRef>& src, int64_t flags) {
  const Shape& q = src[0]->shape;
  const Shape& k = src[1]->shape;
  LG_CHECK(q.size() == 4 && k.size() == 4 && src[2]->shape == k, "attention: q, k, v are not (B, H, S, D), (B, KV, T, D) x2");
  LG_CHECK(q[0] == k[0] && q[3] == k[3] && k[1] > 0 && q[1] % k[1] == 0,
           "attention: q and k differ in batch or head dim, or the query heads are not a multiple of the kv heads");
  LG_CHECK(!(flags & kAttentionCausal) || q[2] == k[2], "attention: causal with S != T");
  LG_CHECK(is_float(src[0]->dtype) && src[1]->dtype == src[0]->dtype && src[2]->dtype == src[0]->dtype,
           "attention: q, k, v are not of one float dtype");
  if (op == Op::FLASH_ATTENTION) return {q[0], q[1], q[2], q[3] + 1};
  LG_CHECK(src[3]->shape == q && src[3]->dtype == src[0]->dtype, "attention gradient: dO is not q's shape and dtype");
  LG_CHECK(src[4]->shape == (Shape{q[0], q[1], q[2], 2}) && src[4]->dtype == dtypes::float32,
           "attention gradient: stats are not (B, H, S, 2) float32");
  if (flags & kAttentionGradKV) return {k[0], k[1], k[2], 2 * k[3]};
  return q;
}

bool is_attention_kernel(const NodeRef& ast) {
  return ast->op == Op::SINK && ast->src.size() == 1 && ast->src[0]->op == Op::ATTENTION;
}

const char* AttentionKernel::label() const {
  switch (kind) {
    case AttentionKind::Forward: return "fwd";
    case AttentionKind::GradQ: return "dq";
    case AttentionKind::GradKV: return "dkv";
  }
  return "?";
}

Shape AttentionKernel::arg() const {
  return {static_cast<int64_t>(kind), B, H, KV, S, T, D, causal ? 1 : 0, tensor_cores ? 1 : 0};
}

AttentionKernel AttentionKernel::from_arg(const Shape& a) {
  LG_CHECK(a.size() == 9 && a[0] >= 0 && a[0] <= 2, "ATTENTION arg of ", a.size(), " entries");
  return {static_cast<AttentionKind>(a[0]), a[1], a[2], a[3], a[4], a[5], a[6], a[7] != 0, a[8] != 0};
}

}  // namespace lg
