#include "emulator/netns/link_shaping.h"

#include <algorithm>
#include <stdexcept>

#include "emulator/lab_spec.h"
#include "emulator/netns/processes.h"

namespace mrclab::emulator::netns {

std::vector<std::string> TbfArgs(const std::string& ifname, uint64_t rate_bps) {
  const uint64_t burst = std::max<uint64_t>(rate_bps / 8 / 500, 32 * 1024);  // 2 ms of traffic
  return {"qdisc", "replace", "dev",   ifname, "root", "tbf", "rate", std::to_string(rate_bps) + "bit",
          "burst", std::to_string(burst), "latency", "20ms"};
}

void ShapeInterface(const std::string& netns, const std::string& ifname,
                    std::optional<uint64_t> rate_bps) {
  std::vector<std::string> argv = {"tc", "-n", netns};
  if (rate_bps) {
    for (std::string& arg : TbfArgs(ifname, *rate_bps)) argv.push_back(std::move(arg));
  } else {
    argv.insert(argv.end(), {"qdisc", "del", "dev", ifname, "root"});
  }
  std::string output;
  if (RunAndWait(argv, &output) == 0) return;
  // Deleting the root qdisc of an interface that has only its default one is not an error.
  if (!rate_bps && output.find("handle of zero") != std::string::npos) return;
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  throw std::runtime_error(netns + ":" + ifname + ": " +
                           (rate_bps ? "shaping to " + FormatRate(*rate_bps) : "removing the shaping") +
                           " failed: " + output);
}
}  // namespace mrclab::emulator::netns
