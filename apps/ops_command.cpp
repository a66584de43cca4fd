#include <cstdio>
#include <string>

#include "apps/commands.h"
#include "ir/ops.h"

namespace lg::apps {

static const char* group_name(OpGroup g) {
  switch (g) {
    case OpGroup::Meta: return "meta";
    case OpGroup::Buffer: return "buffer";
    case OpGroup::Const: return "const";
    case OpGroup::Unary: return "unary";
    case OpGroup::Binary: return "binary";
    case OpGroup::Ternary: return "ternary";
    case OpGroup::Movement: return "movement";
    case OpGroup::Reduce: return "reduce";
    case OpGroup::Kernel: return "kernel";
    case OpGroup::Program: return "program";
  }
  return "?";
}

void add_ops_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("ops", "print every op of the IR (src/ir/ops.def) with its meaning");
  cmd->callback([] {
    for (int i = 0; i < kNumOps; i++) {
      const OpInfo& info = op_info(static_cast<Op>(i));
      std::string n = info.nsrc < 0 ? "n" : std::to_string(info.nsrc);
      std::printf("%-14s %-9s src=%-2s %.*s\n", std::string(info.name).c_str(), group_name(info.group),
                  n.c_str(), static_cast<int>(info.meaning.size()), info.meaning.data());
    }
  });
}

}  // namespace lg::apps
