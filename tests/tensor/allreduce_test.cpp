// allreduce (tensor/multi.h, lowered by schedule/allreduce.cpp) and MultiTensor: every algorithm is
// exact on int32 data for several sizes (1, 17, 1000 and a large size no chunking divides) on 2, 3,
// 4 and 8 devices of the test's device kind; the algorithms move the number of chunks they should;
// float replicas agree bit for bit; gradients flow back to every device.
#include "tensor/multi.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>

#include "base/config.h"
#include "ir/graph.h"
#include "schedule/schedule.h"
#include "tensor/jit.h"

namespace lg {
namespace {

// Sets the allreduce knobs for one test and restores the defaults after it.
class Knobs {
 public:
  Knobs(int ring, int all2all, int node_ndevs, bool cast = false) {
    set("RING", ring);
    set("ALL2ALL", all2all);
    set("ALLREDUCE_NODE_NDEVS", node_ndevs);
    set("ALLREDUCE_CAST", cast);
    config_reload();
  }
  ~Knobs() {
    for (const char* k : {"RING", "ALL2ALL", "ALLREDUCE_NODE_NDEVS", "ALLREDUCE_CAST"}) unsetenv(k);
    config_reload();
  }

 private:
  static void set(const char* k, int v) { setenv(k, std::to_string(v).c_str(), 1); }
};

struct Algo {
  const char* name;
  int ring, all2all;
  bool hierarchical;
};
const Algo kAlgos[] = {{"naive", 0, 0, false}, {"ring", 2, 0, false}, {"all-to-all", 0, 2, false},
                       {"hierarchical", 0, 0, true}};

std::vector<std::string> devices(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; i++) out.push_back(config().device + ":" + std::to_string(i));
  return out;
}

// Devices per node for the hierarchical runs: 2 when n is even (n/2 nodes), else n (one node).
int node_ndevs(int n) { return n % 2 == 0 ? 2 : n; }

void check_exact(const Algo& algo, int n, int64_t size) {
  SCOPED_TRACE(std::string(algo.name) + " on " + std::to_string(n) + " devices, " + std::to_string(size) + " elements");
  Knobs knobs(algo.ring, algo.all2all, algo.hierarchical ? node_ndevs(n) : 0);
  std::mt19937 rng(static_cast<uint32_t>(n * 1000 + size));
  std::vector<int32_t> want(size, 0);
  std::vector<Tensor> xs;
  std::vector<std::string> devs = devices(n);
  for (int j = 0; j < n; j++) {
    std::vector<int32_t> h(size);
    for (int64_t e = 0; e < size; e++) {
      h[e] = static_cast<int32_t>(rng() % 2001) - 1000;
      want[e] += h[e];
    }
    xs.push_back(Tensor::from_vector(h, {size}, devs[j]).realize());
  }
  std::vector<Tensor> out = allreduce(xs);
  Tensor::realize(out);
  for (int i = 0; i < n; i++) {
    EXPECT_EQ(out[i].device(), Tensor::from_vector(std::vector<int32_t>{0}, {1}, devs[i]).device());
    std::vector<int32_t> got = out[i].to_vector<int32_t>();
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(got, want) << "output on device " << i;
  }
}

TEST(Allreduce, EveryAlgorithmIsExactOnIntegers) {
  for (const Algo& algo : kAlgos)
    for (int n : {2, 3, 4, 8})
      for (int64_t size : {1, 17, 1000}) check_exact(algo, n, size);
}

TEST(Allreduce, EveryAlgorithmIsExactOnALargeUnevenSize) {
  // 2^18 + 7 elements: above the automatic choice's threshold; no chunk count divides it.
  int64_t size = (int64_t{1} << 18) + 7;
  for (const Algo& algo : kAlgos)
    for (int n : {2, 3, 4, 8}) check_exact(algo, n, size);
}

// Copies in the schedule of an allreduce of N int32 elements on n devices.
size_t copies(int n, int64_t N) {
  std::vector<Tensor> xs;
  for (const std::string& d : devices(n)) xs.push_back(Tensor::zeros({N}, dtypes::int32, d).contiguous().realize());
  std::vector<NodeRef> roots;
  for (const Tensor& t : allreduce(xs)) roots.push_back(t.node());
  Schedule s = create_schedule(make(Op::SINK, dtypes::void_, roots));
  size_t c = 0;
  for (const ScheduleItem& it : s.items) c += it.kind == ScheduleItem::Kind::Copy;
  return c;
}

TEST(Allreduce, AlgorithmsMoveTheExpectedChunks) {
  int64_t N = 4096;  // every chunk non-empty
  {
    Knobs k(0, 0, 0);
    EXPECT_EQ(copies(4, N), 12u);  // naive: each device pulls the 3 others
  }
  {
    Knobs k(2, 0, 0);
    EXPECT_EQ(copies(4, N), 24u);  // ring: 4 chunks x (3 reduce hops + 3 gather hops)
  }
  {
    Knobs k(0, 2, 0);
    EXPECT_EQ(copies(4, N), 24u);  // all-to-all: 4 chunks x (3 in + 3 out)
  }
  {
    // 2 nodes x 2: per chunk, 2 intra-node pulls, 2 inter-node exchanges, 2 intra-node gathers
    Knobs k(0, 0, 2);
    EXPECT_EQ(copies(4, N), 12u);
  }
  {
    Knobs k(1, 0, 0);  // automatic: small -> naive, large -> ring
    EXPECT_EQ(copies(4, 1000), 12u);
    EXPECT_EQ(copies(4, (int64_t{1} << 18) + 16), 24u);
  }
}

TEST(Allreduce, MismatchedNodeSizeIsAUserError) {
  Knobs k(0, 0, 3);
  std::vector<Tensor> xs;
  for (const std::string& d : devices(4)) xs.push_back(Tensor::ones({8}, dtypes::float32, d));
  std::vector<Tensor> out = allreduce(xs);
  try {
    Tensor::realize(out);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ALLREDUCE_NODE_NDEVS=3"), std::string::npos) << e.what();
  }
}

// Float sums depend on the order of the adds: every replica must still hold the same bits.
void check_float_replicas(const Algo& algo, int n, bool cast) {
  SCOPED_TRACE(std::string(algo.name) + (cast ? " (bf16 transfers)" : ""));
  Knobs knobs(algo.ring, algo.all2all, algo.hierarchical ? node_ndevs(n) : 0, cast);
  Tensor::manual_seed(7);
  int64_t N = 1003;
  std::vector<Tensor> xs;
  std::vector<double> want(N, 0);
  for (const std::string& d : devices(n)) {
    Tensor x = (Tensor::randn({N}) * 1000).to(d).realize();
    std::vector<float> h = x.to_vector<float>();
    for (int64_t e = 0; e < N; e++) want[e] += h[e];
    xs.push_back(x);
  }
  std::vector<Tensor> out = allreduce(xs);
  Tensor::realize(out);
  std::vector<float> first = out[0].to_vector<float>();
  for (int i = 1; i < n; i++) {
    std::vector<float> got = out[i].to_vector<float>();
    EXPECT_EQ(std::memcmp(got.data(), first.data(), first.size() * sizeof(float)), 0) << "replica " << i;
  }
  double tol = cast ? 4e-3 : 1e-6;  // bf16 keeps 8 bits of mantissa per hop
  for (int64_t e = 0; e < N; e++)
    EXPECT_NEAR(first[e], want[e], tol * n * 3000) << "element " << e;
}

TEST(Allreduce, FloatReplicasAreBitwiseEqual) {
  for (const Algo& algo : kAlgos) {
    check_float_replicas(algo, 3, false);
    check_float_replicas(algo, 4, false);
    check_float_replicas(algo, 4, true);
  }
}

TEST(Allreduce, GradientReachesEveryInput) {
  std::vector<std::string> devs = devices(3);
  std::vector<Tensor> xs, ws;
  for (int j = 0; j < 3; j++) {
    xs.push_back(Tensor::full({5}, j + 1.0, dtypes::float32, devs[j]).contiguous().realize().requires_grad(true));
    ws.push_back(Tensor::full({5}, 10.0 * (j + 1), dtypes::float32, devs[j]).realize());
  }
  std::vector<Tensor> out = allreduce(xs);
  Tensor loss = (out[0] * ws[0]).sum();
  for (int i = 1; i < 3; i++) loss = loss + (out[i] * ws[i]).sum().to(devs[0]);
  std::vector<Tensor> g = Tensor::gradients(loss, xs);
  for (int j = 0; j < 3; j++) {
    EXPECT_EQ(g[j].device(), xs[j].device());
    for (float v : g[j].to_vector<float>()) EXPECT_FLOAT_EQ(v, 60.0f);  // 10 + 20 + 30
  }
}

TEST(Allreduce, ReplaysInsideAJit) {
  std::vector<std::string> devs = devices(4);
  Knobs k(2, 0, 0);
  Jit step([&](const std::vector<Tensor>& in) {
    std::vector<Tensor> out = allreduce(in);
    Tensor::realize(out);
    return out;
  });
  for (int call = 0; call < 3; call++) {
    std::vector<Tensor> in;
    for (int j = 0; j < 4; j++)
      in.push_back(Tensor::full({37}, call * 10 + j, dtypes::int32, devs[j]).contiguous().realize());
    std::vector<Tensor> out = step(in);
    for (const Tensor& o : out)
      for (int32_t v : o.to_vector<int32_t>()) EXPECT_EQ(v, call * 40 + 6);
  }
}

TEST(MultiTensor, ShardedOpsAndReductionsMatchOneDevice) {
  std::vector<std::string> devs = devices(4);
  Tensor::manual_seed(3);
  Tensor x = Tensor::randn({7, 5}).realize();  // 7 rows over 4 devices: 2, 2, 2, 1
  Tensor bias = Tensor::randn({1, 5}).realize();
  MultiTensor xs = MultiTensor::shard(x, devs, 0);
  EXPECT_EQ(xs.shape(), (Shape{7, 5}));
  EXPECT_EQ(xs.shards()[3].shape(), (Shape{1, 5}));
  MultiTensor y = xs * xs + MultiTensor::replicate(bias, devs);
  std::vector<float> want = (x * x + bias).sum(0).to_vector<float>();
  MultiTensor total = y.sum({0});  // over the sharded axis: an allreduce
  EXPECT_FALSE(total.axis().has_value());
  for (const Tensor& s : total.shards()) {
    std::vector<float> got = s.to_vector<float>();
    for (size_t e = 0; e < want.size(); e++) EXPECT_NEAR(got[e], want[e], 1e-5) << e;
  }
  MultiTensor rows = y.sum({1});  // stays sharded along rows
  ASSERT_TRUE(rows.axis().has_value());
  std::vector<float> got = rows.to(devs[0]).to_vector<float>();
  std::vector<float> want_rows = (x * x + bias).sum(1).to_vector<float>();
  ASSERT_EQ(got.size(), want_rows.size());
  for (size_t e = 0; e < got.size(); e++) EXPECT_NEAR(got[e], want_rows[e], 1e-5) << e;
}

TEST(MultiTensor, MismatchedShardingIsAUserError) {
  std::vector<std::string> devs = devices(2);
  Tensor x = Tensor::ones({4, 4});
  MultiTensor a = MultiTensor::shard(x, devs, 0), b = MultiTensor::shard(x, devs, 1);
  EXPECT_THROW(a + b, Error);
  EXPECT_THROW(MultiTensor::shard(x, {}, 0), Error);
}

}  // namespace
}  // namespace lg
