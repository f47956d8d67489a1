// The shaping rule of a link end, shared by deploy (link_rate) and the rate fault: a token
// bucket (tbf) as the root qdisc, burst = 2 ms of traffic (at least 32 KiB), latency 20 ms.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mrclab::emulator::netns {

// tc arguments after "tc [-n NS]": "qdisc replace dev IFNAME root tbf rate Rbit burst B latency
// 20ms". Deploy joins them into `tc -batch` lines.
std::vector<std::string> TbfArgs(const std::string& ifname, uint64_t rate_bps);

// Shapes one interface of a namespace to `rate_bps` (tbf replaces the root qdisc), or, with no
// rate, deletes the root qdisc (the interface's default comes back; already default is fine).
// Throws std::runtime_error naming the namespace, the interface and tc's message.
void ShapeInterface(const std::string& netns, const std::string& ifname,
                    std::optional<uint64_t> rate_bps);

}  // namespace mrclab::emulator::netns
