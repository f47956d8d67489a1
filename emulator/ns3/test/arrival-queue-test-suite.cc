// ArrivalQueue on its own: against a reference order computed apart from it, arrivals run at
// their time, ties in push order, whichever bucket width, whether they fall inside the ring's
// window or beyond it (the far heap), and whether they are pushed between arrivals (ns-3 events
// of their own) or by an arrival as it runs.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

#include "emulator/ns3/model/arrival_queue.h"
#include "emulator/ns3/model/sim_port.h"
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
    std::vector<std::unique_ptr<SimPort>> ports;
    for (int p = 0; p < kPorts; ++p) {
      PortConfig c;
      c.rate_bps = kRateBps;
      c.delay = NanoSeconds(kDelaysNs[p]);
      c.buffer_bytes = 1ull << 40;
      c.arrivals = &queue;
      ports.push_back(std::make_unique<SimPort>(c, &sinks[p]));
    }
    std::mt19937 rng(seed);
    std::vector<Expected> expected;
    std::vector<int64_t> last_finish(kPorts, 0);
    std::vector<Seen> seen;
    uint32_t next_id = 0;
    uint64_t pushes = 0;
    auto send = [&](int p, uint32_t wire_bytes) {
      const int64_t now = Simulator::Now().GetTimeStep();
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
        seen.push_back({Simulator::Now().GetTimeStep(), p, packet.src_port});
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

class ArrivalQueueTestSuite : public ns3::TestSuite {
 public:
  ArrivalQueueTestSuite() : ns3::TestSuite("mrclab-arrival-queue", UNIT) { AddTestCase(new ReferenceOrderTestCase, QUICK); }
};

ArrivalQueueTestSuite g_arrival_queue_test_suite;

}  // namespace
}  // namespace mrclab::emulator::sim
