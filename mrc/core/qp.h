// Queue pair: one reliable connection to one remote QP, in MRC mode (spraying over an EV
// profile, SACK, selective retransmit on another EV, probing) or in RC baseline mode (one
// ECMP-hashed EV, go-back-N on NAK/timeout, retry count, QP error when it runs out). Both modes
// share this object, the congestion control and the wire codec, so comparisons are fair.
//
// Sans-I/O contract (see context.h, which dispatches to QPs): the QP never reads a clock or
// touches a socket. OnPacket/PollTransmit/OnTimeout take `now`; PollTransmit serializes at most
// one packet into the caller's buffer; NextTimeout says when OnTimeout must next be called.
// After PostWrite/PostRecv/controller calls the driver must call PollTransmit again.
//
// Operations: RDMA Write and Write-with-Immediate. Send completions go to the send CQ in posting
// order once every packet of the message is acknowledged. A Write-with-Immediate consumes one
// receive posted with PostRecv at the responder and completes there (recv CQ) once all its
// bytes are placed; the responder advertises how many receives it has posted (CRDT header),
// which bounds how many Write-with-Immediate messages a requester may start.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "mrc/core/completion_queue.h"
#include "mrc/core/congestion_control.h"
#include "mrc/core/ev_profile.h"
#include "mrc/core/ev_selector.h"
#include "mrc/core/events.h"
#include "mrc/core/memory_region.h"
#include "mrc/core/message_assembler.h"
#include "mrc/core/prefetch.h"
#include "mrc/core/prober.h"
#include "mrc/core/receive_bitmap.h"
#include "mrc/core/ring_queue.h"
#include "mrc/core/rtt_estimator.h"
#include "mrc/core/wire.h"

namespace mrclab::mrc {

class QpScheduler;

enum class TransportMode : uint8_t { kMrc, kRc };
std::string_view ToString(TransportMode m);

struct QpConfig {
  // What a QP reads per packet comes first: the 64 bytes of a QP's copy that its per-packet
  // paths touch (the rest is read at setup, on a loss or in RC mode).
  TransportMode mode = TransportMode::kMrc;
  uint32_t mtu = 1024;                 // payload bytes per packet
  uint32_t max_outstanding_packets = 4096;  // PSN span in flight; <= receive_window_packets
  uint32_t ack_request_every = 4;
  uint32_t max_retransmissions = 15;   // MRC: per packet; one more loss is a QP error
  uint32_t max_send_wr = 4096;
  Duration ack_delay = Duration::Microseconds(5);
  Duration rc_ack_timeout = Duration::Milliseconds(1);  // RC: fixed local ACK timeout
  // MRC loss detection slack: this x min RTT, at least reorder_window_min. Sprayed paths differ
  // by queueing: at 1,024 hosts an all-to-all's packets arrive up to about an RTT apart (0.25,
  // TCP RACK's start, made 3% of them look lost). Each round trip that proves a loss spurious
  // widens it by one more of these, up to reorder_window_max_srtts x SRTT (RFC 8985 §6.2).
  double reorder_window_rtt_fraction = 1.0;
  double reorder_window_max_srtts = 3.0;
  Duration reorder_window_min = Duration::Microseconds(2);
  std::vector<EvDescriptor> evs = MakeEvProfile(8, 1);
  EvPolicyConfig ev_policy;
  CcConfig cc;
  RtoConfig rto;
  uint32_t rc_retry_count = 7;         // RC: retries (IBTA retry_cnt): timeout n+1 in a row is a QP error
  uint32_t receive_window_packets = 8192;
  uint32_t initial_psn = 0;            // low 24 bits used
  // What RC's one path is hashed from, as a NIC hashes a flow onto one UDP source port. None:
  // the QP numbers, as a real NIC (random keys then give a random path per run). A job sets it
  // from its seed and rank pair, so its paths replay with the seed, in every world.
  std::optional<uint64_t> flow_key;
};

struct WriteRequest {
  uint64_t wr_id = 0;
  uint32_t lkey = 0;
  uint64_t local_addr = 0;
  uint32_t length = 0;
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  std::optional<uint32_t> immediate;  // present: Write-with-Immediate
};

enum class PostResult : uint8_t { kOk, kQueueFull, kBadLocalKey, kNotReady };

struct QpStats {
  // The counters every message moves first (one cache line), then those of losses and faults.
  uint64_t data_packets_sent = 0, acks_sent = 0, acks_received = 0, data_packets_received = 0;
  uint64_t bytes_acked = 0, bytes_placed = 0, send_completions = 0, recv_completions = 0;
  uint64_t retransmissions = 0, naks_sent = 0, naks_received = 0, probes_sent = 0, probe_replies_sent = 0;
  uint64_t rto_fired = 0, rack_losses = 0, duplicates_received = 0;
  uint64_t spurious_losses = 0;  // declared lost, then proven delivered (mrc/README.md)
  uint64_t duplicate_acks_received = 0;  // the responder got a packet twice (D-SACK)
  uint64_t out_of_window = 0, access_errors = 0;
};

struct Transmit {
  size_t length = 0;  // the datagram's, an elided zero run included
  uint32_t qpn = 0;
  uint16_t ev = 0;
  ZeroRun elided;     // zeros left out of the buffer (PollTransmit's elide_zeros), or {0, 0}
};

class alignas(64) Qp {
 public:
  // Throws std::invalid_argument for more than 32,767 EVs (config.evs).
  Qp(uint32_t qpn, const QpConfig& config, MemoryRegistry* memory, CompletionQueue* send_cq,
     CompletionQueue* recv_cq, EventSink* events);
  Qp(const Qp&) = delete;
  Qp& operator=(const Qp&) = delete;

  uint32_t qpn() const { return qpn_; }
  uint32_t remote_qpn() const { return remote_qpn_; }
  TransportMode mode() const { return config_.mode; }
  QpState state() const { return state_; }
  const QpConfig& config() const { return config_; }
  // RC mode: the one EV the QP sends on (an ECMP hash of the QP numbers; set by Connect).
  size_t rc_ev_index() const { return rc_ev_index_; }

  // Tells `scheduler` (its Context's, once it keeps track of its QPs) of every call that may
  // change what the QP sends or when it times out, as its QP `index` (qp_scheduler.h).
  void Watch(QpScheduler* scheduler, uint32_t index) {
    scheduler_ = scheduler;
    scheduler_index_ = index;
  }

  // Moves the QP to RTS towards `remote_qpn`, whose initial send PSN is `remote_initial_psn`.
  void Connect(uint32_t remote_qpn, uint32_t remote_initial_psn);
  PostResult PostWrite(const WriteRequest& wr);
  PostResult PostRecv(uint64_t wr_id);

  void OnPacket(Timestamp now, const Packet& packet, bool ecn_ce);
  // elide_zeros: a Write from a zero-filled region (kZeroFilled) leaves its payload's zeros out
  // of `out` and says where they belong (Transmit::elided).
  std::optional<Transmit> PollTransmit(Timestamp now, std::span<uint8_t> out, bool elide_zeros = false);
  Timestamp NextTimeout() const;
  void OnTimeout(Timestamp now);

  // Controller API.
  std::vector<EvStatus> ListEvs() const { return evs_.List(); }
  // Whether the QP's data may go out on `ev`: MRC, any EV of its profile; RC, its one EV.
  bool SendsOn(uint16_t ev) const {
    const int i = evs_.IndexOf(ev);
    return i >= 0 && (is_mrc() || static_cast<size_t>(i) == rc_ev_index_);
  }
  // False for an EV the QP does not have, or one it keeps GOOD: denying it would leave fewer
  // GOOD EVs than ev_policy.min_active.
  bool DenyEv(uint16_t ev, Timestamp now);
  bool AllowEv(uint16_t ev, Timestamp now);
  std::optional<uint32_t> ProbeEv(uint16_t ev);  // result: ProbeCompleted event
  size_t DisablePlane(int plane, Timestamp now) {
    Touch();
    return evs_.SetPlane(plane, false, now);
  }
  size_t EnablePlane(int plane, Timestamp now) {
    Touch();
    return evs_.SetPlane(plane, true, now);
  }

  const QpStats& stats() const { return stats_; }
  Duration srtt() const { return rtt_.srtt(); }
  Duration min_rtt() const { return rtt_.min_rtt(); }
  Bytes congestion_window() const { return cc_->window(); }
  Bytes bytes_in_flight() const { return in_flight_; }
  // Hints for a driver that knows which datagram or work request comes next (they change
  // nothing): Prefetch, the QP's own lines that a datagram may read (13 of 20: see the
  // members); PrefetchState, once those are there, what a datagram on EV `ev` goes on to read:
  // the EV's entry (none for an `ev` it has not) and, for an ACK, the requester's congestion
  // control and queues (the next slots of its WRs, packets in flight, transmit log and send
  // CQ); for anything else, the responder's (its receive bitmap, assembler, receives and
  // receive CQ), and the congestion control only if the QP has work requests of its own.
  void Prefetch() const {
    PrefetchSpan(this, &stats_);
    PrefetchLine(&stats_);
    PrefetchLine(&config_);
  }
  void PrefetchState(uint16_t ev, bool ack) const;
  // The EV index the next new packet most likely leaves on (where the spraying cursor points;
  // a hint for prefetching its route, 0 without EVs).
  uint16_t NextEvHint() const { return evs_.size() == 0 ? 0 : static_cast<uint16_t>(selector_.cursor() % evs_.size()); }
  size_t outstanding_work_requests() const { return wrs_.size(); }
  // How many more Write-with-Immediate messages the peer's advertised receives let it start.
  uint32_t write_imm_credits() const {
    return static_cast<int32_t>(peer_credit_limit_ - imm_started_) > 0 ? peer_credit_limit_ - imm_started_ : 0;
  }

 private:
  enum class PacketState : uint8_t { kInFlight, kLost, kAcked };
  struct SendWr {
    WriteRequest req;
    const uint8_t* local = nullptr;
    bool zero_filled = false;  // local is in a kZeroFilled region: send zeros, do not read it
    uint32_t next_offset = 0;
    uint32_t packets = 0;
    uint32_t acked = 0;
    bool started = false;
    bool segmented = false;
  };
  struct SentPacket {
    uint32_t msg_seq;
    uint32_t offset;
    uint32_t length;
    Timestamp sent_at;
    uint64_t tx_seq;  // order of the latest transmission, across all packets
    uint16_t ev_index;
    uint16_t transmissions;
    PacketState state;
    bool first, last;
    // MRC: its latest loss was counted against EV lost_ev (and the window) and may prove false.
    bool loss_counted = false;
    uint16_t lost_ev = 0;
  };
  struct TxLogEntry {  // one per transmission, in sending order
    uint64_t psn;
    uint64_t tx_seq;
    Timestamp sent_at;
  };
  struct PendingAck {  // 24 bytes
    Timestamp deadline = Timestamp::Infinite();
    uint64_t trigger_psn = 0;
    int16_t ev_index = -1;    // EV indexes are below 2^15 (EV ids are 16-bit)
    bool pending = false;     // something to acknowledge
    bool immediate = false;   // send at the next PollTransmit
    bool ecn = false;
    bool duplicate = false;   // the trigger was a copy already received
    AethCode code = AethCode::kAck;
  };
  struct ProbeReply {
    uint16_t ev;
    Probe probe;
  };
  struct UnprovenLoss {  // acknowledged and left the window with its counted loss unproven
    uint64_t psn;
    uint16_t lost_ev, resent_ev;
  };
  struct DuplicateEcho {  // a copy received twice, to be echoed by an ACK of its own
    uint64_t psn;
    int16_t ev_index;
  };

  bool is_mrc() const { return config_.mode == TransportMode::kMrc; }
  // Tells the scheduler this QP may have changed (called first by every public mutator).
  void Touch();
  // Whether a controller left this QP a way out: MRC needs one EV not DENIED, RC (pinned to
  // one path, no other) its own EV.
  bool CanTransmit() const {
    return is_mrc() ? !evs_.AllDenied() : evs_.at(rc_ev_index_).state != EvState::kDenied;
  }
  SendWr& WrFor(uint32_t msg_seq) { return wrs_[msg_seq - wrs_front_seq_]; }
  SentPacket& Sent(uint64_t psn) { return sent_[psn - sent_base_psn_]; }
  Duration Penalty() const;
  Duration ReorderWindow() const;

  // Requester.
  std::optional<Transmit> TransmitData(Timestamp now, std::span<uint8_t> out, bool elide_zeros);
  size_t EncodeData(uint64_t psn, bool retransmission, bool ack_request, std::span<uint8_t> out, ZeroRun* elided);
  void OnAck(Timestamp now, const Packet& p);
  bool AckPacket(uint64_t psn, Timestamp now);
  void MarkLost(uint64_t psn, Timestamp now, bool timeout, bool ev_feedback);
  void MarkEvInFlightLost(size_t ev_index, Timestamp now);
  bool OriginalLossCounted(const SentPacket& sp) const;
  void OnSpuriousLoss(size_t ev_index, Timestamp now);
  // An ACK echoed `psn`, below the window, on EV index `ack_ev`: proves its loss spurious if it
  // is an unproven one (see unproven_losses_) and the ACK is proof. Returns whether it was.
  bool ProveLossBelowWindow(uint64_t psn, int ack_ev, bool duplicate, Timestamp now);
  void WidenReorderWindow(Timestamp now);
  void DetectLosses(Timestamp now);
  void OnRetransmissionTimeout(Timestamp now);
  void CleanTxLog();
  // The log entry is the latest transmission of a packet still in flight.
  bool InFlight(const TxLogEntry& e);
  void AdvanceAndComplete();
  void EnterError(WcStatus status, std::string_view reason, Timestamp now);

  // Responder.
  void OnData(Timestamp now, const Packet& p, bool ecn_ce);
  void OnDataMrc(Timestamp now, const Packet& p, uint64_t psn, int ev_index);
  void OnDataRc(Timestamp now, const Packet& p, uint64_t psn);
  void DeliverRecvCompletion(uint32_t length, std::optional<uint32_t> immediate);
  void ScheduleAck(Timestamp now, uint64_t trigger_psn, int ev_index, bool ecn, bool immediate,
                   bool duplicate = false);
  size_t EncodeAck(std::span<uint8_t> out, uint16_t* ev, Timestamp now);
  void OnProbe(Timestamp now, const Packet& p);

  // Members are laid out by use, on 11 lines that every datagram or transmission may read, then
  // stats_ and config_ (each with its per-packet fields on its first line), then what only
  // losses, faults and RC mode read. The 11: what both sides of a connection read (5 lines);
  // the requester's own state; the requester's that a poll or a timeout reads on any QP (2
  // lines); the responder's that they read on any QP (1 line); the responder's own state. A QP
  // that is only a requester, or only a responder (a ring's), reads 9 or 10 of them, not all
  // 11. Prefetch asks for the 11 and the first lines of stats_ and config_: 13 of 20.
  uint32_t qpn_;
  uint32_t remote_qpn_ = 0;
  QpState state_ = QpState::kReset;
  uint32_t scheduler_index_ = 0;
  QpScheduler* scheduler_ = nullptr;
  MemoryRegistry* memory_;
  CompletionQueue* send_cq_;
  CompletionQueue* recv_cq_;
  std::unique_ptr<CongestionControl> cc_;

  EvTable evs_;
  SprayingSelector selector_;
  RttEstimator rtt_;
  Prober prober_;

  // Requester state: its own first, then what polls and timeouts read on every QP.
  RingQueue<SentPacket> sent_;
  uint64_t next_tx_seq_ = 1;
  uint64_t rack_tx_seq_ = 0;  // latest-sent transmission known delivered
  Duration rack_rtt_;
  // RFC 8985 §6.2: the reorder window grows by one base window per round trip that proved a
  // loss spurious (up to reorder_window_max_srtts x SRTT) and returns to the base after 16 loss
  // episodes (RACK losses an SRTT apart) without one (every ACK reads the multiplier).
  uint32_t reorder_multiplier_ = 1;
  uint32_t reorder_persist_ = 0;
  uint32_t next_msg_seq_ = 0;
  uint32_t imm_started_ = 0;
  uint32_t peer_credit_limit_ = 0;
  uint32_t since_ack_request_ = 0;
  Bytes in_flight_;
  std::set<uint64_t> retransmit_;
  RingQueue<SendWr> wrs_;
  uint32_t wrs_front_seq_ = 0;  // msg_seq of wrs_.front()
  uint32_t seg_msg_seq_ = 0;    // first WR not fully segmented
  uint64_t sent_base_psn_ = 0;  // lowest unacknowledged PSN
  uint64_t next_psn_ = 0;
  RingQueue<TxLogEntry> tx_log_;
  Timestamp rack_timer_ = Timestamp::Infinite();

  // Responder state: what polls and timeouts read on every QP first, then its own.
  PendingAck ack_;
  Timestamp credit_repeat_at_ = Timestamp::Infinite();
  RingQueue<ProbeReply> probe_replies_;
  uint32_t recv_posted_total_ = 0;
  bool credit_dirty_ = false;
  std::optional<ReceiveBitmap> rx_;
  MessageAssembler assembler_;
  RingQueue<uint64_t> recv_wrs_;
  Duration credit_repeat_interval_;

  alignas(64) QpStats stats_;    // its first line is per message, the rest per loss or fault
  alignas(64) QpConfig config_;  // likewise

  EventSink* events_;  // read on errors, probe results and EV changes only

  // Loss recovery.
  Timestamp reorder_widened_at_;
  Timestamp loss_episode_at_;
  // Copies received twice while an ACK echoing another waited: each is the requester's proof
  // that one loss was spurious, so each gets an ACK of its own (at most kMaxDuplicateEchoes
  // wait; only while the pending ACK echoes a duplicate is this not empty).
  static constexpr size_t kMaxDuplicateEchoes = 64;
  RingQueue<DuplicateEcho> duplicate_echoes_;
  // The last kMaxUnprovenLosses packets acknowledged while their counted loss was unproven:
  // the ACK that proves one (a duplicate's echo) may come after an ACK whose cumulative point
  // moved the window past it, as TCP's D-SACK reports segments below the cumulative ACK.
  static constexpr size_t kMaxUnprovenLosses = 64;
  RingQueue<UnprovenLoss> unproven_losses_;

  // RC mode.
  size_t rc_ev_index_ = 0;
  uint32_t rc_retries_ = 0;
  uint32_t rc_msn_ = 0;
  uint64_t rc_expected_ = 0;
  bool rc_nak_sent_ = false;
  struct RcMessage {
    bool active = false;
    uint64_t va = 0;
    uint32_t rkey = 0;
    uint32_t length = 0;
    uint32_t offset = 0;
  } rc_msg_;
};

}  // namespace mrclab::mrc
