#include "harness/cli/capacity_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "harness/drill/capacity_probe.h"

namespace mrclab::harness {

void AddCapacityCommand(CLI::App& app, int& exit_status) {
  static uint32_t mtu = 1024;
  static bool refresh = false, json = false;
  auto* cmd = app.add_subcommand("capacity", "Show (or measure) what this machine can forward through a lab path");
  cmd->add_option("--mtu", mtu, "Payload bytes per packet, as a scenario's job.mtu")
      ->check(CLI::Range(256, 8192))->capture_default_str();
  cmd->add_flag("--refresh", refresh, "Measure again even if a figure is cached");
  cmd->add_flag("--json", json, "Machine-readable");
  cmd->footer(
      "Measures by deploying a lab of its own (mrclab-capacity: 1 spine, 2 leaves, 2 hosts, links shaped at\n"
      "100 Gbit/s), running MRC between its hosts through the spine (best of three 1 s rounds) and\n"
      "destroying it: about 6 s, as root. The figure is packet-hops per second (packets delivered end to\n"
      "end x 4 links), cached per machine and MTU in /var/cache/mrclab/capacity.json ($MRCLAB_CACHE_DIR).\n"
      "`mrclab drill --check` compares each job's packets per step with it: a step that this machine\n"
      "could not finish within job.step_timeout is refused; otherwise the scale factor says whether\n"
      "link_rate or this machine sets the step time.\n"
      "Example: mrclab capacity --mtu 4096 --refresh");
  cmd->callback([&exit_status] {
    const bool cached = !refresh && CachedCapacity(mtu).has_value();
    const MachineCapacity c = CapacityFor(mtu, refresh, !json);
    if (json) {
      nlohmann::json j = ToJson(c);
      j["cached"] = cached;
      j["cache"] = CapacityCachePath();
      std::cout << j.dump(2) << "\n";
    } else {
      std::printf("this machine forwards %.2fM packet-hops/s at mtu %u: MRC goodput %.2f Gbit/s through a %d-link "
                  "path (%s)\n%s: %s\n",
                  c.packet_hops_per_second / 1e6, c.mtu, c.gbps, c.path_links,
                  cached ? "cached" : "measured now", CapacityCachePath().c_str(), c.machine.c_str());
    }
    exit_status = 0;
  });
}

}  // namespace mrclab::harness
