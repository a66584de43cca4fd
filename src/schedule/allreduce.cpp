#include "schedule/allreduce.h"

#include <algorithm>
#include <cstdio>

#include "base/config.h"
#include "base/error.h"
#include "ir/build.h"

namespace lg {

const char* allreduce_algo_name(AllreduceAlgo a) {
  switch (a) {
    case AllreduceAlgo::Naive: return "naive";
    case AllreduceAlgo::Ring: return "ring";
    case AllreduceAlgo::AllToAll: return "all-to-all";
    case AllreduceAlgo::Hierarchical: return "hierarchical";
  }
  return "?";
}

AllreduceAlgo choose_allreduce(int64_t n, int64_t N) {
  const Config& c = config();
  if (c.allreduce_node_ndevs > 0) {
    LG_USER_CHECK(n % c.allreduce_node_ndevs == 0, "ALLREDUCE_NODE_NDEVS=", c.allreduce_node_ndevs,
                  " does not divide the ", n, " devices of an allreduce; set it to the devices per node");
    return AllreduceAlgo::Hierarchical;
  }
  bool large = n > 2 && N > (int64_t{1} << 18);
  if (c.all2all >= 2 || (c.all2all >= 1 && large)) return AllreduceAlgo::AllToAll;
  if (c.ring >= 2 || (c.ring >= 1 && large)) return AllreduceAlgo::Ring;
  return AllreduceAlgo::Naive;
}

namespace {

// One allreduce: the flattened inputs and how values move between devices.
struct Plan {
  std::vector<NodeRef> x;     // flat (N) inputs, x[j] on device j
  std::vector<NodeRef> dev;   // DEVICE nodes
  int64_t N;
  bool narrow;                // travel as bfloat16

  // Chunk c of k: [begin, end) of the flat value.
  std::pair<int64_t, int64_t> bounds(int64_t c, int64_t k) const {
    int64_t size = (N + k - 1) / k;
    size = (size + 15) / 16 * 16;
    return {std::min(N, c * size), std::min(N, (c + 1) * size)};
  }
  NodeRef chunk(const NodeRef& v, int64_t c, int64_t k) const {
    auto [b, e] = bounds(c, k);
    if (b == 0 && e == N) return v;
    return make(Op::SHRINK, v->dtype, {v}, Pairs{{b, e}});
  }
  // v as it arrives on device d (rounded through bfloat16 when narrow, even when already there).
  NodeRef to(const NodeRef& v, int64_t d) const {
    NodeRef w = narrow ? cast(v, dtypes::bfloat16) : v;
    if (w->device != dev[d].get()) w = make(Op::COPY, w->dtype, {w, dev[d]});
    return narrow ? cast(w, v->dtype) : w;
  }
  // The flat result on one device from its chunk values (k of them, in order).
  NodeRef assemble(const std::vector<NodeRef>& chunks, int64_t k) const {
    NodeRef out;
    for (int64_t c = 0; c < k; c++) {
      auto [b, e] = bounds(c, k);
      if (b == e) continue;
      NodeRef part = (b == 0 && e == N) ? chunks[c] : make(Op::PAD, chunks[c]->dtype, {chunks[c]}, Pairs{{b, N - e}});
      out = out ? out + part : part;
    }
    return out;
  }
};

NodeRef naive(const Plan& p, int64_t i) {
  NodeRef acc;
  for (size_t j = 0; j < p.x.size(); j++) {
    NodeRef v = p.to(p.x[j], i);
    acc = acc ? acc + v : v;
  }
  return acc;
}

NodeRef ring(const Plan& p, int64_t i) {
  int64_t n = static_cast<int64_t>(p.x.size());
  std::vector<NodeRef> mine(n);
  for (int64_t c = 0; c < n; c++) {
    auto [b, e] = p.bounds(c, n);
    if (b == e) continue;
    NodeRef acc = p.chunk(p.x[(c + 1) % n], c, n);
    for (int64_t s = 2; s <= n; s++) {
      int64_t d = (c + s) % n;
      acc = p.to(acc, d) + p.chunk(p.x[d], c, n);
    }
    // acc is on device c; pass it on until device i
    NodeRef v = p.narrow ? p.to(acc, c) : acc;
    for (int64_t s = 1; s <= (i - c + n) % n; s++) v = p.to(v, (c + s) % n);
    mine[c] = v;
  }
  return p.assemble(mine, n);
}

NodeRef all_to_all(const Plan& p, int64_t i) {
  int64_t n = static_cast<int64_t>(p.x.size());
  std::vector<NodeRef> mine(n);
  for (int64_t c = 0; c < n; c++) {
    auto [b, e] = p.bounds(c, n);
    if (b == e) continue;
    NodeRef acc;
    for (int64_t j = 0; j < n; j++) {
      NodeRef v = p.to(p.chunk(p.x[j], c, n), c);
      acc = acc ? acc + v : v;
    }
    mine[c] = p.to(acc, i);
  }
  return p.assemble(mine, n);
}

NodeRef hierarchical(const Plan& p, int64_t i, int64_t m) {
  int64_t nodes = static_cast<int64_t>(p.x.size()) / m;
  int64_t node_i = i / m;
  std::vector<NodeRef> mine(m);
  for (int64_t l = 0; l < m; l++) {
    auto [b, e] = p.bounds(l, m);
    if (b == e) continue;
    // partial[a]: chunk l summed over node a's devices, on device (a, l)
    auto node_partial = [&](int64_t a) {
      NodeRef acc;
      for (int64_t q = 0; q < m; q++) {
        NodeRef v = p.to(p.chunk(p.x[a * m + q], l, m), a * m + l);
        acc = acc ? acc + v : v;
      }
      return acc;
    };
    NodeRef total;  // on device (node_i, l), summed in node order
    for (int64_t a = 0; a < nodes; a++) {
      NodeRef v = p.to(node_partial(a), node_i * m + l);
      total = total ? total + v : v;
    }
    mine[l] = p.to(total, i);
  }
  return p.assemble(mine, m);
}

NodeRef lower(const Node& r) {
  int64_t n = static_cast<int64_t>(r.src.size()) - 1;
  Plan p;
  p.N = r.src[1]->numel();
  p.narrow = config().allreduce_cast && r.dtype == dtypes::float32;
  int64_t i = -1;
  for (int64_t j = 0; j < n; j++) {
    const NodeRef& x = r.src[j + 1];
    LG_USER_CHECK(x->device != nullptr, "allreduce: input ", j, " lives on no device");
    for (const NodeRef& d : p.dev)
      LG_USER_CHECK(d.get() != x->device, "allreduce: inputs ", j, " and another are both on ", x->device_name(),
                    "; give one value per device");
    p.dev.push_back(NodeRef::share(x->device));
    if (x->device == r.src[0].get()) i = j;
    // A realized flat view: the chunks are runs of its buffer, copied without a kernel.
    NodeRef flat = make(Op::CONTIGUOUS, x->dtype, {x});
    p.x.push_back(x->shape.size() == 1 ? flat : make(Op::RESHAPE, x->dtype, {flat}, Shape{p.N}));
  }
  LG_USER_CHECK(i >= 0, "allreduce: the output device ", r.device_name(), " holds none of the inputs");
  NodeRef out;
  if (n == 1 || p.N == 0) {
    out = p.x[i];
  } else {
    AllreduceAlgo algo = choose_allreduce(n, p.N);
    if (config().debug >= 2 && i == 0)
      std::fprintf(stderr, "allreduce: %s over %lld devices, %lld %s elements%s\n", allreduce_algo_name(algo),
                   static_cast<long long>(n), static_cast<long long>(p.N), name(r.dtype).c_str(),
                   p.narrow ? ", moved as bfloat16" : "");
    switch (algo) {
      case AllreduceAlgo::Naive: out = naive(p, i); break;
      case AllreduceAlgo::Ring: out = ring(p, i); break;
      case AllreduceAlgo::AllToAll: out = all_to_all(p, i); break;
      case AllreduceAlgo::Hierarchical: out = hierarchical(p, i, config().allreduce_node_ndevs); break;
    }
  }
  return r.shape.size() == 1 ? out : make(Op::RESHAPE, r.dtype, {out}, r.shape);
}

}  // namespace

const PatternMatcher& pm_allreduce() {
  static const PatternMatcher pm({{"lower allreduce", Pat::op(Op::ALLREDUCE),
                                   [](const Match& m) { return lower(*m.root()); }}});
  return pm;
}

}  // namespace lg
