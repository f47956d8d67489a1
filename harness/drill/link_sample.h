// Cumulative counters of one link end at one time, as drills record them (links.csv).
#pragma once

#include <cstdint>
#include <string>

namespace mrclab::harness {

struct LinkSample {
  int link = 0;     // index into ResolvedLab::links
  std::string end;  // "node:interface"
  uint64_t rx_packets = 0, tx_packets = 0, rx_dropped = 0, tx_dropped = 0;
};

}  // namespace mrclab::harness
