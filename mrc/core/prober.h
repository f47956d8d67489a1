// Prober: sends MRC_PROBE packets on ASSUMED_BAD EVs every `probe_interval` (one outstanding
// per EV) and on controller request, matches PROBE_REPLY by probe id, and times probes out
// after `probe_timeout`. Successes and timeouts feed the EvTable; controller probes also emit a
// ProbeCompleted event with the measured RTT.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "mrc/core/ev_profile.h"
#include "mrc/core/ring_queue.h"

namespace mrclab::mrc {

class Prober {
 public:
  struct ToSend {
    size_t ev_index;
    uint32_t probe_id;
  };

  // Controller probe: returns the probe id reported in ProbeCompleted.
  uint32_t Request(size_t ev_index);
  // Next probe to transmit now, if any; the caller must send it (marks it outstanding at now).
  std::optional<ToSend> Next(EvTable& table, Timestamp now);
  // A reply arrived; returns the RTT if the id was outstanding.
  std::optional<Duration> OnReply(uint32_t probe_id, EvTable& table, Timestamp now,
                                  EventSink* sink, uint32_t qpn);
  Timestamp NextTimeout(const EvTable& table) const;
  void OnTimeout(EvTable& table, Timestamp now, EventSink* sink, uint32_t qpn);

 private:
  struct Outstanding {
    uint32_t id;
    size_t ev_index;
    Timestamp sent_at;
    bool controller;
  };
  uint32_t next_id_ = 1;
  RingQueue<ToSend> requested_;
  std::vector<Outstanding> outstanding_;
};

}  // namespace mrclab::mrc
