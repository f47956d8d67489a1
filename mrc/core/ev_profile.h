// EV profile: the set of entropy values (paths) one QP may use, with per-EV state.
// The core treats an EV as an opaque 16-bit path handle; the driver maps it to a UDP source
// port (ECMP) or an SRv6 uSID destination. States:
//   GOOD         usable for spraying
//   ASSUMED_BAD  set by the endpoint after losses or a timeout; probed, back to GOOD after
//                `probes_to_good` consecutive probe replies
//   DENIED       set by a controller (DenyEv, DisablePlane); never used for data
// The profile never lets the endpoint's own marking drop the number of GOOD EVs below
// `min_active` (a controller's DisablePlane can: a dead port is a fact). Every state change is
// reported as an EvStateChanged event.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "mrc/core/events.h"
#include "mrc/core/prefetch.h"
#include "mrc/core/units.h"

namespace mrclab::mrc {

struct EvDescriptor {
  uint16_t id = 0;
  int plane = 0;
};

// Builds `count` EVs with ids 0..count-1 spread round-robin over `planes` planes, so that
// consecutive ids (the spraying order) alternate planes.
std::vector<EvDescriptor> MakeEvProfile(int count, int planes);

struct EvPolicyConfig {
  size_t min_active = 1;
  uint32_t losses_to_bad = 2;           // consecutive losses (no delivery in between)
  uint32_t probes_to_good = 3;          // probe replies in a row that make an EV GOOD again
  double penalty_rtts = 2.0;            // skip a lossy or slow EV for this many SRTTs
  Duration penalty_floor = Duration::Microseconds(20);
  double high_delay_factor = 3.0;       // EV SRTT above factor x the QP's SRTT: penalize
  Duration probe_interval = Duration::Microseconds(500);
  Duration probe_timeout = Duration::Milliseconds(2);
  // Correlated losses are not path failures. When set, losses charged to an EV within this
  // window of its last counted one count once towards losses_to_bad, and a retransmission
  // timeout that expires packets on several EVs at once charges each with a loss, not a timeout.
  // On a shared CPU one stalled thread or socket delays many packets of a QP at once, which no
  // single failed path explains; a dead path still goes ASSUMED_BAD after losses_to_bad losses
  // a window apart (penalized, and so mostly avoided, from the first). Zero: every loss counts
  // and every timeout is the path's (the fabric semantics).
  Duration correlated_loss_window = Duration::Zero();
};

struct EvCounters {
  uint64_t tx_data = 0, tx_acks = 0, rx_packets = 0;  // those every packet moves first
  uint64_t tx_retransmits = 0, tx_probes = 0;
  uint64_t losses = 0, timeouts = 0, probe_replies = 0;
  uint64_t spurious_losses = 0;  // losses taken back: the copy declared lost arrived
};

struct EvStatus {
  uint16_t id = 0;
  int plane = 0;
  EvState state = EvState::kGood;
  Duration srtt;  // zero until sampled
  EvCounters counters;
};

class EvTable {
 public:
  EvTable(uint32_t qpn, std::vector<EvDescriptor> evs, const EvPolicyConfig& config,
          EventSink* sink);

  size_t size() const { return entries_.size(); }
  // Index of EV `id`, or -1.
  int IndexOf(uint16_t id) const;
  // Prefetches the first line of EV `id`'s entry (all a packet reads) where MakeEvProfile's
  // profiles have it (a hint; changes nothing).
  void Prefetch(uint16_t id) const {
    if (id >= entries_.size()) return;
    PrefetchLine(&entries_[id]);
  }
  const EvPolicyConfig& config() const { return config_; }

  // Two lines, the first all that a packet reads and moves (its counters first among them);
  // the rest on the second, read on losses, probes and EV changes.
  struct alignas(64) Entry {
    EvDescriptor desc;
    EvState state = EvState::kGood;
    EvReason reason = EvReason::kLoss;  // of the latest transition
    uint32_t consecutive_losses = 0;
    Timestamp penalized_until;
    Duration srtt;
    EvCounters counters;
    Timestamp last_counted_loss;  // when consecutive_losses last grew (correlated_loss_window)
    uint32_t probe_successes = 0;
    Timestamp next_probe_at;
  };
  Entry& at(size_t i) { return entries_[i]; }
  const Entry& at(size_t i) const { return entries_[i]; }

  size_t GoodCount() const;
  size_t AssumedBadCount() const { return assumed_bad_; }  // O(1): the prober's fast path
  // Every EV DENIED (a controller disabled every plane): nothing, not even an ACK, can leave.
  bool AllDenied() const { return !entries_.empty() && denied_ == entries_.size(); }
  bool Usable(size_t i, Timestamp now) const {
    return entries_[i].state == EvState::kGood && entries_[i].penalized_until <= now;
  }

  // Feedback from loss recovery. `penalty` is the current penalty length (scaled by SRTT).
  void OnDelivered(size_t i, Timestamp now, std::optional<Duration> rtt, Duration qp_srtt,
                   Duration penalty);
  // Returns true when this loss moved the EV to ASSUMED_BAD.
  bool OnLoss(size_t i, Timestamp now, bool timeout, Duration penalty);
  // A loss counted by OnLoss was not one (the copy declared lost was delivered after all):
  // takes it back, lifts the EV's penalty once no counted loss is left, and returns an EV
  // that this kind of loss made ASSUMED_BAD to GOOD at once. True when the EV changed state.
  bool OnSpuriousLoss(size_t i, Timestamp now);
  void OnProbeReply(size_t i, Timestamp now);
  void OnProbeTimeout(size_t i, Timestamp now);

  // Controller.
  bool Deny(size_t i, Timestamp now);  // refuses below min_active
  bool Allow(size_t i, Timestamp now);
  size_t SetPlane(int plane, bool enabled, Timestamp now);

  std::vector<EvStatus> List() const;

 private:
  void Transition(size_t i, EvState to, EvReason reason, Timestamp now);

  // 120 bytes: a QP's copy sits on two of the lines every datagram reads.
  std::vector<Entry> entries_;
  EvPolicyConfig config_;
  EventSink* sink_;
  uint32_t qpn_;
  uint32_t assumed_bad_ = 0;  // entries in EvState::kAssumedBad
  uint32_t denied_ = 0;       // entries in EvState::kDenied
};

}  // namespace mrclab::mrc
