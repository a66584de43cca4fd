#include <algorithm>
#include <cstdio>
#include <thread>

#include "apps/commands.h"
#include "base/config.h"
#include "runtime/device.h"
#include "runtime/gpu_peaks.h"
#include "runtime/host_cpu.h"

namespace lg::apps {

void add_devices_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices",
                                 "list the device kinds of this build, the default device (a GPU: its name "
                                 "and peaks) and the host processor");
  cmd->callback([] {
    for (const std::string& k : device_kinds()) std::printf("%s\n", k.c_str());
    const Device& device = get_device(config().device);  // an unknown DEVICE= is reported as an error here
    std::printf("default: %s (set DEVICE= to change)\n", config().device.c_str());
    // a GPU: its name and the peaks MFU is measured against (tools/gpu_check.sh reads this line)
    if (std::string gpu = device.hardware(); !gpu.empty()) std::printf("%s\n", describe_gpu(gpu).c_str());
    // what CPU kernels are compiled for (their cache key names the signature: runtime/host_cpu.h)
    std::printf("host: %u cores, %s (%s)\n", std::max(1u, std::thread::hardware_concurrency()),
                host_cpu_model().c_str(), host_cpu_signature().c_str());
  });
}

}  // namespace lg::apps
