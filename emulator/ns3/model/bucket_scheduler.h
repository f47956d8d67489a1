// BucketScheduler: an ns-3 event scheduler (ns3::Scheduler, TypeId "mrclab::BucketScheduler")
// on a CalendarQueue (calendar_queue.h), and the simulation's clock read without a call into
// ns-3 (SimNowSteps).
//
//   Simulator::Schedule ─► Insert: appended to the bucket of its time (a heap beyond the window)
//   DefaultSimulatorImpl::ProcessOneEvent ─► RemoveNext: the earliest (time, uid) ─► the clock
//
// Why: a simulation of a big fabric runs about one ns-3 event per two packet-hops (ArrivalQueue
// runs all arrivals of an instant in one). ns-3's PriorityQueueScheduler (a binary heap) spent
// about 600 instructions per event inserting and removing it, and Simulator::Now() about 50 per
// call, several calls per hop.
//
// Contract:
//   - Events come out in (time, uid) order, as from every ns-3 scheduler: choosing it changes no
//     result. Remove takes out any event (Simulator::Remove); Cancel is ns-3's flag, as ever.
//   - BucketWidth (attribute, default 128 ns): the width of one of the ring's 1,024 buckets; at
//     about the gap between events the buckets stay short and the window (1,024 widths) covers
//     most of them. Events beyond it wait in a heap. A width changes speed, never order.
//   - SimNowSteps() is Simulator::Now().GetTimeStep(): the time of the event this scheduler
//     handed out last, while it is the running simulator's scheduler (from its first RemoveNext
//     until it is destroyed; ns-3's teardown drains it), else Simulator::Now() itself. Not
//     thread-safe: one simulation.
//   - GetTypeId() registers the TypeId; call it before naming the scheduler to ns-3
//     (sim_scheduler.h's UseSimScheduler does). It is not registered during static
//     initialisation: its Time attribute, built then, crashed ns-3's attribute lookups.
#pragma once

#include <cstdint>

#include "emulator/ns3/model/calendar_queue.h"
#include "ns3/nstime.h"
#include "ns3/scheduler.h"
#include "ns3/simulator.h"

namespace mrclab::emulator::sim {

class BucketScheduler : public ns3::Scheduler {
 public:
  static ns3::TypeId GetTypeId();
  BucketScheduler() { ++instances_; }
  ~BucketScheduler() override;
  // How many exist: a simulator made with another scheduler (ns-3's default, when something
  // asked it the time before UseSimScheduler) has none.
  static int Instances() { return instances_; }

  void Insert(const Event& ev) override;
  bool IsEmpty() const override;
  Event PeekNext() const override;
  Event RemoveNext() override;
  void Remove(const Event& ev) override;

  // Every kEventsPerStopCheck events RemoveNext asks `stop_requested` (if set) and on true calls
  // Simulator::Stop(): Simulator::Run returns after the current event, however long simulated
  // time stands still (a model that reschedules itself at one instant for ever, and Ctrl-C).
  static constexpr uint32_t kEventsPerStopCheck = 1 << 16;
  static inline bool (*stop_requested)() = nullptr;

  // The clock SimNowSteps() reads: the scheduler that handed out the running event, and its time.
  struct Clock {
    static inline const BucketScheduler* owner = nullptr;
    static inline int64_t now_steps = 0;
  };

 private:
  struct Item {
    int64_t at;
    uint32_t uid;
    uint32_t context;
    ns3::EventImpl* impl;
  };
  static bool Before(const Item& a, const Item& b) { return a.at != b.at ? a.at < b.at : a.uid < b.uid; }
  static Event ToEvent(const Item& item);
  void SetBucketWidth(ns3::Time width);
  ns3::Time GetBucketWidth() const;

  // mutable: PeekNext (const in ns-3's interface) sorts the bucket it looks at.
  mutable CalendarQueue<Item, &BucketScheduler::Before> calendar_;
  uint32_t events_to_stop_check_ = kEventsPerStopCheck;
  static inline int instances_ = 0;
};

// Simulator::Now().GetTimeStep(), without the call while a BucketScheduler runs the simulation.
inline int64_t SimNowSteps() {
  return BucketScheduler::Clock::owner != nullptr ? BucketScheduler::Clock::now_steps
                                                  : ns3::Simulator::Now().GetTimeStep();
}

}  // namespace mrclab::emulator::sim
