#include "runtime/program_build.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <string_view>

#include "base/config.h"
#include "ir/attention.h"
#include "runtime/beam.h"
#include "runtime/disk_cache.h"
#include "runtime/thread_pool.h"

namespace lg {

PendingProgram render_program(Device& dev, LinearProgram prog) {
  PendingProgram p{std::move(prog), "", {}, false};
  if (const Renderer* r = dev.renderer()) {
    p.source = r->render(p.prog);
    if (config().debug >= 4) std::fprintf(stderr, "=== %s source ===\n%s\n", p.prog.name.c_str(), p.source.c_str());
    if (auto hit = cache_get("kernels", dev.compiler()->key() + "\n" + p.source))
      p.binary = std::move(*hit);
    else
      p.needs_compile = true;
  }
  return p;
}

void compile_program(Device& dev, PendingProgram& p) {
  if (!p.needs_compile || !p.binary.empty()) return;
  p.binary = dev.compiler()->compile(p.source);
  cache_put("kernels", dev.compiler()->key() + "\n" + p.source, p.binary);
}

namespace {

// One Compiler::compile_many call: distinct sources, and the programs each one's binary goes to.
struct CompileGroup {
  const Compiler* compiler = nullptr;
  std::string key;  // the compiler's identity (Compiler::key)
  std::vector<std::string_view> sources;
  std::vector<std::vector<PendingProgram*>> programs;  // by source
  size_t bytes = 0;
};

// Source bytes a group of a batching compiler aims at. A compiler run's start is what batching
// saves (clang: about 0.09 s; its compile about 2.3 ms a KiB of C), so past this size a group saves
// little, and smaller groups keep the workers evenly busy: BEAM's candidates of 500 KiB and more
// each compiled 7 to a group took 8.6 s in one group and 11.0 s in the other.
constexpr size_t kGroupBytes = 512 << 10;

// The groups of the programs that need a compile: per compiler identity, the distinct sources dealt
// into groups of about equal bytes where the compiler batches (threads() groups, more when they
// would exceed kGroupBytes), else one source a group. The largest sources are dealt first, each to
// the lightest group, so a source over kGroupBytes mostly has a group of its own. A source's bytes
// are those after the beginning all of them share.
std::vector<CompileGroup> compile_groups(const std::vector<std::pair<Device*, PendingProgram*>>& programs) {
  struct Sources {
    const Compiler* compiler;
    std::map<std::string_view, std::vector<PendingProgram*>> by_source;  // views of the programs' sources
  };
  std::map<std::string, Sources> by_key;
  for (auto& [dev, p] : programs) {
    if (!p->needs_compile || !p->binary.empty()) continue;
    const Compiler* c = dev->compiler();
    Sources& s = by_key.try_emplace(c->key(), Sources{c, {}}).first->second;
    s.by_source[p->source].push_back(p);
  }
  std::vector<CompileGroup> groups;
  for (auto& [key, s] : by_key) {
    std::vector<std::pair<std::string_view, std::vector<PendingProgram*>*>> items;
    for (auto& [src, ps] : s.by_source) items.emplace_back(src, &ps);
    // A unit compiles the sources' shared beginning (the renderer's prelude) once: what a source
    // adds to a group is the rest of it.
    size_t shared = items[0].first.size();
    for (auto& [src, ps] : items)
      shared = std::mismatch(src.begin(), src.begin() + std::min(shared, src.size()), items[0].first.begin())
                   .first -
               src.begin();
    std::stable_sort(items.begin(), items.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    size_t total = 0;
    for (auto& item : items) total += item.first.size() - shared;
    size_t n = s.compiler->batches()
                   ? std::min(items.size(), std::max(static_cast<size_t>(std::max(1, threads())),
                                                     (total + kGroupBytes - 1) / kGroupBytes))
                   : items.size();
    size_t first = groups.size();
    for (size_t g = 0; g < n; g++) groups.push_back({s.compiler, key, {}, {}, 0});
    for (auto& [src, ps] : items) {
      CompileGroup& g =
          *std::min_element(groups.begin() + first, groups.end(),
                            [](const CompileGroup& a, const CompileGroup& b) { return a.bytes < b.bytes; });
      g.sources.push_back(src);
      g.programs.push_back(*ps);
      g.bytes += src.size() - shared;
    }
  }
  return groups;
}

}  // namespace

void compile_programs(const std::vector<std::pair<Device*, PendingProgram*>>& programs) {
  std::vector<CompileGroup> groups = compile_groups(programs);
  if (groups.empty()) return;
  std::atomic<size_t> next{0};
  std::mutex error_mu;
  std::exception_ptr error;
  auto run = [&](CompileGroup& g) {
    std::vector<std::vector<uint8_t>> bins = g.compiler->compile_many({g.sources.begin(), g.sources.end()});
    for (size_t i = 0; i < g.sources.size(); i++) {
      cache_put("kernels", g.key + "\n" + std::string(g.sources[i]), bins[i]);
      for (PendingProgram* p : g.programs[i]) p->binary = bins[i];
    }
  };
  parallel_for(std::min<int64_t>(threads(), static_cast<int64_t>(groups.size())), [&](int64_t b, int64_t e) {
    for (int64_t w = b; w < e; w++)  // each worker takes the next group until none is left
      for (size_t j; (j = next++) < groups.size();) try {
          run(groups[j]);
        } catch (...) {
          std::lock_guard lock(error_mu);
          if (!error) error = std::current_exception();
        }
  });
  if (error) std::rethrow_exception(error);
}

BuiltProgram load_program(Device& dev, PendingProgram& p) {
  compile_program(dev, p);
  return {dev.load(p.prog, p.source, p.binary), p.needs_compile};
}

BuiltProgram build_program(Device& dev, const LinearProgram& prog) {
  PendingProgram p = render_program(dev, prog);
  return load_program(dev, p);
}

std::vector<Opt> choose_opts(Device& dev, const ScheduleItem& item) {
  if (config().noopt || !dev.renderer()) return {};
  if (is_attention_kernel(item.ast)) return dev.heuristic_opts(item.ast);  // hand-written: nothing to search
  if (config().beam > 0)
    if (std::unique_ptr<BeamSpace> space = dev.beam_space(item.ast)) return beam_search(dev, item, *space, config().beam);
  if (config().beam > 0) {
    static std::once_flag once;
    std::call_once(once, [&] { std::fprintf(stderr, "BEAM is not supported on %s yet: using its heuristic\n", dev.name().c_str()); });
  }
  return dev.heuristic_opts(item.ast);
}

}  // namespace lg
