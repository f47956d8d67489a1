#include "mrc/loop/loop_network.h"

namespace mrclab::mrc {

int LoopNetwork::AddHost(Context* context) {
  Host h;
  h.context = context;
  hosts_.push_back(h);
  return static_cast<int>(hosts_.size()) - 1;
}

PathSpec& LoopNetwork::Path(int from_host, uint16_t ev) {
  auto [it, inserted] = paths_.try_emplace({from_host, ev});
  if (inserted) it->second.spec = default_path_;
  return it->second.spec;
}

void LoopNetwork::KillEv(uint16_t ev, Timestamp from, Timestamp to) {
  for (int h = 0; h < static_cast<int>(hosts_.size()); ++h) Path(h, ev).down.push_back({from, to});
}

bool LoopNetwork::IsDown(const PathSpec& spec, Timestamp t) {
  for (const auto& [from, to] : spec.down)
    if (t >= from && t < to) return true;
  return false;
}

void LoopNetwork::Send(int from, const Transmit& t, std::span<const uint8_t> bytes) {
  Host& host = hosts_[from];
  Path(from, t.ev);  // materialize from the default
  PathState& path = paths_[{from, t.ev}];
  PathCounters& counters = counters_[{from, t.ev}];
  const uint64_t index_from_host = host.sent++;
  const uint64_t index_on_path = path.offered++;
  ++counters.offered;
  if (tap_) tap_(from, t.ev, now_, bytes);

  const PathSpec& spec = path.spec;
  // NIC egress first (shared by all EVs), then the path's own serialization queue.
  Timestamp depart = now_;
  if (host.egress_rate.count > 0) {
    host.egress_busy_until = Max(host.egress_busy_until, now_) + host.egress_rate.TransmitTime(Bytes{bytes.size()});
    depart = host.egress_busy_until;
  }
  bool ecn = false;
  if (spec.rate.count > 0) {
    const Timestamp start = Max(path.busy_until, depart);
    const Duration queued = start - depart;
    const uint64_t backlog = static_cast<uint64_t>(queued.seconds() * spec.rate.count / 8);
    if (spec.queue_limit.count > 0 && backlog > spec.queue_limit.count) {
      ++counters.dropped;
      return;
    }
    ecn = spec.ecn_threshold.count > 0 && backlog > spec.ecn_threshold.count;
    path.busy_until = start + spec.rate.TransmitTime(Bytes{bytes.size()});
    depart = path.busy_until;
  }
  const bool lost = IsDown(spec, now_) || (spec.loss_rate > 0 && rng_.Uniform() < spec.loss_rate) ||
                    (spec.drop && spec.drop(DropContext{from, t.ev, index_on_path, index_from_host, bytes}));
  if (lost) {
    ++counters.dropped;
    return;
  }
  if (ecn) ++counters.ecn_marked;
  const int to = from == 0 ? 1 : 0;
  queue_.push(InFlight{depart + spec.delay, seq_++, to, from, t.ev, ecn,
                       std::vector<uint8_t>(bytes.begin(), bytes.end())});
}

void LoopNetwork::Flush() {
  for (int h = 0; h < static_cast<int>(hosts_.size()); ++h) {
    while (auto t = hosts_[h].context->PollTransmit(now_, buffer_))
      Send(h, *t, std::span<const uint8_t>(buffer_.data(), t->length));
  }
}

bool LoopNetwork::RunUntil(const std::function<bool()>& done, Timestamp deadline) {
  while (true) {
    Flush();
    if (done()) return true;
    Flush();  // done() may have posted work
    Timestamp next = queue_.empty() ? Timestamp::Infinite() : queue_.top().arrival;
    for (const Host& h : hosts_) next = Min(next, h.context->NextTimeout());
    if (next > deadline) {
      if (!deadline.IsInfinite()) now_ = Max(now_, deadline);
      return done();
    }
    now_ = Max(now_, next);
    while (!queue_.empty() && queue_.top().arrival <= now_) {
      InFlight f = queue_.top();
      queue_.pop();
      PathCounters& counters = counters_[{f.from_host, f.ev}];
      // A packet on the wire when its link is cut is lost too.
      if (IsDown(paths_[{f.from_host, f.ev}].spec, now_)) {
        ++counters.dropped;
        continue;
      }
      ++counters.delivered;
      hosts_[f.to_host].context->OnDatagram(now_, f.bytes, DatagramInfo{0, f.ecn_ce, {}});
    }
    for (Host& h : hosts_)
      if (h.context->NextTimeout() <= now_) h.context->OnTimeout(now_);
  }
}

}  // namespace mrclab::mrc
