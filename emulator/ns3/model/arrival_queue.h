// ArrivalQueue: the packet arrivals of a fabric's ports, kept in time order and run from a
// single ns-3 event at the earliest of them (htsim keeps its own event list the same way). A
// port's delivery is the one event per packet and hop the model has; batching them here saves
// ns-3's per-event allocation and bookkeeping, and lets the queue prefetch the next arrival's
// port and packet while it runs the current one (at 1,024 hosts and more, a hop costs mostly
// cache misses). It also holds the pool its ports' queued packets come from (queued_packet.h).
//
// The arrivals wait in a CalendarQueue (calendar_queue.h): appended to a bucket of the ring,
// sorted when their bucket comes up (a binary heap of every arrival was 14% of a 1,024-host
// step).
//
//   SimPort::Admit ─► Push(at, port, seq, node) ─► bucket (or the far heap) ─► ns-3 event at the
//   earliest `at` ─► Fire: every arrival due, in (at, push order), and on BucketScheduler those
//   of the next instants until another ns-3 event is due ─► SimPort::Deliver(node, seq) ─► far end
//
// Contract:
//   - Arrivals run in order of their time, then of their Push (so one port's deliveries keep
//     their order, and a run is reproducible). All arrivals due at an instant run in one ns-3
//     event, scheduled when the earliest arrival was pushed; an arrival pushed while they run
//     for the same instant runs in the same batch.
//   - On BucketScheduler the same event then runs the next instant's arrivals, and the next,
//     while no other ns-3 event is due at or before them (BucketScheduler::RunAhead moves the
//     models' clock, SimNowSteps(), to each, and counts it towards its stop check): the order
//     of everything, arrivals and events, is the one they would have had with an ns-3 event per
//     instant (an event per hop had cost about 15% of a big simulation's instructions). Code that runs in
//     an arrival reads the time from SimNowSteps() and schedules with SimDelayUntil().
//   - Ports given to Push must outlive the queue's pending arrivals (a SimFabric owns both).
//     Destroying the queue cancels its ns-3 event; Simulator::Destroy() may come before or after.
//   - Not thread-safe: one simulation, one thread.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "emulator/ns3/model/calendar_queue.h"
#include "emulator/ns3/model/queued_packet.h"
#include "ns3/event-id.h"
#include "ns3/event-impl.h"
#include "ns3/ptr.h"

namespace mrclab::emulator::sim {

class PacketSink;
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
  size_t Size() const { return calendar_.Size(); }
  // Sets a bucket's width to the power of two at or below `steps` time steps (at least 1): about
  // the serialisation of a small packet on the fabric's links keeps buckets short and the
  // window (CalendarQueue::kRingBuckets of them) past most arrivals. Throws std::logic_error
  // unless empty.
  void SetBucketWidth(int64_t steps) { calendar_.SetBucketWidth(steps); }
  // The width in time steps.
  int64_t BucketWidth() const { return calendar_.BucketWidth(); }

 private:
  struct Arrival {
    int64_t at;
    uint64_t order;  // push order: ties at one instant keep it
    SimPort* port;
    uint64_t seq;
    QueuedPacket* node;
    const PacketSink* sink;  // the port's far end (prefetched ahead)
  };
  static bool Before(const Arrival& a, const Arrival& b) { return a.at != b.at ? a.at < b.at : a.order < b.order; }

  void Fire();
  // Schedules the ns-3 event at the earliest arrival unless it is there already.
  void Arm();

  QueuedPacketPool packets_;  // before calendar_: destroyed after the arrivals that name its nodes
  CalendarQueue<Arrival, &ArrivalQueue::Before> calendar_;
  uint64_t next_order_ = 0;
  ns3::EventId event_;
  ns3::Ptr<ns3::EventImpl> fire_;  // the event that runs Fire, reused until it is cancelled
  int64_t event_at_ = std::numeric_limits<int64_t>::max();  // max: no event pending
  bool firing_ = false;
};

}  // namespace mrclab::emulator::sim
