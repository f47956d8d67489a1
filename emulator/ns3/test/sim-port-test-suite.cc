// SimPort on its own: serialisation and delay, exact long-run rate, rate changes, ECN marking,
// tail drop, down, blackhole, loss, the tx-space callback, ports sharing an ArrivalQueue, and
// their queued packets' nodes coming back to its pool once, whatever happened to them.
#include <algorithm>
#include <memory>
#include <tuple>
#include <vector>

#include "emulator/ns3/model/arrival_queue.h"
#include "emulator/ns3/model/bucket_scheduler.h"
#include "emulator/ns3/model/sim_port.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "sim-test-helpers.h"

namespace mrclab::emulator::sim {
namespace {

using ns3::MicroSeconds;
using ns3::NanoSeconds;
using ns3::Simulator;
using test::Arrival;
using test::CollectingSink;

// A packet with `wire_bytes` on the wire; its source port numbers it.
SimPacket Sized(uint32_t wire_bytes, uint16_t id = 0, bool ecn_capable = true) {
  SimPacket p;
  p.payload_bytes = wire_bytes - kFrameOverheadBytes;
  p.src_port = id;
  p.ecn_capable = ecn_capable;
  return p;
}

PortConfig Config(uint64_t rate_bps, ns3::Time delay, uint64_t buffer_bytes) {
  PortConfig c;
  c.rate_bps = rate_bps;
  c.delay = delay;
  c.buffer_bytes = buffer_bytes;
  return c;
}

class SerialisationTestCase : public ns3::TestCase {
 public:
  SerialisationTestCase()
      : ns3::TestCase("one packet at a time, taking WireBytes*8 bits at the rate, then the delay; "
                      "a rate change applies from the next packet") {}

 private:
  void DoRun() override {
    CollectingSink sink;
    SimPort port(Config(1'000'000'000, MicroSeconds(1), 1'000'000), &sink);
    // 1250 bytes at 1 Gbit/s: 10 us.
    port.Enqueue(Sized(1250, 0));
    port.Enqueue(Sized(1250, 1));
    NS_TEST_ASSERT_MSG_EQ(port.QueuedBytes(), 2500u, "both queued, the first one serialising");
    Simulator::Schedule(MicroSeconds(30), [&] {
      port.SetRate(100'000'000);
      port.Enqueue(Sized(1250, 2));
    });
    Simulator::Schedule(MicroSeconds(200), [&] {
      port.Enqueue(Sized(1250, 3));
      port.Enqueue(Sized(1250, 4));
    });
    // Mid-serialisation of packet 3: it finishes at the old rate, packet 4 uses the new one.
    Simulator::Schedule(MicroSeconds(250), [&] { port.SetRate(1'000'000'000); });
    Simulator::Run();
    const std::vector<ns3::Time> expected = {MicroSeconds(11), MicroSeconds(21),
                                             MicroSeconds(131), MicroSeconds(301),
                                             MicroSeconds(311)};
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals.size(), expected.size(), "all delivered");
    for (size_t i = 0; i < expected.size(); ++i) {
      NS_TEST_ASSERT_MSG_EQ(sink.arrivals[i].at, expected[i], "arrival " << i);
      NS_TEST_ASSERT_MSG_EQ(sink.arrivals[i].packet.src_port, i, "in order");
    }
    const PortCounters& c = port.Counters();
    NS_TEST_ASSERT_MSG_EQ(c.tx_packets, 5u, "tx packets");
    NS_TEST_ASSERT_MSG_EQ(c.tx_bytes, 5u * 1250, "tx bytes");
    NS_TEST_ASSERT_MSG_EQ(c.rx_packets, 5u, "rx packets");
    NS_TEST_ASSERT_MSG_EQ(c.rx_bytes, 5u * 1250, "rx bytes");
    NS_TEST_ASSERT_MSG_EQ(c.max_queue_bytes, 2500u, "max queue");
    NS_TEST_ASSERT_MSG_EQ(port.QueuedBytes(), 0u, "drained");
    Simulator::Destroy();
  }
};

class ExactRateTestCase : public ns3::TestCase {
 public:
  ExactRateTestCase()
      : ns3::TestCase("a saturated port sends at exactly its rate despite 1 ns resolution") {}

 private:
  void DoRun() override {
    CollectingSink sink;
    SimPort port(Config(3'000'000'000, ns3::Time(0), 10'000'000), &sink);
    for (int i = 0; i < 1000; ++i) port.Enqueue(Sized(1250));
    Simulator::Run();
    // 1000 * 10000 bits at 3 Gbit/s = 3333333.3 ns; rounding each packet down would give
    // 3333000 ns.
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals.size(), 1000u, "all delivered");
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals.back().at, NanoSeconds(3'333'333), "last arrival");
    Simulator::Destroy();
  }
};

class EcnTestCase : public ns3::TestCase {
 public:
  EcnTestCase()
      : ns3::TestCase("ECN-capable packets finding more than the threshold queued get CE") {}

 private:
  void DoRun() override {
    CollectingSink sink;
    PortConfig config = Config(1'000'000'000, MicroSeconds(1), 1'000'000);
    config.ecn_threshold_bytes = 2 * 1066;
    SimPort port(config, &sink);
    // Packet i finds i * 1066 bytes queued: 0..2 are at or under the threshold.
    for (uint16_t i = 0; i < 10; ++i) port.Enqueue(Sized(1066, i));
    port.Enqueue(Sized(1066, 10, /*ecn_capable=*/false));
    Simulator::Run();
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals.size(), 11u, "all delivered");
    for (const Arrival& a : sink.arrivals) {
      const bool expect_ce = a.packet.src_port >= 3 && a.packet.src_port < 10;
      NS_TEST_ASSERT_MSG_EQ(a.packet.ecn_ce, expect_ce, "CE of packet " << a.packet.src_port);
    }
    NS_TEST_ASSERT_MSG_EQ(port.Counters().ecn_marks, 7u, "marks counted");
    Simulator::Destroy();
  }
};

class TailDropTestCase : public ns3::TestCase {
 public:
  TailDropTestCase() : ns3::TestCase("a packet that does not fit the buffer is dropped") {}

 private:
  void DoRun() override {
    CollectingSink sink;
    SimPort port(Config(1'000'000'000, MicroSeconds(1), 4 * 1066), &sink);
    std::vector<EnqueueResult> results;
    for (int i = 0; i < 10; ++i) results.push_back(port.Enqueue(Sized(1066)));
    for (int i = 0; i < 10; ++i) {
      NS_TEST_ASSERT_MSG_EQ((results[i] == EnqueueResult::kQueued), (i < 4), "packet " << i);
    }
    NS_TEST_ASSERT_MSG_EQ(port.Counters().queue_drops, 6u, "tail drops");
    NS_TEST_ASSERT_MSG_EQ(port.Counters().max_queue_bytes, 4u * 1066, "buffer full, not over");
    // Once drained the port takes packets again.
    Simulator::Schedule(MicroSeconds(100), [&] {
      NS_TEST_EXPECT_MSG_EQ((port.Enqueue(Sized(1066)) == EnqueueResult::kQueued), true,
                            "accepted after draining");
    });
    Simulator::Run();
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals.size(), 5u, "delivered");
    NS_TEST_ASSERT_MSG_EQ(port.Counters().tx_packets, 5u, "transmitted");
    Simulator::Destroy();
  }
};

class DownTestCase : public ns3::TestCase {
 public:
  DownTestCase()
      : ns3::TestCase("going down drops the queue, the packet serialising and those on the "
                      "wire; a down port drops what it is offered") {}

 private:
  void DoRun() override {
    CollectingSink sink;
    // 1250 bytes: 10 us serialisation, 10 us on the wire.
    SimPort port(Config(1'000'000'000, MicroSeconds(10), 1'000'000), &sink);
    for (uint16_t i = 0; i < 5; ++i) port.Enqueue(Sized(1250, i));
    // At 25 us: packet 0 arrived (20 us), packet 1 is on the wire (until 30 us), packet 2 is
    // serialising, 3 and 4 wait.
    Simulator::Schedule(MicroSeconds(25), [&] {
      port.SetUp(false);
      NS_TEST_EXPECT_MSG_EQ(port.QueuedBytes(), 0u, "queue dropped");
      NS_TEST_EXPECT_MSG_EQ((port.Enqueue(Sized(1250, 9)) == EnqueueResult::kFaultDrop), true,
                            "offered while down");
    });
    Simulator::Schedule(MicroSeconds(40), [&] {
      port.SetUp(true);
      port.Enqueue(Sized(1250, 5));
    });
    Simulator::Run();
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals.size(), 2u, "packet 0 and the one after coming up");
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals[0].packet.src_port, 0u, "packet 0");
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals[1].packet.src_port, 5u, "packet 5");
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals[1].at, MicroSeconds(60), "from an idle port");
    const PortCounters& c = port.Counters();
    NS_TEST_ASSERT_MSG_EQ(c.fault_drops, 5u, "1 on the wire + 3 queued + 1 offered while down");
    NS_TEST_ASSERT_MSG_EQ(c.tx_packets, 3u, "packets 0, 1 and 5 were serialised");
    NS_TEST_ASSERT_MSG_EQ(c.rx_packets, 2u, "received");
    Simulator::Destroy();
  }
};

class DownUpQuicklyTestCase : public ns3::TestCase {
 public:
  DownUpQuicklyTestCase()
      : ns3::TestCase("a port that comes back up before its dropped packets would have arrived "
                      "delivers only what it took since, on time") {}

 private:
  void DoRun() override {
    CollectingSink sink;
    // 1250 bytes: 10 us serialisation, 100 us on the wire.
    SimPort port(Config(1'000'000'000, MicroSeconds(100), 1'000'000), &sink);
    for (uint16_t i = 0; i < 5; ++i) port.Enqueue(Sized(1250, i));  // would arrive at 110..150 us
    Simulator::Schedule(MicroSeconds(15), [&] { port.SetUp(false); });
    Simulator::Schedule(MicroSeconds(16), [&] {
      port.SetUp(true);
      port.Enqueue(Sized(1250, 7));  // 16 + 10 + 100 us
      port.Enqueue(Sized(1250, 8));  // 26 + 10 + 100 us
    });
    Simulator::Run();
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals.size(), 2u, "only the packets taken after coming up");
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals[0].packet.src_port, 7u, "packet 7");
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals[0].at, MicroSeconds(126), "packet 7 on time");
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals[1].packet.src_port, 8u, "packet 8");
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals[1].at, MicroSeconds(136), "packet 8 on time");
    const PortCounters& c = port.Counters();
    NS_TEST_ASSERT_MSG_EQ(c.fault_drops, 5u, "1 on the wire + 1 serialising + 3 queued");
    NS_TEST_ASSERT_MSG_EQ(c.tx_packets, 3u, "packets 0, 7 and 8 were serialised");
    Simulator::Destroy();
  }
};

// Delivered ids of 4000 packets through a port losing `rate` with RNG stream `stream`.
std::vector<uint16_t> LossyRun(int64_t stream, double rate, uint64_t* fault_drops) {
  CollectingSink sink;
  PortConfig config = Config(10'000'000'000, MicroSeconds(1), 10'000'000);
  config.loss_stream = stream;
  SimPort port(config, &sink);
  port.SetLossRate(rate);
  for (uint16_t i = 0; i < 4000; ++i) port.Enqueue(Sized(1066, i));
  Simulator::Run();
  Simulator::Destroy();
  *fault_drops = port.Counters().fault_drops;
  std::vector<uint16_t> ids;
  for (const Arrival& a : sink.arrivals) ids.push_back(a.packet.src_port);
  return ids;
}

class IngressFaultsTestCase : public ns3::TestCase {
 public:
  IngressFaultsTestCase()
      : ns3::TestCase("blackhole and loss drop at the far end after transmission; loss is "
                      "Bernoulli, reproducible per stream") {}

 private:
  void DoRun() override {
    {
      CollectingSink sink;
      SimPort port(Config(1'000'000'000, MicroSeconds(1), 1'000'000), &sink);
      port.SetBlackhole(true);
      for (int i = 0; i < 10; ++i) port.Enqueue(Sized(1066));
      Simulator::Schedule(MicroSeconds(200), [&] {
        port.SetBlackhole(false);
        port.Enqueue(Sized(1066));
      });
      Simulator::Run();
      Simulator::Destroy();
      NS_TEST_ASSERT_MSG_EQ(port.Counters().tx_packets, 11u, "all transmitted");
      NS_TEST_ASSERT_MSG_EQ(port.Counters().fault_drops, 10u, "blackholed at the far end");
      NS_TEST_ASSERT_MSG_EQ(sink.arrivals.size(), 1u, "received after clearing");
    }
    uint64_t drops = 0, drops_again = 0, drops_other = 0;
    const std::vector<uint16_t> run = LossyRun(7, 0.25, &drops);
    // Expected 3000 received, sigma 27.
    NS_TEST_ASSERT_MSG_EQ_TOL(static_cast<double>(run.size()), 3000.0, 150.0, "25% lost");
    NS_TEST_ASSERT_MSG_EQ(drops + run.size(), 4000u, "every loss counted");
    NS_TEST_ASSERT_MSG_EQ((LossyRun(7, 0.25, &drops_again) == run), true, "same stream, same run");
    NS_TEST_ASSERT_MSG_EQ((LossyRun(8, 0.25, &drops_other) != run), true, "other stream differs");
    NS_TEST_ASSERT_MSG_EQ(LossyRun(7, 1.0, &drops).size(), 0u, "rate 1 loses everything");
    NS_TEST_ASSERT_MSG_EQ(LossyRun(7, 0.0, &drops).size(), 4000u, "rate 0 loses nothing");
    bool threw = false;
    try {
      CollectingSink sink;
      SimPort(Config(1'000'000'000, MicroSeconds(1), 1'000'000), &sink).SetLossRate(1.5);
    } catch (const std::invalid_argument&) {
      threw = true;
    }
    NS_TEST_ASSERT_MSG_EQ(threw, true, "a rate above 1 is refused");
  }
};

class TxSpaceTestCase : public ns3::TestCase {
 public:
  TxSpaceTestCase()
      : ns3::TestCase("the tx-space callback runs once when the queue falls below half the buffer "
                      "and may refill the queue") {}

 private:
  void DoRun() override {
    {
      CollectingSink sink;
      SimPort port(Config(1'000'000'000, MicroSeconds(1), 10 * 1066), &sink);
      std::vector<ns3::Time> calls;
      port.SetOnTxSpace([&] { calls.push_back(Simulator::Now()); });
      for (int i = 0; i < 10; ++i) port.Enqueue(Sized(1066));
      Simulator::Run();
      Simulator::Destroy();
      // 1066 bytes take 8528 ns. After k departures 10 - k packets remain: below half from k = 6.
      NS_TEST_ASSERT_MSG_EQ(calls.size(), 1u, "called once, when it falls below half");
      NS_TEST_ASSERT_MSG_EQ(calls.at(0), NanoSeconds(6 * 8528), "at the end of the sixth departure");
    }
    CollectingSink sink;
    SimPort port(Config(1'000'000'000, MicroSeconds(1), 10 * 1066), &sink);
    int sent = 0;
    auto pump = [&] {
      while (sent < 100 && port.QueuedBytes() + 1066 <= port.BufferBytes()) {
        port.Enqueue(Sized(1066));
        ++sent;
      }
    };
    port.SetOnTxSpace(pump);
    pump();
    Simulator::Run();
    Simulator::Destroy();
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals.size(), 100u, "a pump driven by the callback sends all");
    NS_TEST_ASSERT_MSG_EQ(port.Counters().queue_drops, 0u, "without overflowing");
  }
};

class SharedArrivalsTestCase : public ns3::TestCase {
 public:
  SharedArrivalsTestCase()
      : ns3::TestCase("ports sharing an ArrivalQueue deliver in time order, ties in the order they were "
                      "queued, at the same instants as with queues of their own") {}

 private:
  // Three ports, two of them with the same timing: returns (sink, packet id, time) in delivery order.
  std::vector<std::tuple<int, uint16_t, int64_t>> Run(bool shared) {
    ArrivalQueue queue;
    std::vector<CollectingSink> sinks(3);
    std::vector<std::unique_ptr<SimPort>> ports;
    for (int i = 0; i < 3; ++i) {
      PortConfig c = Config(i == 2 ? 500'000'000 : 1'000'000'000, MicroSeconds(1), 1'000'000);
      if (shared) c.arrivals = &queue;
      ports.push_back(std::make_unique<SimPort>(c, &sinks[i]));
    }
    std::vector<std::tuple<int, uint16_t, int64_t>> order;
    for (int i = 0; i < 3; ++i) {
      sinks[i].on_receive = [&order, i](const SimPacket& p) {
        order.emplace_back(i, p.src_port, ns3::TimeStep(SimNowSteps()).GetNanoSeconds());
      };
    }
    // Ports 1 and 0 finish their packets at the same instants (1 then 0 queued first).
    for (uint16_t id = 0; id < 3; ++id) {
      ports[1]->Enqueue(Sized(1250, id));
      ports[0]->Enqueue(Sized(1250, id));
      ports[2]->Enqueue(Sized(1250, id));
    }
    Simulator::Schedule(MicroSeconds(5), [&] { ports[0]->Enqueue(Sized(1250, 9)); });
    Simulator::Run();
    Simulator::Destroy();
    NS_TEST_EXPECT_MSG_EQ(queue.Size(), 0u, "every arrival ran");
    return order;
  }

  void DoRun() override {
    const auto shared = Run(true);
    NS_TEST_ASSERT_MSG_EQ(shared.size(), 10u, "every packet delivered");
    for (size_t i = 1; i < shared.size(); ++i)
      NS_TEST_ASSERT_MSG_EQ((std::get<2>(shared[i - 1]) <= std::get<2>(shared[i])), true, "time order at " << i);
    // 1 Gbit/s, 1250 bytes: 10 us each, plus 1 us: ports 1 and 0 tie at 11 us; port 1 was first.
    NS_TEST_ASSERT_MSG_EQ(std::get<0>(shared[0]), 1, "the tie keeps queueing order");
    NS_TEST_ASSERT_MSG_EQ(std::get<0>(shared[1]), 0, "the tie keeps queueing order");
    NS_TEST_ASSERT_MSG_EQ(std::get<2>(shared[0]), 11000, "first arrival at 11 us");
    // The same instants as ports with queues of their own.
    auto own = Run(false);
    auto by_port = [](std::vector<std::tuple<int, uint16_t, int64_t>> v) {
      std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
      return v;
    };
    NS_TEST_ASSERT_MSG_EQ((by_port(shared) == by_port(own)), true, "same deliveries, same times");
  }
};

class NodesReturnTestCase : public ns3::TestCase {
 public:
  NodesReturnTestCase()
      : ns3::TestCase("after a rate change (stale arrivals), going down with packets queued and on the wire, and "
                      "coming back up, each queued packet's node is back in the pool once and only live packets "
                      "arrive") {}

 private:
  void DoRun() override {
    ArrivalQueue arrivals;
    CollectingSink sink;
    PortConfig config = Config(1'000'000'000, MicroSeconds(1), 1'000'000);
    config.arrivals = &arrivals;
    SimPort port(config, &sink);
    for (uint16_t id = 0; id < 4; ++id) port.Enqueue(Sized(1250, id));  // 10 us each at 1 Gbit/s
    // Packet 0 serialises until 10 us; 1-3 are re-timed at 100 Mbit/s (their first arrivals go stale).
    Simulator::Schedule(MicroSeconds(5), [&] { port.SetRate(100'000'000); });
    // Packet 0 arrived at 11 us; 1 is serialising, 2 and 3 wait: all three dropped.
    Simulator::Schedule(MicroSeconds(15), [&] { port.SetUp(false); });
    Simulator::Schedule(MicroSeconds(16), [&] {
      port.SetUp(true);
      port.Enqueue(Sized(1250, 9));  // 100 us at 100 Mbit/s, then 1 us
    });
    Simulator::Run();
    NS_TEST_ASSERT_MSG_EQ(sink.arrivals.size(), 2u, "packet 0 and the one sent after coming up");
    if (sink.arrivals.size() == 2) {
      NS_TEST_ASSERT_MSG_EQ(sink.arrivals[0].packet.src_port, 0u, "packet 0 first");
      NS_TEST_ASSERT_MSG_EQ(sink.arrivals[0].at, MicroSeconds(11), "at its time");
      NS_TEST_ASSERT_MSG_EQ(sink.arrivals[1].packet.src_port, 9u, "then the new one");
      NS_TEST_ASSERT_MSG_EQ(sink.arrivals[1].at, MicroSeconds(117), "at the new rate");
    }
    NS_TEST_ASSERT_MSG_EQ(port.Counters().fault_drops, 3u, "three dropped going down");
    NS_TEST_ASSERT_MSG_EQ(arrivals.Size(), 0u, "no arrival left");
    NS_TEST_ASSERT_MSG_EQ(arrivals.Packets().Free(), arrivals.Packets().Allocated(), "every node back, once");
    Simulator::Destroy();
  }
};

class SimPortTestSuite : public ns3::TestSuite {
 public:
  SimPortTestSuite() : ns3::TestSuite("mrclab-sim-port", UNIT) {
    AddTestCase(new SerialisationTestCase, QUICK);
    AddTestCase(new ExactRateTestCase, QUICK);
    AddTestCase(new EcnTestCase, QUICK);
    AddTestCase(new TailDropTestCase, QUICK);
    AddTestCase(new DownTestCase, QUICK);
    AddTestCase(new DownUpQuicklyTestCase, QUICK);
    AddTestCase(new IngressFaultsTestCase, QUICK);
    AddTestCase(new TxSpaceTestCase, QUICK);
    AddTestCase(new SharedArrivalsTestCase, QUICK);
    AddTestCase(new NodesReturnTestCase, QUICK);
  }
};

SimPortTestSuite g_sim_port_test_suite;

}  // namespace
}  // namespace mrclab::emulator::sim
