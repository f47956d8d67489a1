// ArrivalQueue: the packet arrivals of a fabric's ports, kept in time order in one array heap
// and run from a single ns-3 event at the earliest of them (htsim keeps its own event list the
// same way). A port's delivery is the one event per packet and hop the model has; batching them
// here saves ns-3's per-event allocation and bookkeeping, and lets the queue prefetch the next
// arrival's port and FIFO entry while it runs the current one (at 1,024 hosts and more, a hop
// costs mostly cache misses).
//
//   SimPort::Admit ─► Push(at, port, seq) ─► heap ─► ns-3 event at the earliest `at` ─► Fire:
//   every arrival due, in (at, push order) ─► SimPort::Deliver ─► far end
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

#include "ns3/event-id.h"

namespace mrclab::emulator::sim {

class SimPort;

class ArrivalQueue {
 public:
  ArrivalQueue() = default;
  ~ArrivalQueue();
  ArrivalQueue(const ArrivalQueue&) = delete;
  ArrivalQueue& operator=(const ArrivalQueue&) = delete;

  // Has port->Deliver(seq) run at ns-3 time step `at` (not before now). `where` is a prefetch
  // hint only: where the packet's FIFO entry was when it was pushed (it may move later).
  void Push(int64_t at, SimPort* port, uint64_t seq, const void* where);
  // Arrivals not yet run.
  size_t Size() const { return heap_.size(); }

 private:
  struct Arrival {
    int64_t at;
    uint64_t order;  // push order: ties at one instant keep it
    SimPort* port;
    uint64_t seq;
    const void* where;
  };
  static bool Later(const Arrival& a, const Arrival& b) { return a.at != b.at ? a.at > b.at : a.order > b.order; }
  void Fire();
  // Schedules the ns-3 event at the earliest arrival unless it is there already.
  void Arm();
  void Prefetch() const;

  std::vector<Arrival> heap_;  // a binary min-heap by Later (a 4-ary one measured slower)
  uint64_t next_order_ = 0;
  ns3::EventId event_;
  int64_t event_at_ = std::numeric_limits<int64_t>::max();  // max: no event pending
  bool firing_ = false;
};

}  // namespace mrclab::emulator::sim
