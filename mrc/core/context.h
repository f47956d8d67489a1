// Context: one host's MRC endpoint, verbs-style (the "device context"): it owns registered
// memory, completion queues and QPs, and is the sans-I/O surface a driver talks to.
//
//   driver                         Context                         application
//   ------                         -------                         -----------
//   OnDatagram(now, bytes, info) ─► decode, check ICRC ─► QP by dest QPN
//   PollTransmit(now, buf) ◄─────── next packet of any QP (round-robin over the QPs that
//                                   may have one, qp_scheduler.h) + its (QPN, EV)
//   NextTimeout() / OnTimeout(now)  ACK delay, loss detection, RTO, probes
//   PollEvent() ◄─────────────────── EV state changes, QP errors, probe results
//                                  CompletionQueue::Poll ◄──────── completions
//                                  Qp::PostWrite / PostRecv ◄───── work requests
//
// The Context owns no socket, clock, thread or global. It is not thread-safe: a driver calls
// it from one thread (or under one lock).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "mrc/core/completion_queue.h"
#include "mrc/core/events.h"
#include "mrc/core/flat_id_map.h"
#include "mrc/core/memory_region.h"
#include "mrc/core/qp.h"
#include "mrc/core/qp_scheduler.h"
#include "mrc/core/rng.h"
#include "mrc/core/units.h"

namespace mrclab::mrc {

struct ContextConfig {
  // rkeys, QP numbers and initial PSNs derive from it. Drivers that talk to real networks
  // draw it from the kernel's entropy (AsioEndpointConfig::key_seed).
  uint64_t seed = 1;
  // PollTransmit leaves the zeros of Writes from kZeroFilled regions out of its buffer
  // (Transmit::elided), for drivers that carry datagrams without them and hand them back to
  // OnDatagram the same way (the simulation); others get every byte.
  bool elide_zero_payload = false;
};

inline constexpr uint32_t kFirstQpn = 0x100;  // QPNs below are never handed out

struct DatagramInfo {
  int plane = 0;        // NIC port it arrived on
  bool ecn_ce = false;  // IP ECN field was CE
  ZeroRun elided;       // zero bytes the datagram is held without (Transmit::elided)
};

struct ContextStats {
  uint64_t datagrams_in = 0, datagrams_out = 0, malformed = 0, unknown_qp = 0;
};

class Context {
 public:
  explicit Context(const ContextConfig& config = {});

  MemoryRegion RegisterMemory(std::span<uint8_t> buffer, uint32_t access);
  bool DeregisterMemory(uint32_t lkey) { return memory_.Deregister(lkey); }
  CompletionQueue& CreateCq();
  // The QP gets a fresh random QPN and a random initial PSN unless config.initial_psn is nonzero.
  Qp& CreateQp(QpConfig config, CompletionQueue& send_cq, CompletionQueue& recv_cq);
  Qp* FindQp(uint32_t qpn);
  // The same without moving anything: the recent two first, for prefetching drivers.
  const Qp* PeekQp(uint32_t qpn) const;
  std::vector<Qp*> Qps() const { return scheduler_.Qps(); }

  void OnDatagram(Timestamp now, std::span<const uint8_t> datagram, const DatagramInfo& info = {});
  // A hint for a driver that knows which datagram comes next, so that OnDatagram finds in cache
  // what it reads: stage 0 prefetches the QP it is for; stage 1, called later (when stage 0's
  // lines are there), what the QP points at (Qp::PrefetchState). Changes nothing.
  static constexpr int kPrefetchStages = 2;
  void Prefetch(std::span<const uint8_t> datagram, int stage) const;
  std::optional<Transmit> PollTransmit(Timestamp now, std::span<uint8_t> out);
  Timestamp NextTimeout() const { return scheduler_.NextTimeout(); }
  void OnTimeout(Timestamp now);
  std::optional<Event> PollEvent() { return events_.Pop(); }

  const ContextStats& stats() const { return stats_; }
  // Where what every datagram and poll reads of the Context itself begins: from here to the
  // Context's end (what only setup reads comes first), for a driver that prefetches it.
  const void* HotBegin() const { return &elide_zero_payload_; }
  // A hint for a driver whose next work request will name local key `lkey` (changes nothing).
  void PrefetchMemory(uint32_t lkey) const { memory_.PrefetchLocal(lkey); }

 private:
  // Read at setup (and for a QP not among the recent two): the QPs' and CQs' owners, the key
  // generator.
  Rng rng_;
  std::vector<std::unique_ptr<CompletionQueue>> cqs_;
  FlatIdMap<std::unique_ptr<Qp>> qps_;
  // What every datagram and poll reads, to the end (a few lines, hot together).
  bool elide_zero_payload_;
  ContextStats stats_;
  // The last two QPs datagrams arrived for (a ring's host gets data on one and ACKs on the
  // other), most recent first, with their QPNs beside them: found without a probe of qps_ or a
  // look at the QP's own line, both cold at thousands of hosts. A Context never destroys a QP,
  // so they stay valid.
  class RecentQps {
   public:
    // The QP of qpn if it is one of the two; a match with the second makes it the first.
    Qp* Find(uint32_t qpn) {
      if (qps_[0] != nullptr && qpns_[0] == qpn) return qps_[0];
      if (qps_[1] == nullptr || qpns_[1] != qpn) return nullptr;
      std::swap(qps_[0], qps_[1]);
      std::swap(qpns_[0], qpns_[1]);
      return qps_[0];
    }
    const Qp* Peek(uint32_t qpn) const {
      for (int i = 0; i < 2; ++i)
        if (qps_[i] != nullptr && qpns_[i] == qpn) return qps_[i];
      return nullptr;
    }
    void Remember(Qp* qp) {
      qps_ = {qp, qps_[0]};
      qpns_ = {qp->qpn(), qpns_[0]};
    }

   private:
    std::array<Qp*, 2> qps_{};
    std::array<uint32_t, 2> qpns_{};
  };
  RecentQps recent_qps_;
  // Which QPs may send and when the next times out, kept as QPs change (asking each QP on
  // every call was O(QPs) per datagram). NextTimeout brings it up to date, hence mutable.
  mutable QpScheduler scheduler_;
  MemoryRegistry memory_;
  EventSink events_;
};

}  // namespace mrclab::mrc
