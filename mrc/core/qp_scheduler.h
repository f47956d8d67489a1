// QpScheduler: which of a Context's QPs may have a packet to send, and when the earliest of
// their timeouts is due, without asking every QP on every call. A host of an all-to-all job
// has a QP per peer (thousands at cluster scale) and a driver asks PollTransmit and NextTimeout
// after every datagram: asking every QP made each call O(QPs), and a 1,024-host all-to-all
// spent 86% of its time there.
//
//   Qp mutator (post, packet, poll, timeout, controller) ─► Touched(index): ready bit set,
//                                                           index queued for re-asking
//   PollTransmit ─► ready QPs (and those whose deadline has come) in round-robin order from
//                   the cursor ─► Qp::PollTransmit (nothing to send: its ready bit is cleared)
//   NextTimeout ─► queued QPs re-asked ─► min-heap of (deadline, index); stale entries skipped
//   RunDue(now) ─► Qp::OnTimeout of the QPs whose deadline has come, in index order
//
// Up to kScanQps QPs it asks every one of them instead (the reference it must agree with).
//
// Contract: a QP that is not ready would send nothing. It sent nothing when last asked, and
// nothing happened to it since but the passing of time, and its deadline has not come:
// Qp::NextTimeout is at or before every instant at which PollTransmit's answer can change by
// itself, and PollTransmit asks every QP whose deadline has come (a driver may poll at that
// instant before it calls OnTimeout). So the QP that sends next, and the QPs that time out and
// their order, are what asking every QP in index order gives, call for call.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "mrc/core/units.h"

namespace mrclab::mrc {

class Qp;
struct Transmit;

class QpScheduler {
 public:
  // Adds a QP (ready, and queued to be asked its timeout) and, once there are more than
  // kScanQps, has every QP tell it of changes (Qp::Watch). QPs stay.
  void Add(Qp* qp);
  // The QP at `index` changed: it may have something to send, and its timeout may have moved.
  void Touched(uint32_t index) {
    SetReady(index);
    Queue(index);
  }
  // The packet of the first ready QP, from the round-robin cursor on, that has one (the
  // cursor then moves past it); QPs asked that had none are no longer ready.
  std::optional<Transmit> PollTransmit(Timestamp now, std::span<uint8_t> out, bool elide_zeros);
  // A hint for a driver that knows a datagram comes: while the scheduler scans (up to kScanQps
  // QPs), stage 0 prefetches its list of QPs and stage 1 their lines (but `skip`'s), since the
  // next PollTransmit and NextTimeout ask each of them. Changes nothing.
  void PrefetchScanned(int stage, const Qp* skip) const;
  // Every QP, in the order added.
  const std::vector<Qp*>& Qps() const { return qps_; }
  // The earliest deadline of any QP (Infinite if none).
  Timestamp NextTimeout();
  // Calls Qp::OnTimeout(now) on every QP whose deadline is at or before `now`, in index order
  // (which are due is decided before the first is called).
  void RunDue(Timestamp now);

 private:
  struct Deadline {
    Timestamp at;
    uint32_t index;
  };
  static bool Later(const Deadline& a, const Deadline& b) {
    return a.at != b.at ? a.at > b.at : a.index > b.index;
  }
  static constexpr size_t kNone = SIZE_MAX;
  // Up to this many QPs every call asks each of them (a ring's host has two or so): their
  // lines are in cache, the bookkeeping's would not be (it made an 8,192-host ring 8% slower).
  static constexpr size_t kScanQps = 8;

  void SetReady(uint32_t i) {
    book_->ready_[i >> 6] |= uint64_t{1} << (i & 63);
    book_->summary_[i >> 12] |= uint64_t{1} << ((i >> 6) & 63);
  }
  void ClearReady(uint32_t i);
  void Queue(uint32_t i) {
    if (book_->queued_[i]) return;
    book_->queued_[i] = true;
    book_->touched_.push_back(i);
  }
  // The first ready index at or after `from`, or kNone.
  size_t NextReady(size_t from) const;
  // Makes ready every QP whose deadline has come: what PollTransmit answers can change then
  // (an ACK's delay is over), and a driver may ask before it calls OnTimeout at that instant.
  void MarkDueReady(Timestamp now);
  // Asks the queued QPs their timeout; keeps the heap's top valid.
  void Refresh();
  void Push(Deadline d);
  Deadline Pop();

  // What a scan reads; the bookkeeping, from the (kScanQps + 1)-th QP on, in an object of its
  // own (a scanning scheduler is 40 bytes of the Context's lines every datagram reads, not 250).
  struct Bookkeeping {
    std::vector<uint64_t> ready_;    // bit i: QP i is ready
    std::vector<uint64_t> summary_;  // bit w: ready_[w] is not zero
    std::vector<bool> queued_;       // in touched_ (its size: the QPs kept so far)
    std::vector<uint32_t> touched_;  // to be asked their timeout
    std::vector<Timestamp> deadline_;  // each QP's timeout, as last asked
    // Every finite deadline_[i] has an entry (at == deadline_[i]); entries whose `at` no longer
    // is their QP's deadline are stale and skipped when they come up.
    std::vector<Deadline> heap_;
    std::vector<uint32_t> due_;   // RunDue's, kept for its capacity
    std::vector<size_t> walk_;    // MarkDueReady's, likewise
  };
  std::vector<Qp*> qps_;
  size_t cursor_ = 0;  // where the next round-robin search starts
  std::unique_ptr<Bookkeeping> book_;  // null while qps_.size() <= kScanQps: scanning
};

}  // namespace mrclab::mrc
