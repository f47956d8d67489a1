#include "mrc/core/ev_profile.h"

#include <algorithm>

namespace mrclab::mrc {

std::string_view ToString(EvState s) {
  switch (s) {
    case EvState::kGood: return "GOOD";
    case EvState::kAssumedBad: return "ASSUMED_BAD";
    case EvState::kDenied: return "DENIED";
  }
  return "?";
}

std::string_view ToString(EvReason r) {
  switch (r) {
    case EvReason::kLoss: return "loss";
    case EvReason::kTimeout: return "timeout";
    case EvReason::kProbesSucceeded: return "probes_succeeded";
    case EvReason::kSpuriousLoss: return "spurious_loss";
    case EvReason::kController: return "controller";
    case EvReason::kPlaneDisabled: return "plane_disabled";
    case EvReason::kPlaneEnabled: return "plane_enabled";
  }
  return "?";
}

std::string_view ToString(QpState s) {
  switch (s) {
    case QpState::kReset: return "RESET";
    case QpState::kReadyToSend: return "RTS";
    case QpState::kError: return "ERROR";
  }
  return "?";
}

std::vector<EvDescriptor> MakeEvProfile(int count, int planes) {
  std::vector<EvDescriptor> evs;
  planes = std::max(planes, 1);
  for (int i = 0; i < count; ++i) evs.push_back({static_cast<uint16_t>(i), i % planes});
  return evs;
}

EvTable::EvTable(uint32_t qpn, std::vector<EvDescriptor> evs, const EvPolicyConfig& config,
                 EventSink* sink)
    : config_(config), sink_(sink), qpn_(qpn) {
  for (const auto& d : evs) {
    Entry e;
    e.desc = d;
    entries_.push_back(e);
  }
}

int EvTable::IndexOf(uint16_t id) const {
  // Profiles built by MakeEvProfile have id == index; fall back to a scan otherwise.
  if (id < entries_.size() && entries_[id].desc.id == id) return id;
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].desc.id == id) return static_cast<int>(i);
  return -1;
}

size_t EvTable::GoodCount() const {
  return std::count_if(entries_.begin(), entries_.end(),
                       [](const Entry& e) { return e.state == EvState::kGood; });
}

void EvTable::Transition(size_t i, EvState to, EvReason reason, Timestamp now) {
  Entry& e = entries_[i];
  if (e.state == to) return;
  const EvState from = e.state;
  if (from == EvState::kAssumedBad) --assumed_bad_;
  if (to == EvState::kAssumedBad) ++assumed_bad_;
  if (from == EvState::kDenied) --denied_;
  if (to == EvState::kDenied) ++denied_;
  e.state = to;
  e.reason = reason;
  e.consecutive_losses = 0;
  e.probe_successes = 0;
  e.next_probe_at = now;
  if (to == EvState::kGood) e.penalized_until = now;
  if (sink_) sink_->Push(EvStateChanged{now, qpn_, e.desc.id, from, to, reason});
}

void EvTable::OnDelivered(size_t i, Timestamp now, std::optional<Duration> rtt,
                          Duration qp_srtt, Duration penalty) {
  Entry& e = entries_[i];
  e.consecutive_losses = 0;
  if (!rtt) return;
  e.srtt = e.srtt == Duration::Zero() ? *rtt : (e.srtt * 7 + *rtt) / 8;
  if (qp_srtt > Duration::Zero() && e.state == EvState::kGood &&
      e.srtt > qp_srtt.Scaled(config_.high_delay_factor) && e.penalized_until < now)
    e.penalized_until = now + penalty;
}

bool EvTable::OnLoss(size_t i, Timestamp now, bool timeout, Duration penalty) {
  Entry& e = entries_[i];
  ++e.counters.losses;
  if (timeout) ++e.counters.timeouts;
  const Duration window = config_.correlated_loss_window;
  if (window == Duration::Zero() || e.consecutive_losses == 0 || now - e.last_counted_loss >= window) {
    ++e.consecutive_losses;
    e.last_counted_loss = now;
  }
  e.penalized_until = Max(e.penalized_until, now + penalty);
  if (e.state != EvState::kGood) return false;
  const bool bad = timeout || e.consecutive_losses >= config_.losses_to_bad;
  if (bad && GoodCount() > config_.min_active) {
    Transition(i, EvState::kAssumedBad, timeout ? EvReason::kTimeout : EvReason::kLoss, now);
    return true;
  }
  return false;
}

bool EvTable::OnSpuriousLoss(size_t i, Timestamp now) {
  Entry& e = entries_[i];
  ++e.counters.spurious_losses;
  if (e.state == EvState::kAssumedBad && e.reason == EvReason::kLoss) {
    Transition(i, EvState::kGood, EvReason::kSpuriousLoss, now);
    return true;
  }
  if (e.consecutive_losses > 0 && --e.consecutive_losses == 0) e.penalized_until = now;
  return false;
}

void EvTable::OnProbeReply(size_t i, Timestamp now) {
  Entry& e = entries_[i];
  ++e.counters.probe_replies;
  if (e.state != EvState::kAssumedBad) return;
  if (++e.probe_successes >= config_.probes_to_good)
    Transition(i, EvState::kGood, EvReason::kProbesSucceeded, now);
}

void EvTable::OnProbeTimeout(size_t i, Timestamp now) { entries_[i].probe_successes = 0; }

bool EvTable::Deny(size_t i, Timestamp now) {
  Entry& e = entries_[i];
  if (e.state == EvState::kDenied) return true;
  if (e.state == EvState::kGood && GoodCount() <= config_.min_active) return false;
  Transition(i, EvState::kDenied, EvReason::kController, now);
  return true;
}

bool EvTable::Allow(size_t i, Timestamp now) {
  if (entries_[i].state != EvState::kDenied) return false;
  Transition(i, EvState::kGood, EvReason::kController, now);
  return true;
}

size_t EvTable::SetPlane(int plane, bool enabled, Timestamp now) {
  size_t changed = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    if (e.desc.plane != plane) continue;
    if (!enabled && e.state != EvState::kDenied) {
      Transition(i, EvState::kDenied, EvReason::kPlaneDisabled, now);
      ++changed;
    } else if (enabled && e.state == EvState::kDenied) {
      Transition(i, EvState::kGood, EvReason::kPlaneEnabled, now);
      ++changed;
    }
  }
  return changed;
}

std::vector<EvStatus> EvTable::List() const {
  std::vector<EvStatus> out;
  for (const auto& e : entries_) out.push_back({e.desc.id, e.desc.plane, e.state, e.srtt, e.counters});
  return out;
}

}  // namespace mrclab::mrc
