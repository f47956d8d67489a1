// ArrivalQueue: the packet arrivals of a fabric's ports, kept in time order and run from a
// single ns-3 event at the earliest of them (htsim keeps its own event list the same way). A
// port's delivery is the one event per packet and hop the model has; batching them here saves
// ns-3's per-event allocation and bookkeeping, and lets the queue prefetch the next arrival's
// port and packet while it runs the current one (at 1,024 hosts and more, a hop costs mostly
// cache misses). It also holds the pool its ports' queued packets come from (queued_packet.h).
//
// A calendar queue (Brown, CACM 1988): a ring of kRingBuckets buckets, each a power of two of
// time steps wide (SetBucketWidth), covers a window from now. An arrival is appended to its
// bucket; a bucket is sorted only when it becomes the earliest one, and then run from the front. Arrivals beyond
// the ring's window (long link delays, deep queues at low rates) wait in a binary heap and move
// into the ring when it reaches them. Appending and running in order cost a sort of a bucket
// in cache instead of a heap's log(n) cache misses per arrival (a binary heap of every arrival
// was 14% of a 1,024-host step).
//
//   SimPort::Admit ─► Push(at, port, seq, node) ─► bucket (or the far heap) ─► ns-3 event at the
//   earliest `at` ─► Fire: every arrival due, in (at, push order) ─► SimPort::Deliver(node, seq)
//   ─► far end
//
// Contract:
//   - Arrivals run in order of their time, then of their Push (so one port's deliveries keep
//     their order, and a run is reproducible). All arrivals due at an instant run in one ns-3
//     event, scheduled when the earliest arrival was pushed; an arrival pushed while they run
//     for the same instant runs in the same batch.
//   - Ports given to Push must outlive the queue's pending arrivals (a SimFabric owns both).
//     Destroying the queue cancels its ns-3 event; Simulator::Destroy() may come before or after.
//   - Not thread-safe: one simulation, one thread.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "emulator/ns3/model/queued_packet.h"
#include "ns3/event-id.h"

namespace mrclab::emulator::sim {

class SimPort;

class ArrivalQueue {
 public:
  ArrivalQueue() = default;
  ~ArrivalQueue();
  ArrivalQueue(const ArrivalQueue&) = delete;
  ArrivalQueue& operator=(const ArrivalQueue&) = delete;

  // Has port->Deliver(node, seq) run at ns-3 time step `at` (not before now).
  void Push(int64_t at, SimPort* port, uint64_t seq, QueuedPacket* node);
  // Where the ports that push here take their queued packets from.
  QueuedPacketPool& Packets() { return packets_; }
  // Arrivals not yet run.
  size_t Size() const { return size_; }
  // Sets a bucket's width to the power of two at or below `steps` time steps (at least 1): about
  // the serialisation of a small packet on the fabric's links keeps buckets short and the
  // window (kRingBuckets of them) past most arrivals. Throws std::logic_error unless empty.
  void SetBucketWidth(int64_t steps);
  // The width in time steps.
  int64_t BucketWidth() const { return int64_t{1} << shift_; }

  // Buckets in the ring (a power of two).
  static constexpr int64_t kRingBuckets = 1024;

 private:
  struct Arrival {
    int64_t at;
    uint64_t order;  // push order: ties at one instant keep it
    SimPort* port;
    uint64_t seq;
    QueuedPacket* node;
  };
  static bool Before(const Arrival& a, const Arrival& b) { return a.at != b.at ? a.at < b.at : a.order < b.order; }
  static bool Later(const Arrival& a, const Arrival& b) { return Before(b, a); }
  int64_t BucketOf(int64_t at) const { return at >> shift_; }
  std::vector<Arrival>& Slot(int64_t bucket) { return ring_[static_cast<size_t>(bucket & (kRingBuckets - 1))]; }

  void Fire();
  // Schedules the ns-3 event at the earliest arrival unless it is there already.
  void Arm();
  // Puts an arrival of bucket `bucket` (within the window) in the ring.
  void PutInRing(int64_t bucket, const Arrival& a);
  // Moves the far arrivals the window now reaches into the ring.
  void MigrateFar();
  // The earliest arrival (sorting the earliest bucket when needed), or null when there is none.
  const Arrival* Earliest();
  // Makes the earliest occupied bucket the sorted front; false when the ring is empty.
  bool FindFront();
  // Empties the front bucket once it has run.
  void ClearFront();
  void Prefetch();

  QueuedPacketPool packets_;  // before ring_: destroyed after the arrivals that name its nodes
  int shift_ = 6;  // log2 of a bucket's width in time steps
  std::vector<std::vector<Arrival>> ring_;  // kRingBuckets buckets, allocated by the first Push
  std::vector<uint64_t> occupied_;          // a bit per bucket that holds arrivals
  int64_t base_ = 0;   // the bucket of the last time the queue looked at the clock (<= now)
  int64_t front_ = -1;  // the sorted bucket that runs next (-1: not chosen yet)
  size_t front_pos_ = 0;  // arrivals of the front bucket already run
  std::vector<Arrival> far_;  // a binary min-heap (by Later) of arrivals beyond the window
  size_t size_ = 0;
  uint64_t next_order_ = 0;
  ns3::EventId event_;
  int64_t event_at_ = std::numeric_limits<int64_t>::max();  // max: no event pending
  bool firing_ = false;
};

}  // namespace mrclab::emulator::sim
