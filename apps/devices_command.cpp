#include <cstdio>

#include "apps/commands.h"
#include "base/config.h"
#include "runtime/device.h"

namespace lg::apps {

void add_devices_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "list the device kinds of this build and the default device");
  cmd->callback([] {
    for (const std::string& k : device_kinds()) std::printf("%s\n", k.c_str());
    get_device(config().device);  // an unknown DEVICE= is reported as an error here
    std::printf("default: %s (set DEVICE= to change)\n", config().device.c_str());
  });
}

}  // namespace lg::apps
