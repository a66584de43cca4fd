#include "runtime/program_build.h"

#include <cstdio>
#include <mutex>

#include "base/config.h"
#include "ir/attention.h"
#include "runtime/beam.h"
#include "runtime/disk_cache.h"

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
