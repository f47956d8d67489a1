// Congestion control policies: a window of bytes in flight, updated from ACK feedback.
//   NsccWindow  NSCC-style: compares queuing delay (RTT minus the lowest RTT seen) with a target;
//               below target the window grows in proportion to the headroom, above target (or
//               on ECN-CE echo where the fabric marks) it shrinks in proportion to the excess,
//               at most once per RTT; losses shrink it by `loss_decrease`, once per RTT.
//   FixedWindow a constant window (for tests and for isolating recovery from CC).
#pragma once

#include <memory>
#include <optional>

#include "mrc/core/units.h"

namespace mrclab::mrc {

struct CcConfig {
  enum class Kind { kNscc, kFixed } kind = Kind::kNscc;
  Bytes initial_window{256 * 1024};
  Bytes min_window{4096};
  Bytes max_window{8 * 1024 * 1024};
  Duration target_queuing_delay = Duration::Microseconds(50);
  double increase_gain = 1.0;    // fraction of acked bytes added at zero queuing delay
  double decrease_gain = 0.5;    // multiplicative decrease per unit of relative excess delay
  double max_decrease = 0.5;     // never shrink by more than this per RTT
  double ecn_decrease = 0.2;     // shrink on ECN echo with delay below target
  double loss_decrease = 0.3;
  bool use_ecn = true;
};

class CongestionControl {
 public:
  virtual ~CongestionControl() = default;
  // Bytes newly acknowledged, with an RTT sample if this ACK gave one.
  virtual void OnAck(Timestamp now, Bytes acked, std::optional<Duration> rtt, Duration min_rtt,
                     Duration srtt, bool ecn_ce) = 0;
  virtual void OnLoss(Timestamp now, Duration srtt) = 0;
  virtual Bytes window() const = 0;
};

std::unique_ptr<CongestionControl> MakeCongestionControl(const CcConfig& config);

}  // namespace mrclab::mrc
