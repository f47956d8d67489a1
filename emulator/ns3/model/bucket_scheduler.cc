#include "emulator/ns3/model/bucket_scheduler.h"

#include "ns3/assert.h"
#include "ns3/fatal-error.h"

namespace mrclab::emulator::sim {

ns3::TypeId BucketScheduler::GetTypeId() {
  static ns3::TypeId tid =
      ns3::TypeId("mrclab::BucketScheduler")
          .SetParent<ns3::Scheduler>()
          .SetGroupName("Core")
          .AddConstructor<BucketScheduler>()
          .AddAttribute("BucketWidth", "The width of one of the calendar ring's 1,024 buckets (rounded down to a "
                        "power of two of time steps); set before the first event is scheduled",
                        ns3::TimeValue(ns3::NanoSeconds(128)),
                        ns3::MakeTimeAccessor(&BucketScheduler::SetBucketWidth, &BucketScheduler::GetBucketWidth),
                        ns3::MakeTimeChecker(ns3::TimeStep(1)));
  return tid;
}

BucketScheduler::~BucketScheduler() {
  --instances_;
  if (Clock::owner == this) Clock::owner = nullptr;
}

void BucketScheduler::SetBucketWidth(ns3::Time width) { calendar_.SetBucketWidth(width.GetTimeStep()); }

ns3::Time BucketScheduler::GetBucketWidth() const { return ns3::TimeStep(calendar_.BucketWidth()); }

ns3::Scheduler::Event BucketScheduler::ToEvent(const Item& item) {
  return Event{item.impl, EventKey{static_cast<uint64_t>(item.at), item.uid, item.context}};
}

void BucketScheduler::Insert(const Event& ev) {
  if (Clock::owner == this && static_cast<int64_t>(ev.key.m_ts) < Clock::now_steps)
    NS_FATAL_ERROR("an event scheduled before the models' clock: schedule with SimDelayUntil where arrivals run");
  calendar_.Push({static_cast<int64_t>(ev.key.m_ts), ev.key.m_uid, ev.key.m_context, ev.impl});
}

bool BucketScheduler::IsEmpty() const { return calendar_.Empty(); }

ns3::Scheduler::Event BucketScheduler::PeekNext() const {
  const Item* first = calendar_.Earliest();
  NS_ASSERT_MSG(first != nullptr, "PeekNext on an empty scheduler");
  return ToEvent(*first);
}

ns3::Scheduler::Event BucketScheduler::RemoveNext() {
  NS_ASSERT_MSG(!calendar_.Empty(), "RemoveNext on an empty scheduler");
  const Item first = calendar_.PopEarliest();
  calendar_.SetNow(first.at);
  Clock::owner = this;
  Clock::event_steps = first.at;
  Clock::now_steps = first.at;
  Clock::stopping = false;
  CountInstant();
  return ToEvent(first);
}

void BucketScheduler::CountInstant() {
  if (--events_to_stop_check_ != 0) return;
  events_to_stop_check_ = kEventsPerStopCheck;
  if (stop_requested != nullptr && stop_requested()) {
    Clock::stopping = true;
    ns3::Simulator::Stop();
  }
}

void BucketScheduler::Remove(const Event& ev) {
  const bool removed = calendar_.Remove(static_cast<int64_t>(ev.key.m_ts),
                                        [&](const Item& item) { return item.uid == ev.key.m_uid; });
  NS_ASSERT_MSG(removed, "Remove of an event this scheduler does not hold");
  (void)removed;
}

}  // namespace mrclab::emulator::sim
