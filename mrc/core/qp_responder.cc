// Qp responder half: placement of incoming Writes, receive completions, ACK/SACK/NAK
// generation, and credit advertisement.
//   MRC  any order: each packet carries its message's RETH and offset, is bounds-checked
//        against the rkey's region and copied in place at once; the receive bitmap filters
//        duplicates and feeds the SACK; messages complete in order once fully placed.
//   RC   in order only: the expected PSN is placed, an earlier one is a duplicate (re-ACK), a
//        later one triggers a single PSN-sequence NAK until the gap is filled (go-back-N).
// ACKs go out when the requester asks (ack-request bit), for duplicates and errors at once,
// and otherwise after ack_delay. An MRC ACK returns on the EV the triggering packet came in on.
#include <cstring>

#include "mrc/core/qp.h"

namespace mrclab::mrc {

void Qp::OnData(Timestamp now, const Packet& p, bool ecn_ce) {
  ++stats_.data_packets_received;
  credit_repeat_at_ = Timestamp::Infinite();  // the requester is sending: it has our credits
  if (is_mrc() != p.mrceth.has_value()) return;  // the peer speaks the other mode
  if (is_mrc()) {
    const int ev_index = evs_.IndexOf(p.mrceth->ev);
    if (ev_index >= 0) ++evs_.at(ev_index).counters.rx_packets;
    OnDataMrc(now, p, UnwrapPsn(p.bth.psn, rx_->cumulative()), ev_index);
  } else {
    ++evs_.at(rc_ev_index_).counters.rx_packets;
    OnDataRc(now, p, UnwrapPsn(p.bth.psn, rc_expected_));
  }
  if (ecn_ce) ack_.ecn = true;
}

void Qp::OnDataMrc(Timestamp now, const Packet& p, uint64_t psn, int ev_index) {
  if (rx_->Received(psn)) {
    ++stats_.duplicates_received;
    ScheduleAck(now, psn, ev_index, false, true, true);
    return;
  }
  if (psn - rx_->cumulative() >= rx_->window()) {
    ++stats_.out_of_window;
    return;
  }
  const Reth& reth = *p.reth;
  const uint64_t size = PayloadBytes(p);
  const uint64_t offset = p.mdeth->offset;
  uint8_t* dst = nullptr;
  if (offset + size > reth.length ||
      (size > 0 && !(dst = memory_->ResolveRemoteWrite(reth.rkey, reth.va + offset, size)))) {
    ++stats_.access_errors;
    ack_.code = AethCode::kNakRemoteAccess;
    ScheduleAck(now, psn, ev_index, false, true);
    return;
  }
  switch (assembler_.Add(p.mdeth->msg_seq, reth.length, static_cast<uint32_t>(size), p.immediate)) {
    case MessageAssembler::Result::kOk:
      break;
    case MessageAssembler::Result::kOutOfRange:
      ++stats_.out_of_window;
      return;
    case MessageAssembler::Result::kInconsistent:
      ++stats_.access_errors;
      ack_.code = AethCode::kNakInvalidRequest;
      ScheduleAck(now, psn, ev_index, false, true);
      return;
  }
  if (size > 0) CopyPayload(p, dst);
  rx_->Mark(psn);
  stats_.bytes_placed += size;
  while (auto c = assembler_.PopCompleted())
    if (c->immediate) DeliverRecvCompletion(c->length, c->immediate);
  ScheduleAck(now, psn, ev_index, false, p.bth.ack_request);
}

void Qp::OnDataRc(Timestamp now, const Packet& p, uint64_t psn) {
  const int ev = static_cast<int>(rc_ev_index_);
  if (psn < rc_expected_) {
    ++stats_.duplicates_received;
    ScheduleAck(now, psn, ev, false, true);
    return;
  }
  if (psn > rc_expected_) {
    if (!rc_nak_sent_) {
      rc_nak_sent_ = true;
      ++stats_.naks_sent;
      ack_.code = AethCode::kNakSequence;
      ScheduleAck(now, psn, ev, false, true);
    }
    return;
  }
  const Opcode op = p.bth.opcode;
  const bool first = op == Opcode::kRcWriteFirst || op == Opcode::kRcWriteOnly || op == Opcode::kRcWriteOnlyImm;
  const bool last = op == Opcode::kRcWriteLast || op == Opcode::kRcWriteLastImm ||
                    op == Opcode::kRcWriteOnly || op == Opcode::kRcWriteOnlyImm;
  auto reject = [&](AethCode code) {
    ++stats_.access_errors;
    ack_.code = code;
    ScheduleAck(now, psn, ev, false, true);
  };
  if (first == rc_msg_.active) return reject(AethCode::kNakInvalidRequest);
  if (first) rc_msg_ = RcMessage{true, p.reth->va, p.reth->rkey, p.reth->length, 0};
  const uint64_t size = PayloadBytes(p);
  if (rc_msg_.offset + size > rc_msg_.length || (last && rc_msg_.offset + size != rc_msg_.length)) {
    rc_msg_.active = false;
    return reject(AethCode::kNakInvalidRequest);
  }
  if (size > 0) {
    uint8_t* dst = memory_->ResolveRemoteWrite(rc_msg_.rkey, rc_msg_.va + rc_msg_.offset, size);
    if (!dst) {
      rc_msg_.active = false;
      return reject(AethCode::kNakRemoteAccess);
    }
    CopyPayload(p, dst);
  }
  rc_msg_.offset += static_cast<uint32_t>(size);
  stats_.bytes_placed += size;
  ++rc_expected_;
  rc_nak_sent_ = false;
  if (ack_.code == AethCode::kNakSequence) ack_.code = AethCode::kAck;
  if (last) {
    rc_msg_.active = false;
    ++rc_msn_;
    if (p.immediate) DeliverRecvCompletion(rc_msg_.length, p.immediate);
  }
  ScheduleAck(now, psn, ev, false, p.bth.ack_request);
}

void Qp::DeliverRecvCompletion(uint32_t length, std::optional<uint32_t> immediate) {
  if (recv_wrs_.empty()) {
    // Only a requester ignoring our credit advertisement gets here; the message is placed but
    // has no receive to complete.
    ++stats_.access_errors;
    return;
  }
  const uint64_t wr_id = recv_wrs_.front();
  recv_wrs_.pop_front();
  recv_cq_->Push(Completion{wr_id, qpn_, WcStatus::kSuccess, WcOpcode::kRecvWriteWithImm, length, immediate});
  ++stats_.recv_completions;
}

void Qp::ScheduleAck(Timestamp now, uint64_t trigger_psn, int ev_index, bool ecn, bool immediate,
                     bool duplicate) {
  // An ACK echoes one arrival. A copy received twice is echoed in preference to other arrivals
  // (they are acknowledged by the SACK all the same): it is the requester's proof that a loss it
  // declared was spurious, and retransmissions go out in PSN order, the packets declared lost
  // first. Copies received twice while one waits to be echoed each get an ACK of their own
  // after it (EncodeAck): one echo proves one loss.
  if (ack_.pending && ack_.duplicate) {
    if (duplicate && duplicate_echoes_.size() < kMaxDuplicateEchoes)
      duplicate_echoes_.push_back({trigger_psn, static_cast<int16_t>(ev_index)});
  } else {
    ack_.trigger_psn = trigger_psn;
    ack_.ev_index = static_cast<int16_t>(ev_index);
    ack_.duplicate = duplicate;
  }
  ack_.pending = true;
  ack_.ecn |= ecn;
  if (immediate) ack_.immediate = true;
  else if (ack_.deadline.IsInfinite()) ack_.deadline = now + config_.ack_delay;
}

size_t Qp::EncodeAck(std::span<uint8_t> out, uint16_t* ev, Timestamp now) {
  const uint64_t expected = is_mrc() ? rx_->cumulative() : rc_expected_;
  int ev_index = ack_.ev_index;
  if (!is_mrc()) {
    ev_index = static_cast<int>(rc_ev_index_);
  } else if (ev_index < 0 || evs_.at(ev_index).state == EvState::kDenied) {
    auto pick = selector_.Pick(evs_, now);
    ev_index = pick ? static_cast<int>(*pick) : -1;
  }
  if (ev_index < 0) return 0;
  Packet p;
  uint64_t sack_base = 0, echo = 0;
  const bool duplicate = is_mrc() && ack_.pending && ack_.duplicate;
  p.bth.dest_qp = remote_qpn_;
  p.bth.psn = ToWirePsn(ack_.code == AethCode::kNakSequence ? expected : expected - 1);
  p.aeth = Aeth{ack_.code, is_mrc() ? assembler_.next() : rc_msn_};
  p.credit_limit = recv_posted_total_;
  if (is_mrc()) {
    p.bth.opcode = Opcode::kMrcAck;
    p.mrceth = Mrceth{evs_.at(ev_index).desc.id,
                      static_cast<uint8_t>((ack_.ecn ? Mrceth::kEcnEcho : 0) | (duplicate ? Mrceth::kDuplicate : 0))};
    // Credit-only ACKs echo an already acknowledged PSN, so they yield no RTT sample.
    echo = ack_.pending ? ack_.trigger_psn : expected - 1;
    sack_base = echo > expected + 63 ? echo - 63 : expected;
    // Every arrival is reported by some ACK: one left out would look lost to the requester
    // once a packet sent after it is acknowledged. The oldest unreported one goes first (RACK
    // judges in sending order); the echo is reported on its own even outside the bitmap.
    if (rx_->HasUnreported()) {
      const uint64_t first = rx_->FirstUnreported();
      if (first < sack_base || first > sack_base + 63) sack_base = first;
    }
    p.sack = Sack{ToWirePsn(sack_base), ToWirePsn(echo), rx_->Sack(sack_base)};
  } else {
    p.bth.opcode = Opcode::kRcAck;
  }
  const size_t n = Encode(p, out);
  if (n == 0) return 0;
  ack_ = PendingAck{};
  if (duplicate && !duplicate_echoes_.empty()) {
    const DuplicateEcho next = duplicate_echoes_.front();
    duplicate_echoes_.pop_front();
    ack_.pending = ack_.immediate = ack_.duplicate = true;
    ack_.trigger_psn = next.psn;
    ack_.ev_index = next.ev_index;
  }
  if (is_mrc()) {
    rx_->MarkReported(sack_base, echo);
    // Arrivals the bitmap could not hold: another ACK at once, echoing nothing new.
    if (rx_->HasUnreported()) ack_.immediate = true;
  }
  ++stats_.acks_sent;
  ++evs_.at(ev_index).counters.tx_acks;
  if (credit_dirty_) {
    credit_dirty_ = false;
    if (credit_repeat_interval_ == Duration::Zero()) {
      // The first repeat after 1-2 RTOs, by a hash of the QP numbers: a host posts receives on
      // all its QPs at once, and repeats due together (a burst of one advertisement per QP) were
      // tail-dropped together again, the same QPs' each time (they leave in the same order).
      const auto spread = static_cast<int64_t>(EcmpHashIndex(qpn_, remote_qpn_, 1024));
      credit_repeat_interval_ = rtt_.rto() * (1024 + spread) / 1024;
    } else {
      credit_repeat_interval_ = Min(credit_repeat_interval_ * 2, config_.rto.max_rto);
    }
    credit_repeat_at_ = now + credit_repeat_interval_;
  }
  *ev = evs_.at(ev_index).desc.id;
  return n;
}

}  // namespace mrclab::mrc
