// Qp requester half: segmentation, transmission, ACK/SACK processing and loss recovery.
//
// Loss recovery per mode:
//   MRC  SACK + time-based detection: a packet is lost when a packet transmitted after it has
//        been delivered and more than (that packet's RTT + reorder window) has passed since it
//        was sent (RACK-style; works across EVs with different delays). A per-QP RTO catches
//        tails and dead paths. Lost packets are retransmitted selectively on a different EV.
//        A loss penalizes its EV; repeated losses or a timeout make it ASSUMED_BAD, and then
//        every packet still in flight on it is retransmitted elsewhere at once.
//   RC   go-back-N: a NAK (PSN sequence error) or the fixed local ACK timeout resends
//        everything from the first unacknowledged PSN on the same single path; more than
//        rc_retry_count consecutive timeouts put the QP in the error state.
#include <algorithm>
#include <bit>

#include "mrc/core/qp.h"

namespace mrclab::mrc {

std::optional<Transmit> Qp::TransmitData(Timestamp now, std::span<uint8_t> out, bool elide_zeros) {
  ZeroRun elided;
  // The window is read only once there is something to send: a QP that only responds (a ring's
  // receiving side) polls here after every ACK it sends, and its congestion control is a line
  // of its own.
  auto window_allows = [&](uint32_t len) {
    return in_flight_.count == 0 || in_flight_.count + len <= cc_->window().count;
  };

  if (!retransmit_.empty()) {
    const uint64_t psn = *retransmit_.begin();
    SentPacket& sp = Sent(psn);
    if (!window_allows(sp.length)) return std::nullopt;
    size_t ev;
    if (is_mrc()) {
      auto pick = selector_.Pick(evs_, now, sp.ev_index);
      if (!pick) return std::nullopt;
      ev = *pick;
    } else {
      ev = rc_ev_index_;
    }
    retransmit_.erase(retransmit_.begin());
    sp.ev_index = static_cast<uint16_t>(ev);
    sp.sent_at = now;
    sp.tx_seq = next_tx_seq_++;
    ++sp.transmissions;
    sp.state = PacketState::kInFlight;
    in_flight_ += Bytes{sp.length};
    tx_log_.push_back({psn, sp.tx_seq, now});
    since_ack_request_ = 0;
    ++stats_.retransmissions;
    ++evs_.at(ev).counters.tx_retransmits;
    const size_t n = EncodeData(psn, true, true, out, elide_zeros ? &elided : nullptr);
    return Transmit{n, qpn_, evs_.at(ev).desc.id, elided};
  }

  if (next_psn_ - sent_base_psn_ >= config_.max_outstanding_packets) return std::nullopt;
  const uint32_t idx = seg_msg_seq_ - wrs_front_seq_;
  if (idx >= wrs_.size()) return std::nullopt;
  SendWr& wr = wrs_[idx];
  const uint32_t len = std::min(config_.mtu, wr.req.length - wr.next_offset);
  if (!window_allows(len)) return std::nullopt;
  if (!wr.started) {
    // The responder bounds outstanding Write-with-Immediate messages by the receives it posted.
    if (wr.req.immediate && write_imm_credits() == 0) return std::nullopt;
    wr.started = true;
    if (wr.req.immediate) ++imm_started_;
  }
  size_t ev;
  if (is_mrc()) {
    auto pick = selector_.Pick(evs_, now);
    if (!pick) return std::nullopt;
    ev = *pick;
  } else {
    ev = rc_ev_index_;
  }
  const bool first = wr.next_offset == 0;
  const bool last = wr.next_offset + len == wr.req.length;
  const uint64_t psn = next_psn_++;
  sent_.push_back(SentPacket{seg_msg_seq_, wr.next_offset, len, now, next_tx_seq_++,
                             static_cast<uint16_t>(ev), 1, PacketState::kInFlight, first, last});
  wr.next_offset += len;
  ++wr.packets;
  if (last) {
    wr.segmented = true;
    ++seg_msg_seq_;
  }
  in_flight_ += Bytes{len};
  tx_log_.push_back({psn, sent_.back().tx_seq, now});
  // Ask for an ACK regularly, at message ends, and whenever the window is about to close, so
  // the requester never waits on the responder's delayed-ACK timer.
  const bool ack_request = ++since_ack_request_ >= config_.ack_request_every || last ||
                           next_psn_ - sent_base_psn_ >= config_.max_outstanding_packets ||
                           in_flight_.count + config_.mtu > cc_->window().count;
  if (ack_request) since_ack_request_ = 0;
  ++stats_.data_packets_sent;
  ++evs_.at(ev).counters.tx_data;
  const size_t n = EncodeData(psn, false, ack_request, out, elide_zeros ? &elided : nullptr);
  return Transmit{n, qpn_, evs_.at(ev).desc.id, elided};
}

size_t Qp::EncodeData(uint64_t psn, bool retransmission, bool ack_request, std::span<uint8_t> out,
                      ZeroRun* elided) {
  const SentPacket& sp = Sent(psn);
  const SendWr& wr = WrFor(sp.msg_seq);
  const bool imm = wr.req.immediate.has_value();
  Opcode rc_op;
  if (sp.first && sp.last) rc_op = imm ? Opcode::kRcWriteOnlyImm : Opcode::kRcWriteOnly;
  else if (sp.first) rc_op = Opcode::kRcWriteFirst;
  else if (sp.last) rc_op = imm ? Opcode::kRcWriteLastImm : Opcode::kRcWriteLast;
  else rc_op = Opcode::kRcWriteMiddle;

  Packet p;
  // MRC data opcodes are the RC ones with the manufacturer-specific bits set (0x06 -> 0xC6).
  p.bth.opcode = is_mrc() ? static_cast<Opcode>(static_cast<uint8_t>(rc_op) | 0xC0) : rc_op;
  p.bth.dest_qp = remote_qpn_;
  p.bth.psn = ToWirePsn(psn);
  p.bth.ack_request = ack_request;
  p.bth.solicited = sp.last && imm;
  const Reth reth{wr.req.remote_addr, wr.req.rkey, wr.req.length};
  if (is_mrc()) {
    p.mrceth = Mrceth{evs_.at(sp.ev_index).desc.id,
                      static_cast<uint8_t>(retransmission ? Mrceth::kRetransmit : 0)};
    p.mdeth = Mdeth{sp.msg_seq, sp.offset};
    p.reth = reth;
  } else if (sp.first) {
    p.reth = reth;
  }
  if (sp.last && imm) p.immediate = *wr.req.immediate;
  if (wr.zero_filled) p.payload_zeros = {0, sp.length};
  else if (sp.length > 0) p.payload = std::span<const uint8_t>(wr.local + sp.offset, sp.length);
  return Encode(p, out, elided);
}

void Qp::OnAck(Timestamp now, const Packet& p) {
  ++stats_.acks_received;
  if (p.aeth->code == AethCode::kNakRemoteAccess || p.aeth->code == AethCode::kNakInvalidRequest) {
    EnterError(WcStatus::kRemoteAccessError, "remote access error", now);
    return;
  }
  if (p.credit_limit && static_cast<int32_t>(*p.credit_limit - peer_credit_limit_) > 0)
    peer_credit_limit_ = *p.credit_limit;

  const bool nak = p.aeth->code == AethCode::kNakSequence;
  const uint64_t acked_psn = UnwrapPsn(p.bth.psn, sent_base_psn_);
  // ACK: every PSN up to and including acked_psn arrived. NAK: acked_psn is the one expected.
  const uint64_t cum_end = std::clamp(nak ? acked_psn : acked_psn + 1, sent_base_psn_, next_psn_);
  auto in_window = [&](uint64_t psn) { return psn >= sent_base_psn_ && psn < next_psn_; };

  std::optional<Duration> rtt_sample;
  int sample_ev = -1;
  const uint64_t sample_psn = p.sack ? UnwrapPsn(p.sack->echo_psn, sent_base_psn_) : acked_psn;
  if (in_window(sample_psn)) {
    const SentPacket& sp = Sent(sample_psn);
    // Karn: only unambiguous (never retransmitted) packets give RTT samples.
    if (sp.state != PacketState::kAcked && sp.transmissions == 1 && !nak) {
      rtt_sample = now - sp.sent_at;
      sample_ev = sp.ev_index;
    }
  }

  if (is_mrc() && p.mrceth) {
    // Proof that a loss counted for the echoed packet was false: the responder got it twice
    // (RFC 8985's D-SACK case), or this ACK echoes its arrival on the EV it was declared lost
    // on while its one resend went elsewhere. (Timing cannot prove it: a resend on an idle
    // path returns sooner than any RTT sampled under load.)
    const bool duplicate = p.mrceth->flags & Mrceth::kDuplicate;
    if (duplicate) ++stats_.duplicate_acks_received;
    SentPacket* sp = in_window(sample_psn) ? &Sent(sample_psn) : nullptr;
    const bool echoed_on_lost_ev = sp && evs_.IndexOf(p.mrceth->ev) == sp->lost_ev && sp->ev_index != sp->lost_ev;
    bool proven = false;
    if (sp && sp->state != PacketState::kLost && OriginalLossCounted(*sp) && (duplicate || echoed_on_lost_ev)) {
      sp->loss_counted = false;
      OnSpuriousLoss(sp->lost_ev, now);
      proven = true;
    } else if (!sp && sample_psn < sent_base_psn_) {
      proven = ProveLossBelowWindow(sample_psn, evs_.IndexOf(p.mrceth->ev), duplicate, now);
    }
    if (!proven && duplicate) WidenReorderWindow(now);
  }
  const uint64_t acked_before = stats_.bytes_acked;
  for (uint64_t psn = sent_base_psn_; psn < cum_end; ++psn) AckPacket(psn, now);
  if (p.sack) {
    const uint64_t base = UnwrapPsn(p.sack->base_psn, sent_base_psn_);
    for (uint64_t bits = p.sack->bitmap; bits; bits &= bits - 1) {
      const uint64_t psn = base + std::countr_zero(bits);
      if (in_window(psn)) AckPacket(psn, now);
    }
    // The echoed packet arrived too; it lies past the bitmap when older arrivals filled it.
    if (is_mrc() && in_window(sample_psn)) AckPacket(sample_psn, now);
  }
  const Bytes newly{stats_.bytes_acked - acked_before};

  if (rtt_sample) {
    rtt_.OnSample(*rtt_sample);
    if (is_mrc()) evs_.OnDelivered(sample_ev, now, rtt_sample, rtt_.srtt(), Penalty());
  }
  const bool ecn = p.mrceth && (p.mrceth->flags & Mrceth::kEcnEcho);
  if (newly.count > 0 || rtt_sample)
    cc_->OnAck(now, newly, rtt_sample, rtt_.min_rtt(), rtt_.srtt(), ecn);
  if (newly.count > 0) {
    if (!is_mrc()) rc_retries_ = 0;  // only RC counts them
    rtt_.ResetBackoff();
  }

  if (nak) {
    ++stats_.naks_received;
    for (uint64_t psn = cum_end; psn < next_psn_; ++psn) MarkLost(psn, now, false, false);
    cc_->OnLoss(now, rtt_.srtt());
  }
  AdvanceAndComplete();
  DetectLosses(now);
  CleanTxLog();
}

bool Qp::AckPacket(uint64_t psn, Timestamp now) {
  SentPacket& sp = Sent(psn);
  if (sp.state == PacketState::kAcked) return false;
  // Acknowledged while declared lost and not yet resent: the one copy arrived after all.
  if (sp.state == PacketState::kLost && OriginalLossCounted(sp)) {
    sp.loss_counted = false;
    OnSpuriousLoss(sp.lost_ev, now);
  }
  if (sp.state == PacketState::kInFlight) in_flight_ -= Bytes{sp.length};
  else retransmit_.erase(psn);
  sp.state = PacketState::kAcked;
  ++WrFor(sp.msg_seq).acked;
  stats_.bytes_acked += sp.length;
  if (is_mrc()) evs_.at(sp.ev_index).consecutive_losses = 0;
  if (sp.tx_seq > rack_tx_seq_) {
    rack_tx_seq_ = sp.tx_seq;
    rack_rtt_ = now - sp.sent_at;
  }
  return true;
}

void Qp::MarkLost(uint64_t psn, Timestamp now, bool timeout, bool ev_feedback) {
  SentPacket& sp = Sent(psn);
  if (sp.state != PacketState::kInFlight) return;
  sp.state = PacketState::kLost;
  in_flight_ -= Bytes{sp.length};
  retransmit_.insert(psn);
  if (is_mrc() && sp.transmissions > config_.max_retransmissions) {
    EnterError(WcStatus::kRetryExceeded, "retransmission limit exceeded", now);
    return;
  }
  sp.loss_counted = is_mrc() && ev_feedback;
  if (sp.loss_counted) {
    sp.lost_ev = sp.ev_index;
    if (evs_.OnLoss(sp.ev_index, now, timeout, Penalty())) MarkEvInFlightLost(sp.ev_index, now);
  }
  if (ev_feedback) cc_->OnLoss(now, rtt_.srtt());
}

void Qp::MarkEvInFlightLost(size_t ev_index, Timestamp now) {
  for (uint64_t psn = sent_base_psn_; psn < next_psn_ && state_ == QpState::kReadyToSend; ++psn) {
    const SentPacket& sp = Sent(psn);
    if (sp.state == PacketState::kInFlight && sp.ev_index == ev_index) MarkLost(psn, now, false, false);
  }
}

// Whether the loss counted for this packet is the one a delivered copy can prove false: the
// copy declared lost was resent at most once since (with more copies out, the one that arrived
// may have been any of them). Declared lost and not resent: one transmission; otherwise two,
// and an acknowledged packet keeps its count until a D-SACK (both copies arrived) or the window
// moves on.
bool Qp::OriginalLossCounted(const SentPacket& sp) const {
  return sp.loss_counted && sp.transmissions == (sp.state == PacketState::kLost ? 1 : 2);
}

void Qp::OnSpuriousLoss(size_t ev_index, Timestamp now) {
  ++stats_.spurious_losses;
  evs_.OnSpuriousLoss(ev_index, now);
  WidenReorderWindow(now);
}

bool Qp::ProveLossBelowWindow(uint64_t psn, int ack_ev, bool duplicate, Timestamp now) {
  for (UnprovenLoss& u : unproven_losses_) {
    if (u.psn != psn) continue;
    if (!duplicate && !(ack_ev == u.lost_ev && u.resent_ev != u.lost_ev)) return false;
    u.psn = 0;  // proven once; PSNs start at 2^32, so 0 matches none
    OnSpuriousLoss(u.lost_ev, now);
    return true;
  }
  return false;
}

void Qp::WidenReorderWindow(Timestamp now) {
  if (reorder_multiplier_ == 1 || now >= reorder_widened_at_ + rtt_.srtt()) {
    reorder_multiplier_ = std::min<uint32_t>(reorder_multiplier_ + 1, 64);
    reorder_widened_at_ = now;
  }
  reorder_persist_ = 16;
}

void Qp::DetectLosses(Timestamp now) {
  rack_timer_ = Timestamp::Infinite();
  if (!is_mrc()) return;
  const Duration reorder = ReorderWindow();
  while (!tx_log_.empty() && state_ == QpState::kReadyToSend) {
    const TxLogEntry e = tx_log_.front();
    if (!InFlight(e)) {
      tx_log_.pop_front();
      continue;
    }
    if (e.tx_seq > rack_tx_seq_) break;  // nothing sent after it is known delivered yet
    const Timestamp deadline = e.sent_at + rack_rtt_ + reorder;
    if (deadline > now) {
      rack_timer_ = deadline;
      break;
    }
    tx_log_.pop_front();
    ++stats_.rack_losses;
    if (now >= loss_episode_at_ + rtt_.srtt()) {  // a new loss episode
      loss_episode_at_ = now;
      if (reorder_persist_ > 0 && --reorder_persist_ == 0) reorder_multiplier_ = 1;
    }
    MarkLost(e.psn, now, false, true);
  }
}

void Qp::OnRetransmissionTimeout(Timestamp now) {
  CleanTxLog();
  if (tx_log_.empty()) return;
  if (is_mrc()) {
    const Duration rto = rtt_.rto();
    if (tx_log_.front().sent_at + rto > now) return;
    ++stats_.rto_fired;
    rtt_.OnTimeoutBackoff();
    // A timeout is evidence against a path when it is that path's alone (ev_profile.h).
    bool timeout = true;
    if (config_.ev_policy.correlated_loss_window > Duration::Zero()) {
      int ev = -1;
      for (const TxLogEntry& e : tx_log_) {
        if (e.sent_at + rto > now) break;
        if (!InFlight(e)) continue;
        if (ev >= 0 && ev != Sent(e.psn).ev_index) {
          timeout = false;
          break;
        }
        ev = Sent(e.psn).ev_index;
      }
    }
    while (!tx_log_.empty() && state_ == QpState::kReadyToSend) {
      const TxLogEntry e = tx_log_.front();
      if (InFlight(e)) {
        if (e.sent_at + rto > now) break;
        MarkLost(e.psn, now, timeout, true);
      }
      if (!tx_log_.empty()) tx_log_.pop_front();
    }
    return;
  }
  if (tx_log_.front().sent_at + config_.rc_ack_timeout > now) return;
  ++stats_.rto_fired;
  if (++rc_retries_ > config_.rc_retry_count) {
    EnterError(WcStatus::kRetryExceeded, "retry count exceeded", now);
    return;
  }
  for (uint64_t psn = sent_base_psn_; psn < next_psn_; ++psn) MarkLost(psn, now, true, false);
  cc_->OnLoss(now, rtt_.srtt());
  tx_log_.clear();
}

bool Qp::InFlight(const TxLogEntry& e) {
  return e.psn >= sent_base_psn_ && Sent(e.psn).state == PacketState::kInFlight && Sent(e.psn).tx_seq == e.tx_seq;
}

void Qp::CleanTxLog() {
  while (!tx_log_.empty()) {
    const TxLogEntry& e = tx_log_.front();
    if (InFlight(e))
      break;
    tx_log_.pop_front();
  }
}

void Qp::AdvanceAndComplete() {
  while (!sent_.empty() && sent_.front().state == PacketState::kAcked) {
    const SentPacket& sp = sent_.front();
    if (OriginalLossCounted(sp)) {
      if (unproven_losses_.size() == kMaxUnprovenLosses) unproven_losses_.pop_front();
      unproven_losses_.push_back({sent_base_psn_, sp.lost_ev, sp.ev_index});
    }
    sent_.pop_front();
    ++sent_base_psn_;
  }
  while (!wrs_.empty()) {
    const SendWr& w = wrs_.front();
    if (!w.segmented || w.acked < w.packets) break;
    send_cq_->Push(Completion{w.req.wr_id, qpn_, WcStatus::kSuccess,
                              w.req.immediate ? WcOpcode::kWriteWithImm : WcOpcode::kWrite,
                              w.req.length, std::nullopt});
    ++stats_.send_completions;
    wrs_.pop_front();
    ++wrs_front_seq_;
  }
}

}  // namespace mrclab::mrc
