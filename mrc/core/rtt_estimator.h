// RTT estimator (RFC 6298 smoothing) and the retransmission timeout derived from it, with
// exponential backoff on consecutive timeouts.
#pragma once

#include "mrc/core/units.h"

namespace mrclab::mrc {

struct RtoConfig {
  Duration initial_rto = Duration::Milliseconds(1);
  Duration min_rto = Duration::Microseconds(100);
  Duration max_rto = Duration::Milliseconds(100);
};

class RttEstimator {
 public:
  explicit RttEstimator(const RtoConfig& c) : config_(c) {}

  void OnSample(Duration rtt) {
    if (rtt <= Duration::Zero()) rtt = Duration::Nanoseconds(1);
    if (!sampled_) {
      srtt_ = rtt;
      rttvar_ = rtt / 2;
      min_rtt_ = rtt;
      sampled_ = true;
    } else {
      const Duration err = srtt_ > rtt ? srtt_ - rtt : rtt - srtt_;
      rttvar_ = (rttvar_ * 3 + err) / 4;
      srtt_ = (srtt_ * 7 + rtt) / 8;
      min_rtt_ = Min(min_rtt_, rtt);
    }
    latest_ = rtt;
    backoff_ = 0;
  }
  void OnTimeoutBackoff() { if (backoff_ < 16) ++backoff_; }
  void ResetBackoff() { backoff_ = 0; }

  bool sampled() const { return sampled_; }
  Duration srtt() const { return sampled_ ? srtt_ : config_.initial_rto; }
  Duration min_rtt() const { return sampled_ ? min_rtt_ : Duration::Zero(); }
  Duration latest() const { return latest_; }
  Duration rto() const {
    Duration base = sampled_ ? srtt_ + Max(rttvar_ * 4, Duration::Microseconds(1)) : config_.initial_rto;
    base = Max(base, config_.min_rto);
    for (int i = 0; i < backoff_ && base < config_.max_rto; ++i) base = base * 2;
    return Min(base, config_.max_rto);
  }

 private:
  RtoConfig config_;
  bool sampled_ = false;
  Duration srtt_, rttvar_, min_rtt_, latest_;
  int backoff_ = 0;
};

}  // namespace mrclab::mrc
