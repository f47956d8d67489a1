// BucketScheduler against ns-3's MapScheduler: the same random program of events (ties at one
// instant, events far beyond the ring's window, events scheduled by events as they run, cancelled
// and removed events) runs in the same order on both, for every bucket width; inside every event
// SimNowSteps() is Simulator::Now(); and once the simulator is gone the clock is ns-3's again.
// A stop request ends a run that stands still at one instant for ever. The calendar queue under
// it takes items out in (time, Before) order, and its emptied buckets hand their arrays on.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "emulator/ns3/model/bucket_scheduler.h"
#include "emulator/ns3/model/calendar_queue.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"
#include "ns3/test.h"

namespace mrclab::emulator::sim {
namespace {

using ns3::Simulator;

struct Seen {
  int64_t at;
  int id;
  int64_t clock;  // SimNowSteps() inside the event
  bool operator==(const Seen&) const = default;
};

// Runs the program of `seed` on `scheduler` (a TypeId name; `width` ns for BucketScheduler).
std::vector<Seen> RunProgram(const std::string& scheduler, int64_t width_ns, uint32_t seed) {
  BucketScheduler::GetTypeId();  // registers it
  ns3::ObjectFactory factory(scheduler);
  if (width_ns > 0) factory.Set("BucketWidth", ns3::TimeValue(ns3::NanoSeconds(width_ns)));
  Simulator::SetScheduler(factory);
  std::mt19937 rng(seed);
  std::vector<Seen> seen;
  std::vector<ns3::EventId> pending;
  int next_id = 0;
  std::function<void(int)> run = [&](int id) {
    seen.push_back({Simulator::Now().GetTimeStep(), id, SimNowSteps()});
    if (next_id >= 4000) return;
    // Some events schedule others: now, soon, later in the window, far beyond it.
    for (int k = static_cast<int>(rng() % 4); k > 0; --k) {
      static constexpr int64_t kDelaysNs[] = {0, 0, 3, 90, 700, 60'000, 2'000'000, 3'000'000'000};
      const int64_t delay = kDelaysNs[rng() % 8] + static_cast<int64_t>(rng() % 50);
      const int id = next_id++;
      pending.push_back(Simulator::Schedule(ns3::NanoSeconds(delay), [&run, id] { run(id); }));
    }
    // Now and then one pending event is cancelled, and another removed outright.
    if (!pending.empty() && rng() % 5 == 0) Simulator::Cancel(pending[rng() % pending.size()]);
    if (!pending.empty() && rng() % 7 == 0) {
      const ns3::EventId victim = pending[rng() % pending.size()];
      if (!Simulator::IsExpired(victim)) Simulator::Remove(victim);
    }
  };
  for (int k = 0; k < 50; ++k) {
    const int id = next_id++;
    pending.push_back(Simulator::Schedule(ns3::NanoSeconds(rng() % 1000), [&run, id] { run(id); }));
  }
  Simulator::Run();
  Simulator::Destroy();
  return seen;
}

class SameOrderTestCase : public ns3::TestCase {
 public:
  SameOrderTestCase()
      : ns3::TestCase("events run in MapScheduler's order for every bucket width, with cancels, removes and "
                      "far events; SimNowSteps() is Simulator::Now() in each") {}

 private:
  void DoRun() override {
    for (uint32_t seed : {1u, 2u}) {
      const std::vector<Seen> want = RunProgram("ns3::MapScheduler", 0, seed);
      NS_TEST_ASSERT_MSG_GT(want.size(), 1000u, "the program runs");
      for (const Seen& s : want)
        NS_TEST_ASSERT_MSG_EQ(s.clock, s.at, "without BucketScheduler the clock is ns-3's");
      for (int64_t width : {int64_t{1}, int64_t{128}, int64_t{100'000}}) {
        const std::vector<Seen> got = RunProgram("mrclab::BucketScheduler", width, seed);
        NS_TEST_ASSERT_MSG_EQ(got.size(), want.size(), "as many events ran (width " << width << " ns)");
        for (size_t i = 0; i < want.size(); ++i)
          NS_TEST_ASSERT_MSG_EQ((got[i] == want[i]), true,
                                "event " << i << " (width " << width << " ns, seed " << seed << "): id " << got[i].id
                                         << " at " << got[i].at << " clock " << got[i].clock << ", expected id "
                                         << want[i].id << " at " << want[i].at);
      }
    }
    NS_TEST_ASSERT_MSG_EQ((BucketScheduler::Clock::owner == nullptr), true, "a destroyed simulator leaves the clock");
    NS_TEST_ASSERT_MSG_EQ(SimNowSteps(), Simulator::Now().GetTimeStep(), "and SimNowSteps() asks ns-3");
  }
};

// An event that reschedules itself at the same instant: simulated time never passes, so a
// Simulator::Stop(delay) never comes. BucketScheduler asks stop_requested every
// kEventsPerStopCheck events, and Run returns soon after it says yes.
int g_stop_checks = 0;
bool StopOnThirdCheck() { return ++g_stop_checks == 3; }

class StopRequestTestCase : public ns3::TestCase {
 public:
  StopRequestTestCase() : ns3::TestCase("a stop request ends a run that stands still at one instant") {}

 private:
  void DoRun() override {
    BucketScheduler::GetTypeId();
    Simulator::SetScheduler(ns3::ObjectFactory("mrclab::BucketScheduler"));
    BucketScheduler::stop_requested = &StopOnThirdCheck;
    g_stop_checks = 0;
    uint64_t ran = 0;
    std::function<void()> spin = [&] {
      ++ran;
      Simulator::ScheduleNow(spin);
    };
    Simulator::Schedule(ns3::MicroSeconds(5), spin);
    Simulator::Stop(ns3::Seconds(1));  // never reached: time stands still at 5 µs
    Simulator::Run();
    BucketScheduler::stop_requested = nullptr;
    NS_TEST_ASSERT_MSG_EQ(g_stop_checks, 3, "asked until it said yes, then the run ended");
    NS_TEST_ASSERT_MSG_EQ(ran, 3ull * BucketScheduler::kEventsPerStopCheck, "the run ended with the event it was asked at");
    NS_TEST_ASSERT_MSG_EQ(Simulator::Now().GetMicroSeconds(), 5, "at the instant it stood still at");
    Simulator::Destroy();
  }
};

struct Timed {
  int64_t at;
  int id;
};
bool TimedBefore(const Timed& a, const Timed& b) { return a.at != b.at ? a.at < b.at : a.id < b.id; }

class CalendarQueueTestCase : public ns3::TestCase {
 public:
  CalendarQueueTestCase() : ns3::TestCase("a calendar queue takes items in order and reuses emptied buckets' arrays") {}

 private:
  void DoRun() override {
    using Calendar = CalendarQueue<Timed, &TimedBefore>;
    constexpr int64_t kRing = Calendar::kRingBuckets;
    Calendar calendar;
    calendar.SetBucketWidth(4);
    std::mt19937 rng(7);
    std::vector<Timed> taken, pushed;
    int64_t now = 0;
    int next_id = 0;
    // Bursts of a few hundred items into one bucket each, ahead of a clock that follows them,
    // with stragglers into the window and far beyond it; taken out as the clock gets there.
    for (int round = 0; round < 3000; ++round) {
      const int64_t burst_at = now + 40 + static_cast<int64_t>(rng() % 8);
      for (int k = static_cast<int>(rng() % 300); k > 0; --k) pushed.push_back({burst_at, next_id++});
      if (rng() % 3 == 0) pushed.push_back({now + static_cast<int64_t>(rng() % 3000), next_id++});
      if (rng() % 50 == 0) pushed.push_back({now + 1'000'000 + static_cast<int64_t>(rng() % 1000), next_id++});
      for (const Timed& t : pushed) calendar.Push(t);
      pushed.clear();
      now += 4;
      calendar.SetNow(now);
      while (const Timed* first = calendar.Earliest()) {
        if (first->at > now) break;
        taken.push_back(calendar.PopEarliest());
      }
    }
    while (!calendar.Empty()) taken.push_back(calendar.PopEarliest());
    NS_TEST_ASSERT_MSG_EQ(taken.size(), static_cast<size_t>(next_id), "every item comes out once");
    NS_TEST_ASSERT_MSG_EQ(std::is_sorted(taken.begin(), taken.end(), TimedBefore), true, "in (time, Before) order");
    // The clock went through 3,000 buckets, three times round the ring, and every bucket held
    // items at some time; arrays are held only by the buckets that held items at once (a few
    // hundred stragglers at most), not one by every bucket.
    NS_TEST_ASSERT_MSG_LT(calendar.ArraysHeld(), size_t{kRing / 2}, "emptied buckets hand their arrays on");
  }
};

class BucketSchedulerTestSuite : public ns3::TestSuite {
 public:
  BucketSchedulerTestSuite() : ns3::TestSuite("mrclab-bucket-scheduler", UNIT) {
    AddTestCase(new SameOrderTestCase, QUICK);
    AddTestCase(new StopRequestTestCase, QUICK);
    AddTestCase(new CalendarQueueTestCase, QUICK);
  }
};

BucketSchedulerTestSuite g_bucket_scheduler_test_suite;

}  // namespace
}  // namespace mrclab::emulator::sim
