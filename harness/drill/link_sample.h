// Cumulative counters of one link end at one time, as drills record them (links.csv).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace mrclab::harness {

struct LinkSample {
  int link = 0;     // index into ResolvedLab::links
  std::string end;  // "node:interface"
  uint64_t rx_packets = 0, tx_packets = 0, rx_dropped = 0, tx_dropped = 0;
  // The most bytes its egress queue held since the run began; only a simulation knows it
  // (the kernel keeps no high-water mark of a qdisc).
  std::optional<uint64_t> queue_peak_bytes;

  // Whether the end has counted anything yet (links.csv lists it only from then on).
  bool Counted() const {
    return rx_packets || tx_packets || rx_dropped || tx_dropped || (queue_peak_bytes && *queue_peak_bytes);
  }
};

}  // namespace mrclab::harness
