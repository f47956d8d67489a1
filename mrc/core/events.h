// Events the core reports through Context::PollEvent: EV state changes, QP state changes and
// controller probe results. Plain values; the core keeps them in a queue until polled.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

#include "mrc/core/ring_queue.h"
#include "mrc/core/units.h"

namespace mrclab::mrc {

enum class EvState : uint8_t { kGood, kAssumedBad, kDenied };
enum class EvReason : uint8_t {
  kLoss, kTimeout, kProbesSucceeded, kController, kPlaneDisabled, kPlaneEnabled,
  kSpuriousLoss,  // the loss that made it ASSUMED_BAD was not one: the original was delivered
};
enum class QpState : uint8_t { kReset, kReadyToSend, kError };

std::string_view ToString(EvState s);
std::string_view ToString(EvReason r);
std::string_view ToString(QpState s);

struct EvStateChanged {
  Timestamp at;
  uint32_t qpn = 0;
  uint16_t ev = 0;
  EvState from = EvState::kGood, to = EvState::kGood;
  EvReason reason = EvReason::kLoss;
};

struct QpStateChanged {
  Timestamp at;
  uint32_t qpn = 0;
  QpState to = QpState::kError;
  std::string_view reason;  // static string
};

struct ProbeCompleted {
  Timestamp at;
  uint32_t qpn = 0;
  uint16_t ev = 0;
  uint32_t probe_id = 0;
  std::optional<Duration> rtt;  // nullopt: timed out
};

using Event = std::variant<EvStateChanged, QpStateChanged, ProbeCompleted>;

class EventSink {
 public:
  void Push(Event e) { queue_.push_back(std::move(e)); }
  std::optional<Event> Pop() {
    if (queue_.empty()) return std::nullopt;
    Event e = std::move(queue_.front());
    queue_.pop_front();
    return e;
  }
  size_t size() const { return queue_.size(); }

 private:
  RingQueue<Event> queue_;
};

}  // namespace mrclab::mrc
