#include "runtime/beam.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <limits>
#include <sstream>

#include "base/config.h"
#include "base/error.h"
#include "ir/graph.h"
#include "runtime/buffer.h"
#include "runtime/disk_cache.h"
#include "runtime/program_build.h"
#include "runtime/thread_pool.h"

namespace lg {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Candidate {
  std::vector<Opt> opts;
  double seconds = kInf;
};

std::string serialize(const std::vector<Opt>& opts) {
  std::ostringstream os;
  for (const Opt& o : opts) os << static_cast<int>(o.kind) << ' ' << o.axis << ' ' << o.amount << '\n';
  return os.str();
}

std::vector<Opt> deserialize(const std::vector<uint8_t>& bytes) {
  std::istringstream is(std::string(bytes.begin(), bytes.end()));
  std::vector<Opt> opts;
  int k, a, n;
  while (is >> k >> a >> n) opts.push_back({static_cast<OptKind>(k), a, n});
  return opts;
}

// Arguments for timing runs: real inputs, a scratch output (slot 0) so nothing is overwritten.
class TimingArgs {
 public:
  TimingArgs(Device& dev, const ScheduleItem& item) : dev_(dev) {
    const Node& out = *item.buffers[0];
    bytes_ = static_cast<size_t>(out.get_arg<BufferArg>().size) * itemsize(out.dtype);
    scratch_ = dev.allocator().alloc(bytes_);
    for (const NodeRef& b : item.buffers) {
      args.buffers.push_back(b == item.buffers[0] ? scratch_ : buffer_memory(*b).ptr);
      args.sizes.push_back(b->get_arg<BufferArg>().size);
    }
  }
  ~TimingArgs() { dev_.allocator().free(scratch_, bytes_); }
  KernelArgs args;

 private:
  Device& dev_;
  void* scratch_;
  size_t bytes_;
};

// Median of three timed runs after one warm-up run.
double time_program(Program& p, const KernelArgs& args) {
  p.run(args);
  double t[3];
  for (double& x : t) {
    auto t0 = std::chrono::steady_clock::now();
    p.run(args);
    x = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::sort(t, t + 3);
  return t[1];
}

// Lowers and compiles every candidate (in parallel), then times them one at a time.
void measure(Device& dev, const ScheduleItem& item, std::vector<Candidate>& cands, const KernelArgs& args) {
  std::vector<std::future<std::unique_ptr<Program>>> built;
  for (Candidate& c : cands)
    built.push_back(std::async(std::launch::deferred, [&dev, &item, &c]() -> std::unique_ptr<Program> {
      try {
        return build_program(dev, lower_kernel(item.ast, item.name, c.opts, dev.renderer() ? dev.renderer()->vector_lanes() : 0)).program;
      } catch (const OptError&) {
        return nullptr;
      }
    }));
  // Compile in batches of one per core; std::launch::async would oversubscribe with many candidates.
  size_t batch = static_cast<size_t>(std::max(1, threads()));
  for (size_t i = 0; i < built.size(); i += batch) {
    std::vector<std::future<std::unique_ptr<Program>>> running;
    for (size_t j = i; j < std::min(built.size(), i + batch); j++)
      running.push_back(std::async(std::launch::async, [&built, j] { return built[j].get(); }));
    for (size_t j = 0; j < running.size(); j++) {
      std::unique_ptr<Program> p = running[j].get();
      cands[i + j].seconds = p ? time_program(*p, args) : kInf;
    }
  }
}

}  // namespace

std::vector<Opt> beam_actions(const NodeRef& ast) {
  std::vector<Opt> acts;
  std::vector<NodeRef> axes = kernel_axes(ast);
  for (int a = 0; a < static_cast<int>(axes.size()); a++) {
    bool reduce = axes[a]->get_arg<RangeArg>().type == AxisType::REDUCE;
    if (reduce) {
      for (int n : {2, 4, 8}) acts.push_back({OptKind::UNROLL, a, n});
      acts.push_back({OptKind::UPCAST, a, 16});  // 16 partial sums: one vector (codegen/vectorize.h)
    } else {
      for (int n : {2, 4, 8, 16}) acts.push_back({OptKind::UPCAST, a, n});
      for (int n : {8, 16, 32}) acts.push_back({OptKind::LOCAL, a, n});
      if (a > 0) acts.push_back({OptKind::THREAD, a, 0});
    }
  }
  return acts;
}

std::vector<Opt> beam_search(Device& dev, const ScheduleItem& item, int width) {
  std::string key = str("beam ", width, "\n", dev.name().substr(0, dev.name().find(':')), "\n",
                        dev.compiler() ? dev.compiler()->key() : "", "\n", to_string(item.ast));
  if (auto hit = cache_get("beam", key)) return deserialize(*hit);
  TimingArgs timing(dev, item);
  std::vector<Candidate> beam{{{}, kInf}};
  measure(dev, item, beam, timing.args);
  Candidate best = beam[0];
  for (int round = 0; round < 6; round++) {
    std::vector<Candidate> next;
    for (const Candidate& c : beam) {
      NodeRef k;
      try {
        k = apply_opts(item.ast, c.opts);
      } catch (const OptError&) {
        continue;
      }
      for (const Opt& o : beam_actions(k)) {
        std::vector<Opt> opts = c.opts;
        opts.push_back(o);
        next.push_back({opts, kInf});
      }
    }
    measure(dev, item, next, timing.args);
    std::sort(next.begin(), next.end(), [](const Candidate& a, const Candidate& b) { return a.seconds < b.seconds; });
    if (next.empty() || next[0].seconds == kInf) break;
    if (config().debug >= 2)
      std::fprintf(stderr, "beam %s round %d: %zu candidates, best %.1f us %s\n", item.name.c_str(), round, next.size(),
                   next[0].seconds * 1e6, to_string(next[0].opts).c_str());
    bool improved = next[0].seconds < best.seconds * 0.99;
    if (next[0].seconds < best.seconds) best = next[0];
    if (!improved) break;
    next.resize(std::min<size_t>(next.size(), static_cast<size_t>(width)));
    beam = std::move(next);
  }
  std::string s = serialize(best.opts);
  cache_put("beam", key, std::vector<uint8_t>(s.begin(), s.end()));
  return best.opts;
}

}  // namespace lg
