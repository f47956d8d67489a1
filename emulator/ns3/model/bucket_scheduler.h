// BucketScheduler: an ns-3 event scheduler (ns3::Scheduler, TypeId "mrclab::BucketScheduler")
// on a CalendarQueue (calendar_queue.h), and the simulation's clock read without a call into
// ns-3 (SimNowSteps).
//
//   Simulator::Schedule ─► Insert: appended to the bucket of its time (a heap beyond the window)
//   DefaultSimulatorImpl::ProcessOneEvent ─► RemoveNext: the earliest (time, uid) ─► the clock
//
// Why: ns-3's PriorityQueueScheduler (a binary heap) spent about 600 instructions per event
// inserting and removing it, and Simulator::Now() about 50 per call, several calls per hop; and
// with a clock of the models' own, ArrivalQueue runs the arrivals of many instants in one event
// (RunAhead) instead of one event per instant, about one per packet-hop in a big fabric.
//
// Contract:
//   - Events come out in (time, uid) order, as from every ns-3 scheduler: choosing it changes no
//     result. Remove takes out any event (Simulator::Remove); Cancel is ns-3's flag, as ever.
//   - BucketWidth (attribute, default 128 ns): the width of one of the ring's 1,024 buckets; at
//     about the gap between events the buckets stay short and the window (1,024 widths) covers
//     most of them. Events beyond it wait in a heap. A width changes speed, never order.
//   - SimNowSteps() is the models' clock: the time of the event this scheduler handed out last
//     (Simulator::Now()), while it is the running simulator's scheduler (from its first
//     RemoveNext until it is destroyed; ns-3's teardown drains it), else Simulator::Now() itself.
//     ArrivalQueue moves it ahead of Simulator::Now() while one of its events runs the arrivals
//     due before the next event of this scheduler (RunAhead): code that runs arrivals schedules
//     with SimDelayUntil(at), not a delay from Simulator::Now(), and reads SimNowSteps(). Not
//     thread-safe: one simulation.
//   - GetTypeId() registers the TypeId; call it before naming the scheduler to ns-3
//     (sim_scheduler.h's UseSimScheduler does). It is not registered during static
//     initialisation: its Time attribute, built then, crashed ns-3's attribute lookups.
#pragma once

#include <cstdint>
#include <limits>

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

  // Every kEventsPerStopCheck instants (events, and instants an arrival event runs ahead to)
  // the scheduler asks `stop_requested` (if set) and on true calls Simulator::Stop():
  // Simulator::Run returns after the current event, however long simulated time stands still (a
  // model that reschedules itself at one instant for ever) or one event runs ahead (Ctrl-C).
  static constexpr uint32_t kEventsPerStopCheck = 1 << 16;
  static inline bool (*stop_requested)() = nullptr;

  // The clock SimNowSteps() reads: the scheduler that handed out the running event, its time
  // (event_steps, ns-3's Simulator::Now()) and the models' time (now_steps: the same, or later
  // while ArrivalQueue runs ahead).
  struct Clock {
    static inline BucketScheduler* owner = nullptr;
    static inline int64_t event_steps = 0;
    static inline int64_t now_steps = 0;
    // The running event is the last before a stop request ends Simulator::Run: nothing runs
    // ahead of it, so that the clock is ns-3's when Run returns.
    static inline bool stopping = false;
  };
  // Moves the models' clock to `at` if the running simulation is on a BucketScheduler and no
  // event of it is due at or before `at` (it would have run first), and says whether it did.
  // Arrivals due then can run within the running event, in the order they would have had as
  // events of their own. Never moves it back.
  static bool RunAhead(int64_t at) {
    if (Clock::owner == nullptr || Clock::stopping || at < Clock::now_steps || at >= Clock::owner->NextEventSteps())
      return false;
    Clock::owner->CountInstant();
    if (Clock::stopping) return false;
    Clock::now_steps = at;
    return true;
  }

 private:
  struct Item {
    int64_t at;
    uint32_t uid;
    uint32_t context;
    ns3::EventImpl* impl;
  };
  static bool Before(const Item& a, const Item& b) { return a.at != b.at ? a.at < b.at : a.uid < b.uid; }
  static Event ToEvent(const Item& item);
  // Counts an instant towards the next stop check, and makes the check when it is due.
  void CountInstant();
  // The time of the earliest event held (a cancelled one too). With none, the smallest int64_t:
  // nothing runs ahead of the last event, so that a simulation ends at the time it always did.
  int64_t NextEventSteps() const {
    const Item* first = calendar_.Earliest();
    return first != nullptr ? first->at : std::numeric_limits<int64_t>::min();
  }
  void SetBucketWidth(ns3::Time width);
  ns3::Time GetBucketWidth() const;

  // mutable: PeekNext (const in ns-3's interface) sorts the bucket it looks at.
  mutable CalendarQueue<Item, &BucketScheduler::Before> calendar_;
  uint32_t events_to_stop_check_ = kEventsPerStopCheck;
  static inline int instances_ = 0;
};

// The models' clock in time steps: Simulator::Now().GetTimeStep(), without the call while a
// BucketScheduler runs the simulation, or later while ArrivalQueue runs ahead.
inline int64_t SimNowSteps() {
  return BucketScheduler::Clock::owner != nullptr ? BucketScheduler::Clock::now_steps
                                                  : ns3::Simulator::Now().GetTimeStep();
}

inline double SimNowSeconds() { return ns3::TimeStep(SimNowSteps()).GetSeconds(); }

// The delay to give Simulator::Schedule for an event at time step `at` (not before
// SimNowSteps()): ns-3 counts it from Simulator::Now(), which the models' clock may be ahead of.
inline ns3::Time SimDelayUntil(int64_t at) {
  const int64_t event_steps = BucketScheduler::Clock::owner != nullptr ? BucketScheduler::Clock::event_steps
                                                                       : ns3::Simulator::Now().GetTimeStep();
  return ns3::TimeStep(at - event_steps);
}

}  // namespace mrclab::emulator::sim
