// NSCC-style delay-target window; see congestion_control.h for the contract.
#include <algorithm>

#include "mrc/core/congestion_control.h"

namespace mrclab::mrc {
namespace {

class NsccWindow final : public CongestionControl {
 public:
  explicit NsccWindow(const CcConfig& c) : c_(c), window_(static_cast<double>(c.initial_window.count)) {}

  void OnAck(Timestamp now, Bytes acked, std::optional<Duration> rtt, Duration min_rtt,
             Duration srtt, bool ecn_ce) override {
    const double target = static_cast<double>(c_.target_queuing_delay.nanoseconds());
    double qdelay = 0;
    if (rtt) qdelay = static_cast<double>((*rtt - min_rtt).nanoseconds());
    else if (srtt > min_rtt) qdelay = static_cast<double>((srtt - min_rtt).nanoseconds());
    const bool ecn = c_.use_ecn && ecn_ce;
    if (qdelay > target || ecn) {
      if (now < next_decrease_at_) return;
      double factor;
      if (qdelay > target)
        factor = std::min(c_.max_decrease, c_.decrease_gain * (qdelay - target) / qdelay);
      else
        factor = c_.ecn_decrease;
      window_ *= 1.0 - factor;
      next_decrease_at_ = now + srtt;
    } else {
      const double headroom = target > 0 ? (target - qdelay) / target : 1.0;
      // Proportional increase, plus a floor of one packet's worth per window (additive).
      window_ += c_.increase_gain * headroom * static_cast<double>(acked.count) +
                 static_cast<double>(acked.count) * static_cast<double>(c_.min_window.count) / window_;
    }
    Clamp();
  }

  void OnLoss(Timestamp now, Duration srtt) override {
    if (now < next_loss_decrease_at_) return;
    window_ *= 1.0 - c_.loss_decrease;
    next_loss_decrease_at_ = now + srtt;
    Clamp();
  }

  Bytes window() const override { return Bytes{static_cast<uint64_t>(window_)}; }

 private:
  void Clamp() {
    window_ = std::clamp(window_, static_cast<double>(c_.min_window.count),
                         static_cast<double>(c_.max_window.count));
  }
  CcConfig c_;
  double window_;
  Timestamp next_decrease_at_, next_loss_decrease_at_;
};

class FixedWindow final : public CongestionControl {
 public:
  explicit FixedWindow(Bytes w) : w_(w) {}
  void OnAck(Timestamp, Bytes, std::optional<Duration>, Duration, Duration, bool) override {}
  void OnLoss(Timestamp, Duration) override {}
  Bytes window() const override { return w_; }

 private:
  Bytes w_;
};

}  // namespace

std::unique_ptr<CongestionControl> MakeCongestionControl(const CcConfig& config) {
  if (config.kind == CcConfig::Kind::kFixed) return std::make_unique<FixedWindow>(config.initial_window);
  return std::make_unique<NsccWindow>(config);
}

}  // namespace mrclab::mrc
