#include "mrc/core/prober.h"

#include <algorithm>

namespace mrclab::mrc {

uint32_t Prober::Request(size_t ev_index) {
  const uint32_t id = next_id_++;
  requested_.push_back({ev_index, id});
  return id;
}

std::optional<Prober::ToSend> Prober::Next(EvTable& table, Timestamp now) {
  if (!requested_.empty()) {
    ToSend t = requested_.front();
    requested_.pop_front();
    outstanding_.push_back({t.probe_id, t.ev_index, now, true});
    return t;
  }
  if (table.AssumedBadCount() == 0) return std::nullopt;
  for (size_t i = 0; i < table.size(); ++i) {
    auto& e = table.at(i);
    if (e.state != EvState::kAssumedBad || e.next_probe_at > now) continue;
    const bool busy = std::any_of(outstanding_.begin(), outstanding_.end(),
                                  [&](const Outstanding& o) { return o.ev_index == i && !o.controller; });
    if (busy) continue;
    e.next_probe_at = now + table.config().probe_interval;
    const uint32_t id = next_id_++;
    outstanding_.push_back({id, i, now, false});
    ++e.counters.tx_probes;
    return ToSend{i, id};
  }
  return std::nullopt;
}

std::optional<Duration> Prober::OnReply(uint32_t probe_id, EvTable& table, Timestamp now,
                                        EventSink* sink, uint32_t qpn) {
  auto it = std::find_if(outstanding_.begin(), outstanding_.end(),
                         [&](const Outstanding& o) { return o.id == probe_id; });
  if (it == outstanding_.end()) return std::nullopt;
  const Outstanding o = *it;
  outstanding_.erase(it);
  const Duration rtt = now - o.sent_at;
  table.OnProbeReply(o.ev_index, now);
  if (o.controller && sink)
    sink->Push(ProbeCompleted{now, qpn, table.at(o.ev_index).desc.id, o.id, rtt});
  // A successful probe on a still-bad EV earns the next probe right away.
  if (table.at(o.ev_index).state == EvState::kAssumedBad) table.at(o.ev_index).next_probe_at = now;
  return rtt;
}

Timestamp Prober::NextTimeout(const EvTable& table) const {
  Timestamp t = Timestamp::Infinite();
  for (const auto& o : outstanding_) t = Min(t, o.sent_at + table.config().probe_timeout);
  for (size_t i = 0; table.AssumedBadCount() > 0 && i < table.size(); ++i) {
    const auto& e = table.at(i);
    if (e.state != EvState::kAssumedBad) continue;
    const bool busy = std::any_of(outstanding_.begin(), outstanding_.end(),
                                  [&](const Outstanding& o) { return o.ev_index == i && !o.controller; });
    if (!busy) t = Min(t, e.next_probe_at);
  }
  if (!requested_.empty()) t = Timestamp::FromNanoseconds(0);
  return t;
}

void Prober::OnTimeout(EvTable& table, Timestamp now, EventSink* sink, uint32_t qpn) {
  for (auto it = outstanding_.begin(); it != outstanding_.end();) {
    if (it->sent_at + table.config().probe_timeout > now) {
      ++it;
      continue;
    }
    table.OnProbeTimeout(it->ev_index, now);
    if (it->controller && sink)
      sink->Push(ProbeCompleted{now, qpn, table.at(it->ev_index).desc.id, it->id, std::nullopt});
    it = outstanding_.erase(it);
  }
}

}  // namespace mrclab::mrc
