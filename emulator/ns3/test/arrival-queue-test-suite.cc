// ArrivalQueue on its own: against a reference order computed apart from it, arrivals run at
// their time, ties in push order, whichever bucket width, whether they fall inside the ring's
// window or beyond it (the far heap), and whether they are pushed between arrivals (ns-3 events
// of their own) or by an arrival as it runs. On BucketScheduler, where one ns-3 event runs the
// arrivals of many instants (RunAhead), arrivals and the ns-3 events they schedule, cancel and
// run between run in the same order and at the same times as on MapScheduler, in fewer events.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <tuple>
#include <vector>

#include "emulator/ns3/model/arrival_queue.h"
#include "emulator/ns3/model/bucket_scheduler.h"
#include "emulator/ns3/model/sim_port.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "sim-test-helpers.h"

namespace mrclab::emulator::sim {
namespace {

using ns3::NanoSeconds;
using ns3::Simulator;
using test::CollectingSink;

// At 1 Gbit/s a byte takes exactly 8 ns, so a packet's arrival is known without the port:
// max(now, the port's last finish) + 8 x wire bytes + the port's delay.
constexpr uint64_t kRateBps = 1'000'000'000;

// A port per delay (ns) at kRateBps, with a buffer nothing fills, that delivers to sinks[i]
// through `queue`.
std::vector<std::unique_ptr<SimPort>> MakePorts(ArrivalQueue& queue, std::span<const int64_t> delays_ns,
                                                std::vector<CollectingSink>& sinks) {
  std::vector<std::unique_ptr<SimPort>> ports;
  for (size_t p = 0; p < delays_ns.size(); ++p) {
    PortConfig c;
    c.rate_bps = kRateBps;
    c.delay = NanoSeconds(delays_ns[p]);
    c.buffer_bytes = 1ull << 40;
    c.arrivals = &queue;
    ports.push_back(std::make_unique<SimPort>(c, &sinks[p]));
  }
  return ports;
}

class ReferenceOrderTestCase : public ns3::TestCase {
 public:
  ReferenceOrderTestCase()
      : ns3::TestCase("arrivals run in (time, push) order at their time, for every bucket width, inside and "
                      "beyond the ring's window, pushed between arrivals or while they run") {}

 private:
  struct Expected {
    int64_t at;
    uint64_t pushed;  // global push order
    int port;
    uint32_t id;
  };
  struct Seen {
    int64_t at;
    int port;
    uint32_t id;
    bool operator==(const Seen&) const = default;
  };

  // Ports whose delays put arrivals in the same bucket, in later ones and far beyond the window.
  static constexpr int64_t kDelaysNs[] = {0, 7, 64, 1'000, 40'000, 300'000, 5'000'000};
  static constexpr int kPorts = sizeof(kDelaysNs) / sizeof(kDelaysNs[0]);

  void RunWithWidth(int64_t bucket_steps, uint32_t seed) {
    ArrivalQueue queue;
    queue.SetBucketWidth(bucket_steps);
    std::vector<CollectingSink> sinks(kPorts);
    const std::vector<std::unique_ptr<SimPort>> ports = MakePorts(queue, kDelaysNs, sinks);
    std::mt19937 rng(seed);
    std::vector<Expected> expected;
    std::vector<int64_t> last_finish(kPorts, 0);
    std::vector<Seen> seen;
    uint32_t next_id = 0;
    uint64_t pushes = 0;
    auto send = [&](int p, uint32_t wire_bytes) {
      const int64_t now = SimNowSteps();
      const int64_t finish = std::max(now, last_finish[p]) + 8 * int64_t{wire_bytes};
      last_finish[p] = finish;
      const uint32_t id = next_id++;
      expected.push_back({finish + kDelaysNs[p], pushes++, p, id});
      SimPacket packet;
      packet.payload_bytes = wire_bytes - kFrameOverheadBytes;
      packet.src_port = static_cast<uint16_t>(id);
      ports[p]->Enqueue(std::move(packet));
    };
    // Some arrivals send another packet as they run (a switch forwarding), some not.
    for (int p = 0; p < kPorts; ++p) {
      sinks[p].on_receive = [&, p](const SimPacket& packet) {
        seen.push_back({SimNowSteps(), p, packet.src_port});
        if (next_id < 3000 && rng() % 3 == 0) send(static_cast<int>(rng() % kPorts), 66 + rng() % 64);
      };
    }
    // Bursts from ns-3 events of their own, at times that fall between and onto arrivals.
    for (int burst = 0; burst < 200; ++burst) {
      const int64_t at = static_cast<int64_t>(rng() % 2'000'000);
      const int count = 1 + static_cast<int>(rng() % 4);
      Simulator::Schedule(NanoSeconds(at), [&, count] {
        for (int k = 0; k < count; ++k) send(static_cast<int>(rng() % kPorts), 66 + rng() % 64);
      });
    }
    Simulator::Run();
    Simulator::Destroy();
    NS_TEST_ASSERT_MSG_EQ(queue.Size(), 0u, "every arrival ran");
    std::sort(expected.begin(), expected.end(), [](const Expected& a, const Expected& b) {
      return std::tie(a.at, a.pushed) < std::tie(b.at, b.pushed);
    });
    std::vector<Seen> want;
    for (const Expected& e : expected) want.push_back({e.at, e.port, static_cast<uint16_t>(e.id)});
    NS_TEST_ASSERT_MSG_EQ(seen.size(), want.size(), "every packet arrived (width " << bucket_steps << ")");
    for (size_t i = 0; i < want.size(); ++i) {
      NS_TEST_ASSERT_MSG_EQ((seen[i] == want[i]), true,
                            "arrival " << i << " (width " << bucket_steps << "): port " << seen[i].port << " id "
                                       << seen[i].id << " at " << seen[i].at << ", expected port " << want[i].port
                                       << " id " << want[i].id << " at " << want[i].at);
    }
  }

  void DoRun() override {
    for (int64_t width : {int64_t{1}, int64_t{64}, int64_t{1000}, int64_t{1} << 20}) RunWithWidth(width, 7);
    RunWithWidth(64, 11);
    ArrivalQueue queue;
    queue.SetBucketWidth(100);
    NS_TEST_ASSERT_MSG_EQ(queue.BucketWidth(), 64, "a width is the power of two at or below it");
    queue.SetBucketWidth(0);
    NS_TEST_ASSERT_MSG_EQ(queue.BucketWidth(), 1, "at least one time step");
  }
};

class RunAheadTestCase : public ns3::TestCase {
 public:
  RunAheadTestCase()
      : ns3::TestCase("on BucketScheduler arrivals run ahead in fewer ns-3 events, in MapScheduler's order with the "
                      "events they schedule, cancel and run between") {}

 private:
  // What ran, in order: an arrival (port, packet id) or an ns-3 event (-1, event id), the models'
  // clock then and, inside an ns-3 event, ns-3's.
  struct Ran {
    int64_t at;
    int port;
    uint32_t id;
    int64_t ns3_at;  // -1 for an arrival
    bool operator==(const Ran&) const = default;
  };
  struct Outcome {
    std::vector<Ran> ran;
    uint64_t ns3_events = 0;
  };

  static constexpr int64_t kDelaysNs[] = {0, 7, 64, 1'000, 40'000};
  static constexpr int kPorts = sizeof(kDelaysNs) / sizeof(kDelaysNs[0]);

  static Outcome Run(const std::string& scheduler, uint32_t seed) {
    BucketScheduler::GetTypeId();  // registers it
    Simulator::SetScheduler(ns3::ObjectFactory(scheduler));
    Outcome out;
    {
      ArrivalQueue queue;
      queue.SetBucketWidth(16);
      std::vector<CollectingSink> sinks(kPorts);
      const std::vector<std::unique_ptr<SimPort>> ports = MakePorts(queue, kDelaysNs, sinks);
      std::mt19937 rng(seed);
      uint32_t next_id = 0;
      std::vector<ns3::EventId> timers;
      auto send = [&] {
        SimPacket packet;
        packet.payload_bytes = 66 + rng() % 64;
        packet.src_port = static_cast<uint16_t>(next_id++);
        ports[rng() % kPorts]->Enqueue(std::move(packet));
      };
      // An ns-3 event, as an endpoint's timer or a job's compute deadline: scheduled by an
      // arrival (now, soon or later, never before the models' clock), it sends, and now and
      // then cancels one scheduled before it.
      std::function<void(uint32_t)> timer = [&](uint32_t id) {
        out.ran.push_back({SimNowSteps(), -1, id, Simulator::Now().GetTimeStep()});
        for (int k = static_cast<int>(rng() % 3); k > 0 && next_id < 4000; --k) send();
        if (!timers.empty() && rng() % 4 == 0) Simulator::Cancel(timers[rng() % timers.size()]);
      };
      for (int p = 0; p < kPorts; ++p) {
        sinks[p].on_receive = [&, p](const SimPacket& packet) {
          out.ran.push_back({SimNowSteps(), p, packet.src_port, -1});
          if (next_id >= 4000) return;
          if (rng() % 4 != 0) send();
          if (rng() % 4 == 0) send();
          if (rng() % 8 == 0) {
            static constexpr int64_t kTimerNs[] = {0, 1, 5, 300, 9'000};
            const uint32_t id = next_id++;
            timers.push_back(Simulator::Schedule(SimDelayUntil(SimNowSteps() + kTimerNs[rng() % 5]),
                                                 [&timer, id] { timer(id); }));
          }
        };
      }
      for (int burst = 0; burst < 100; ++burst)
        Simulator::Schedule(NanoSeconds(rng() % 500'000), [&] {
          for (int k = 1 + static_cast<int>(rng() % 4); k > 0; --k) send();
        });
      Simulator::Run();
      out.ns3_events = Simulator::GetEventCount();
      Simulator::Destroy();
    }
    return out;
  }

  void DoRun() override {
    for (uint32_t seed : {3u, 4u}) {
      const Outcome want = Run("ns3::MapScheduler", seed);
      const Outcome got = Run("mrclab::BucketScheduler", seed);
      NS_TEST_ASSERT_MSG_GT(want.ran.size(), 3000u, "the program runs");
      NS_TEST_ASSERT_MSG_EQ(got.ran.size(), want.ran.size(), "as much ran (seed " << seed << ")");
      for (size_t i = 0; i < want.ran.size(); ++i) {
        NS_TEST_ASSERT_MSG_EQ((got.ran[i] == want.ran[i]), true,
                              "step " << i << " (seed " << seed << "): port " << got.ran[i].port << " id "
                                      << got.ran[i].id << " at " << got.ran[i].at << " (ns-3 " << got.ran[i].ns3_at
                                      << "), expected port " << want.ran[i].port << " id " << want.ran[i].id << " at "
                                      << want.ran[i].at << " (ns-3 " << want.ran[i].ns3_at << ")");
      }
      NS_TEST_ASSERT_MSG_LT(2 * got.ns3_events, want.ns3_events, "running ahead took fewer ns-3 events");
    }
  }
};

// A port whose far end sends every packet back into it keeps arrivals coming for ever, each
// event running ahead through thousands of them: a stop request (Ctrl-C) still ends the run
// within a stop check's count of instants, as it does where every instant is an event.
int g_stop_checks = 0;
bool StopOnSecondCheck() { return ++g_stop_checks == 2; }

class StopWhileRunningAheadTestCase : public ns3::TestCase {
 public:
  StopWhileRunningAheadTestCase()
      : ns3::TestCase("a stop request ends a run whose arrival events run ahead, within a stop check's instants") {}

 private:
  void DoRun() override {
    BucketScheduler::GetTypeId();
    Simulator::SetScheduler(ns3::ObjectFactory("mrclab::BucketScheduler"));
    uint64_t arrivals = 0;
    {
      ArrivalQueue queue;
      std::vector<CollectingSink> sinks(1);
      const int64_t delays_ns[] = {7};
      const std::vector<std::unique_ptr<SimPort>> ports = MakePorts(queue, delays_ns, sinks);
      auto send = [&] {
        SimPacket packet;
        packet.payload_bytes = 100;
        ports[0]->Enqueue(std::move(packet));
      };
      sinks[0].on_receive = [&](const SimPacket&) {
        ++arrivals;
        send();
      };
      Simulator::Schedule(NanoSeconds(1), send);
      Simulator::Stop(ns3::Seconds(10));  // about 7 million arrivals away
      BucketScheduler::stop_requested = &StopOnSecondCheck;
      g_stop_checks = 0;
      Simulator::Run();
      BucketScheduler::stop_requested = nullptr;
      NS_TEST_ASSERT_MSG_EQ(g_stop_checks, 2, "asked until it said yes");
      NS_TEST_ASSERT_MSG_LT(arrivals, 2ull * BucketScheduler::kEventsPerStopCheck + 1,
                            "the run ended within two stop checks' instants");
      NS_TEST_ASSERT_MSG_LT(Simulator::Now().GetSeconds(), 1.0, "long before the Stop it was given");
      Simulator::Destroy();
    }
  }
};

class ArrivalQueueTestSuite : public ns3::TestSuite {
 public:
  ArrivalQueueTestSuite() : ns3::TestSuite("mrclab-arrival-queue", UNIT) {
    AddTestCase(new ReferenceOrderTestCase, QUICK);
    AddTestCase(new RunAheadTestCase, QUICK);
    AddTestCase(new StopWhileRunningAheadTestCase, QUICK);
  }
};

ArrivalQueueTestSuite g_arrival_queue_test_suite;

}  // namespace
}  // namespace mrclab::emulator::sim
