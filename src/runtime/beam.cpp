#include "runtime/beam.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include "base/config.h"
#include "base/error.h"
#include "ir/graph.h"
#include "runtime/beam_check.h"
#include "runtime/buffer.h"
#include "runtime/disk_cache.h"
#include "runtime/program_build.h"
#include "runtime/realize.h"

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

// Arguments for timing runs: real inputs, scratch outputs (the first slots) so nothing is
// overwritten. An output the kernel also reads (an in-place update: m <- m*b1 + g) starts from a
// copy of its buffer's values, the others from poison (runtime/beam_check.h).
class TimingArgs {
 public:
  TimingArgs(Device& dev, const ScheduleItem& item) : dev_(dev) {
    std::vector<bool> read(item.outputs, false);
    for (const Node* n : toposort(item.ast))
      if (n->op == Op::LOAD && n->src[0]->op == Op::INDEX && n->src[0]->src[0]->op == Op::DEFINE_GLOBAL)
        if (size_t k = static_cast<size_t>(n->src[0]->src[0]->get_arg<int64_t>()); k < read.size())
          read[k] = true;
    std::vector<void*> ptrs;
    for (size_t k = 0; k < item.outputs; k++) {
      const Node& out = *item.buffers[k];
      size_t bytes = static_cast<size_t>(out.get_arg<BufferArg>().size) * itemsize(out.dtype);
      outs_.push_back({allocate(dev.allocator(), bytes), bytes, out.dtype, {}});
      if (read[k]) {
        outs_.back().start.resize(bytes);
        dev.allocator().copy_out(outs_.back().start.data(), buffer_memory(out).ptr, bytes);
        in_place_ = true;
      }
      ptrs.push_back(outs_.back().ptr);
    }
    args = kernel_args(item, ptrs);
  }
  ~TimingArgs() {
    for (const Scratch& o : outs_) dev_.allocator().free(o.ptr, o.bytes);
  }
  TimingArgs(const TimingArgs&) = delete;
  TimingArgs& operator=(const TimingArgs&) = delete;
  KernelArgs args;

  // Before a candidate runs: every scratch output to its start (the buffer's values, or 0xFF).
  void reset() {
    for (const Scratch& o : outs_)
      if (o.start.empty())
        poison_output(dev_.allocator(), o.ptr, o.bytes);
      else
        dev_.allocator().copy_in(o.ptr, o.start.data(), o.bytes);
  }
  // Whether an output is also read: then each timing run starts from the last one's result, and
  // the values are checked after one more run from the start.
  bool in_place() const { return in_place_; }
  // After: what it wrote, by output (each whole buffer, as bytes).
  std::vector<std::vector<uint8_t>> outputs() const {
    std::vector<std::vector<uint8_t>> host;
    for (const Scratch& o : outs_) {
      host.emplace_back(o.bytes);
      dev_.allocator().copy_out(host.back().data(), o.ptr, o.bytes);
    }
    return host;
  }
  DType dtype(size_t k) const { return outs_[k].dtype; }

 private:
  struct Scratch {
    void* ptr;
    size_t bytes;
    DType dtype;
    std::vector<uint8_t> start;  // an output the kernel reads: its buffer's values; else empty
  };
  Device& dev_;
  std::vector<Scratch> outs_;
  bool in_place_ = false;
};

// The output every candidate must match: the first candidate of the search that ran (the first
// start, the device's heuristic choice, unless it failed to build).
struct Reference {
  std::vector<std::vector<uint8_t>> outputs;  // by output slot
  std::vector<Opt> opts;
  bool set = false;
  size_t rejected = 0;  // candidates whose values did not match
};

// The fastest of up to three runs; a run slower than `give_up` seconds ends the timing there (a
// candidate already that far behind the best one is not worth two more runs of a big kernel). The
// first run also warms caches: inputs and the scratch output are resident from earlier candidates.
double time_program(Program& p, const KernelArgs& args, double give_up) {
  double best = kInf;
  for (int i = 0; i < 3; i++) {
    best = std::min(best, p.timed_run(args));
    if (best > give_up) break;
  }
  return best;
}

// Whether candidate c's output (in the scratch buffer) matches the reference; the first candidate
// to run sets it. A mismatch is reported on stderr: it is a codegen bug to file.
bool matches_reference(const ScheduleItem& item, const Candidate& c, const TimingArgs& timing, Reference& ref) {
  std::vector<std::vector<uint8_t>> outs = timing.outputs();
  if (!ref.set) {
    ref.outputs = std::move(outs);
    ref.opts = c.opts;
    ref.set = true;
    return true;
  }
  std::string why;
  for (size_t k = 0; k < outs.size() && why.empty(); k++) {
    why = output_mismatch(ref.outputs[k], outs[k], timing.dtype(k));
    if (!why.empty() && outs.size() > 1) why = str("output ", k, ": ", why);
  }
  if (why.empty()) return true;
  ref.rejected++;
  std::fprintf(stderr, "BEAM: kernel %s: the Opts %s compute other values than %s (%s); not a candidate\n",
               item.name.c_str(), to_string(c.opts).c_str(), to_string(ref.opts).c_str(), why.c_str());
  return false;
}

// Lowers and compiles every candidate (compile_programs: together, on every core), then runs them one at a
// time with nothing else running: each on scratch outputs reset to their start (TimingArgs), timed, then
// checked against the reference (a candidate that does not match gets no time). `fastest` is the best time
// seen in this search so far (updated).
void measure(Device& dev, const ScheduleItem& item, std::vector<Candidate>& cands, TimingArgs& timing, Reference& ref,
             double& fastest) {
  int lanes = dev.renderer() ? dev.renderer()->vector_lanes() : 0;
  std::vector<std::unique_ptr<Program>> programs(cands.size());
  std::vector<std::optional<PendingProgram>> pending(cands.size());  // none: the Opts do not apply
  std::vector<std::pair<Device*, PendingProgram*>> to_compile;
  for (size_t i = 0; i < cands.size(); i++) {
    try {
      pending[i] = render_program(dev, lower_kernel(item.ast, item.name, cands[i].opts, lanes));
    } catch (const OptError&) {
      continue;
    }
    if (pending[i]->needs_compile) to_compile.emplace_back(&dev, &*pending[i]);
  }
  compile_programs(to_compile);
  std::vector<const LinearProgram*> loads;
  for (auto& p : pending)
    if (p) loads.push_back(&p->prog);
  dev.prepare_loads(loads);
  for (size_t i = 0; i < cands.size(); i++)
    if (pending[i]) programs[i] = load_program(dev, *pending[i]).program;
  for (size_t i = 0; i < cands.size(); i++) {
    if (!programs[i]) continue;
    timing.reset();
    double seconds = time_program(*programs[i], timing.args, 1.5 * fastest);
    if (timing.in_place()) {
      timing.reset();
      programs[i]->run(timing.args);
    }
    if (!matches_reference(item, cands[i], timing, ref)) continue;
    cands[i].seconds = seconds;
    fastest = std::min(fastest, seconds);
  }
}

// The lists not seen before among `lists` (recorded as seen).
std::vector<Candidate> unseen(const std::vector<std::vector<Opt>>& lists, std::set<std::string>& seen) {
  std::vector<Candidate> out;
  for (const std::vector<Opt>& opts : lists)
    if (seen.insert(to_string(opts)).second) out.push_back({opts, kInf});
  return out;
}

// The fastest first.
void by_time(std::vector<Candidate>& cands) {
  std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) { return a.seconds < b.seconds; });
}

// The CPU space: a step appends one Opt.
class AppendSpace : public BeamSpace {
 public:
  AppendSpace(NodeRef ast, std::vector<Opt> start) : ast_(std::move(ast)), start_(std::move(start)) {}
  std::vector<std::vector<Opt>> starts() override { return {start_}; }
  std::vector<std::vector<Opt>> next(const std::vector<Opt>& opts) override {
    NodeRef k;
    try {
      k = apply_opts(ast_, opts);
    } catch (const OptError&) {
      return {};
    }
    // PACKs stay last (codegen/opt.h): another action goes in front of them
    auto packs = std::find_if(opts.begin(), opts.end(), [](const Opt& o) { return o.kind == OptKind::PACK; });
    std::vector<std::vector<Opt>> out;
    for (const Opt& o : beam_actions(k)) {
      out.push_back(opts);
      out.back().insert(
          o.kind == OptKind::PACK ? out.back().end() : out.back().begin() + (packs - opts.begin()), o);
    }
    return out;
  }

 private:
  NodeRef ast_;
  std::vector<Opt> start_;
};

}  // namespace

std::vector<Opt> beam_actions(const NodeRef& ast) {
  std::vector<Opt> acts;
  std::vector<NodeRef> axes = kernel_axes(ast);
  for (int a = 0; a < static_cast<int>(axes.size()); a++) {
    bool reduce = axes[a]->get_arg<RangeArg>().type == AxisType::REDUCE;
    if (reduce) {
      for (int n : {2, 4, 8}) acts.push_back({OptKind::UNROLL, a, n});
      acts.push_back({OptKind::UPCAST, a, 16});  // 16 partial sums: one vector (codegen/vectorize.h)
      for (int n : {128, 256, 512}) acts.push_back({OptKind::KBLOCK, a, n});  // blocks of the reduction
    } else {
      for (int n : {2, 4, 8, 16}) acts.push_back({OptKind::UPCAST, a, n});
      for (int n : {8, 16, 32}) acts.push_back({OptKind::LOCAL, a, n});
      if (a > 0) acts.push_back({OptKind::THREAD, a, 0});
    }
  }
  // a packed copy of each input read along a reduction (codegen/pack.h; it refuses the others)
  std::vector<int64_t> slots;
  for (const Node* n : toposort(ast))
    if (n->op == Op::LOAD && n->src[0]->op == Op::INDEX && n->src[0]->src[0]->op == Op::DEFINE_GLOBAL)
      if (int64_t s = n->src[0]->src[0]->get_arg<int64_t>();
          std::find(slots.begin(), slots.end(), s) == slots.end())
        slots.push_back(s);
  for (int64_t s : slots) acts.push_back({OptKind::PACK, static_cast<int>(s), 0});
  return acts;
}

std::unique_ptr<BeamSpace> append_beam_space(const NodeRef& ast, std::vector<Opt> start) {
  return std::make_unique<AppendSpace>(ast, std::move(start));
}

std::vector<Opt> beam_search(Device& dev, const ScheduleItem& item, int width) {
  std::unique_ptr<BeamSpace> space = dev.beam_space(item.ast);
  LG_CHECK(space, dev.name(), " has no BEAM search space");
  return beam_search(dev, item, *space, width);
}

std::vector<Opt> beam_search(Device& dev, const ScheduleItem& item, BeamSpace& space, int width) {
  LG_CHECK(width > 0, "beam width ", width);
  std::string key = str("beam ", width, " values checked\n", dev.name().substr(0, dev.name().find(':')), "\n",
                        dev.compiler() ? dev.compiler()->key() : "", "\n", to_string(item.ast));
  if (auto hit = cache_get("beam", key)) return deserialize(*hit);
  auto t0 = std::chrono::steady_clock::now();
  TimingArgs timing(dev, item);
  std::set<std::string> seen;
  // The first start is the heuristic's choice, so the result is never slower than the default as
  // measured here; no Opts at all is a start only when the heuristic picks none (an unoptimized big
  // kernel can take minutes to time).
  std::vector<Candidate> beam = unseen(space.starts(), seen);
  LG_CHECK(!beam.empty(), item.name, ": the BEAM space has no start");
  double fastest = kInf;
  Reference ref;
  measure(dev, item, beam, timing, ref, fastest);
  const Candidate start = beam[0];
  by_time(beam);
  Candidate best = beam[0];
  beam.resize(std::min<size_t>(beam.size(), static_cast<size_t>(width)));
  size_t tried = seen.size();
  for (int round = 0; round < 8 && best.seconds < kInf; round++) {
    std::vector<Candidate> next;
    for (const Candidate& c : beam)
      for (Candidate& n : unseen(space.next(c.opts), seen)) next.push_back(std::move(n));
    measure(dev, item, next, timing, ref, fastest);
    tried += next.size();
    by_time(next);
    if (next.empty() || next[0].seconds == kInf) break;
    if (config().debug >= 2)
      std::fprintf(stderr, "beam %s round %d: %zu candidates, best %.1f us %s\n", item.name.c_str(), round, next.size(),
                   next[0].seconds * 1e6, to_string(next[0].opts).c_str());
    // A new best must win by 1%: less is within the timing noise, and the search stops there.
    if (next[0].seconds >= best.seconds * 0.99) break;
    best = next[0];
    next.resize(std::min<size_t>(next.size(), static_cast<size_t>(width)));
    beam = std::move(next);
  }
  LG_USER_CHECK(best.seconds < kInf, "BEAM: no candidate for kernel ", item.name, " on ", dev.name(),
                " could be built and timed; run without BEAM");
  if (config().debug >= 2)
    std::fprintf(stderr, "beam %s: %zu candidates (%zu with other values) in %.1f s, chose %s (%.1f us; the heuristic's %s: %.1f us)\n",
                 item.name.c_str(), tried, ref.rejected, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                 to_string(best.opts).c_str(), best.seconds * 1e6, to_string(start.opts).c_str(), start.seconds * 1e6);
  std::string s = serialize(best.opts);
  cache_put("beam", key, std::vector<uint8_t>(s.begin(), s.end()));
  return best.opts;
}

}  // namespace lg
