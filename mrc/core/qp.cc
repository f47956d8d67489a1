// Qp: construction, dispatch, timers, controller API and error handling. The requester half
// lives in qp_requester.cc, the responder half in qp_responder.cc.
#include "mrc/core/qp.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "mrc/core/qp_scheduler.h"

namespace mrclab::mrc {
namespace {
// Internal 64-bit PSNs start one 2^32 up, so unwrapping below the initial PSN stays positive.
constexpr uint64_t kPsnOrigin = uint64_t{1} << 32;
}  // namespace

std::string_view ToString(TransportMode m) { return m == TransportMode::kMrc ? "mrc" : "rc"; }

std::string_view ToString(WcStatus s) {
  switch (s) {
    case WcStatus::kSuccess: return "success";
    case WcStatus::kRetryExceeded: return "retry_exceeded";
    case WcStatus::kRemoteAccessError: return "remote_access_error";
    case WcStatus::kFlushed: return "flushed";
  }
  return "?";
}

Qp::Qp(uint32_t qpn, const QpConfig& config, MemoryRegistry* memory, CompletionQueue* send_cq,
       CompletionQueue* recv_cq, EventSink* events)
    : qpn_(qpn), memory_(memory), send_cq_(send_cq), recv_cq_(recv_cq),
      cc_(MakeCongestionControl(config.cc)), evs_(qpn, config.evs, config.ev_policy, events),
      rtt_(config.rto), config_(config), events_(events) {
  if (config_.evs.size() > static_cast<size_t>(INT16_MAX))
    throw std::invalid_argument("a QP takes at most " + std::to_string(INT16_MAX) + " EVs");
  config_.max_outstanding_packets =
      std::min(config_.max_outstanding_packets, config_.receive_window_packets);
  config_.mtu = std::max<uint32_t>(config_.mtu, 1);
  sent_base_psn_ = next_psn_ = kPsnOrigin + (config_.initial_psn & kPsnMask);
}

void Qp::Touch() {
  if (scheduler_) scheduler_->Touched(scheduler_index_);
}

void Qp::Connect(uint32_t remote_qpn, uint32_t remote_initial_psn) {
  Touch();
  remote_qpn_ = remote_qpn;
  const uint64_t rx_start = kPsnOrigin + (remote_initial_psn & kPsnMask);
  rx_.emplace(rx_start, config_.receive_window_packets);
  rc_expected_ = rx_start;
  rc_ev_index_ = config_.flow_key ? EcmpHashIndex(*config_.flow_key, evs_.size())
                                  : EcmpHashIndex(qpn_, remote_qpn_, evs_.size());
  state_ = QpState::kReadyToSend;
}

PostResult Qp::PostWrite(const WriteRequest& wr) {
  Touch();
  if (state_ != QpState::kReadyToSend) return PostResult::kNotReady;
  if (wrs_.size() >= config_.max_send_wr) return PostResult::kQueueFull;
  const MemoryRegistry::LocalBytes local = memory_->ResolveLocal(wr.lkey, wr.local_addr, wr.length);
  if (!local.data && wr.length > 0) return PostResult::kBadLocalKey;
  SendWr s;
  s.req = wr;
  s.local = local.data;
  s.zero_filled = local.zero_filled;
  wrs_.push_back(s);
  ++next_msg_seq_;
  return PostResult::kOk;
}

PostResult Qp::PostRecv(uint64_t wr_id) {
  Touch();
  if (state_ == QpState::kError) return PostResult::kNotReady;
  recv_wrs_.push_back(wr_id);
  ++recv_posted_total_;
  if (state_ == QpState::kReadyToSend) {
    // Advertise the new credit now, and again with backoff until data shows it arrived.
    ack_.immediate = true;
    credit_dirty_ = true;
    credit_repeat_interval_ = Duration::Zero();
  }
  return PostResult::kOk;
}

void Qp::OnPacket(Timestamp now, const Packet& p, bool ecn_ce) {
  Touch();
  if (state_ != QpState::kReadyToSend) return;
  switch (p.bth.opcode) {
    case Opcode::kRcAck:
    case Opcode::kMrcAck:
      OnAck(now, p);
      break;
    case Opcode::kMrcProbe:
    case Opcode::kMrcProbeReply:
      OnProbe(now, p);
      break;
    default:
      OnData(now, p, ecn_ce);
      break;
  }
}

void Qp::OnProbe(Timestamp now, const Packet& p) {
  if (p.bth.opcode == Opcode::kMrcProbe) {
    probe_replies_.push_back({p.mrceth->ev, *p.probe});
    return;
  }
  prober_.OnReply(p.probe->probe_id, evs_, now, events_, qpn_);
}

std::optional<Transmit> Qp::PollTransmit(Timestamp now, std::span<uint8_t> out, bool elide_zeros) {
  Touch();
  if (state_ != QpState::kReadyToSend || !CanTransmit()) return std::nullopt;
  if (!probe_replies_.empty()) {
    ProbeReply r = probe_replies_.front();
    Packet p;
    p.bth.opcode = Opcode::kMrcProbeReply;
    p.bth.dest_qp = remote_qpn_;
    p.mrceth = Mrceth{r.ev, 0};
    p.probe = r.probe;
    const size_t n = Encode(p, out);
    if (n == 0) return std::nullopt;
    probe_replies_.pop_front();
    ++stats_.probe_replies_sent;
    return Transmit{n, qpn_, r.ev, {}};
  }
  if (ack_.immediate || (ack_.pending && ack_.deadline <= now)) {
    uint16_t ev = 0;
    const size_t n = EncodeAck(out, &ev, now);
    if (n > 0) return Transmit{n, qpn_, ev, {}};
  }
  if (is_mrc()) {
    if (auto probe = prober_.Next(evs_, now)) {
      Packet p;
      p.bth.opcode = Opcode::kMrcProbe;
      p.bth.dest_qp = remote_qpn_;
      const uint16_t ev = evs_.at(probe->ev_index).desc.id;
      p.mrceth = Mrceth{ev, 0};
      p.probe = Probe{probe->probe_id, static_cast<uint64_t>(now.nanoseconds())};
      const size_t n = Encode(p, out);
      if (n > 0) {
        ++stats_.probes_sent;
        return Transmit{n, qpn_, ev, {}};
      }
    }
  }
  return TransmitData(now, out, elide_zeros);
}

void Qp::PrefetchState(uint16_t ev, bool ack) const {
  evs_.Prefetch(ev);
  if (ack) {
    PrefetchBytes(cc_.get(), 2 * kCacheLineBytes);
    wrs_.Prefetch();
    sent_.Prefetch();
    tx_log_.Prefetch();
    send_cq_->Prefetch();
    return;
  }
  if (!wrs_.empty()) PrefetchBytes(cc_.get(), 2 * kCacheLineBytes);
  recv_wrs_.Prefetch();
  if (rx_) rx_->Prefetch();
  assembler_.Prefetch();
  recv_cq_->Prefetch();
}

Timestamp Qp::NextTimeout() const {
  if (state_ != QpState::kReadyToSend) return Timestamp::Infinite();
  Timestamp t = Timestamp::Infinite();
  // An ACK waits while no EV may carry it: its deadline would stay due and a driver fire it
  // at the same instant for ever. Enabling an EV makes it due again.
  if (CanTransmit()) {
    if (ack_.pending) t = Min(t, ack_.deadline);
    t = Min(t, credit_repeat_at_);
  }
  t = Min(t, rack_timer_);
  if (!tx_log_.empty()) {
    const Duration timeout = is_mrc() ? rtt_.rto() : config_.rc_ack_timeout;
    t = Min(t, tx_log_.front().sent_at + timeout);
  }
  if (is_mrc()) t = Min(t, prober_.NextTimeout(evs_));
  return t;
}

void Qp::OnTimeout(Timestamp now) {
  Touch();
  if (state_ != QpState::kReadyToSend) return;
  if (ack_.pending && ack_.deadline <= now) ack_.immediate = true;
  if (credit_repeat_at_ <= now) {
    credit_repeat_at_ = Timestamp::Infinite();
    ack_.immediate = true;
    credit_dirty_ = true;
  }
  if (rack_timer_ <= now) DetectLosses(now);
  OnRetransmissionTimeout(now);
  if (state_ == QpState::kReadyToSend && is_mrc()) prober_.OnTimeout(evs_, now, events_, qpn_);
}

bool Qp::DenyEv(uint16_t ev, Timestamp now) {
  Touch();
  const int i = evs_.IndexOf(ev);
  if (i < 0 || !evs_.Deny(i, now)) return false;
  MarkEvInFlightLost(i, now);
  return true;
}

bool Qp::AllowEv(uint16_t ev, Timestamp now) {
  Touch();
  const int i = evs_.IndexOf(ev);
  return i >= 0 && evs_.Allow(i, now);
}

std::optional<uint32_t> Qp::ProbeEv(uint16_t ev) {
  Touch();
  const int i = evs_.IndexOf(ev);
  if (i < 0 || state_ != QpState::kReadyToSend) return std::nullopt;
  return prober_.Request(i);
}

Duration Qp::Penalty() const {
  const EvPolicyConfig& policy = evs_.config();  // config_.ev_policy's copy, on a line every ACK reads
  return Max(policy.penalty_floor, rtt_.srtt().Scaled(policy.penalty_rtts));
}

Duration Qp::ReorderWindow() const {
  const Duration base = rtt_.min_rtt().Scaled(config_.reorder_window_rtt_fraction);
  Duration window = base;
  if (reorder_multiplier_ > 1)
    window = Max(base, Min(base * reorder_multiplier_, rtt_.srtt().Scaled(config_.reorder_window_max_srtts)));
  return Max(config_.reorder_window_min, window);
}

void Qp::EnterError(WcStatus status, std::string_view reason, Timestamp now) {
  if (state_ == QpState::kError) return;
  state_ = QpState::kError;
  bool first = true;
  for (const SendWr& w : wrs_) {
    send_cq_->Push(Completion{w.req.wr_id, qpn_, first ? status : WcStatus::kFlushed,
                              w.req.immediate ? WcOpcode::kWriteWithImm : WcOpcode::kWrite,
                              w.req.length, std::nullopt});
    first = false;
  }
  wrs_.clear();
  for (uint64_t id : recv_wrs_)
    recv_cq_->Push(Completion{id, qpn_, WcStatus::kFlushed, WcOpcode::kRecvWriteWithImm, 0, std::nullopt});
  recv_wrs_.clear();
  sent_.clear();
  retransmit_.clear();
  tx_log_.clear();
  in_flight_ = Bytes{0};
  probe_replies_.clear();
  ack_ = PendingAck{};
  duplicate_echoes_.clear();
  unproven_losses_.clear();
  if (events_) events_->Push(QpStateChanged{now, qpn_, QpState::kError, reason});
}

}  // namespace mrclab::mrc
