// SimFabric faults on clos2: link down with and without routing reaction, nesting of down
// faults, blackholes, loss, rate changes, switch down and plane down, and their reverts.
#include <set>
#include <string>
#include <vector>

#include "emulator/ns3/model/sim_fabric.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "sim-test-helpers.h"

namespace mrclab::emulator::sim {
namespace {

using emulator::Routing;
using ns3::MicroSeconds;
using ns3::MilliSeconds;
using ns3::NanoSeconds;
using ns3::Simulator;
using test::Clos2;
using test::Clos2FabricLink;
using test::Clos2HostLink;
using test::NumberedPacket;
using test::Recorder;

// Schedules `count` packets from `host`'s port in `plane` to `dst`, packet i at
// start + i * interval with sequence number i, round-robin over `flows` source ports.
void ScheduleStream(SimFabric& fabric, const emulator::ResolvedLab& lab, const std::string& host,
                    int plane, const std::string& dst, uint32_t count, ns3::Time interval,
                    uint16_t flows, ns3::Time start = ns3::Time(0)) {
  const std::string src = test::HostAddress(lab, host, plane);
  for (uint32_t i = 0; i < count; ++i) {
    Simulator::Schedule(start + interval * i, [&fabric, host, plane, src, dst, flows, i] {
      fabric.Send(host, plane, NumberedPacket(src, dst, static_cast<uint16_t>(1000 + i % flows), i));
    });
  }
}

// Fraction of the sequence numbers in [first, end) that arrived.
double DeliveredFraction(const Recorder& r, uint32_t first, uint32_t end) {
  size_t n = 0;
  for (uint32_t seq : r.Sequences()) n += seq >= first && seq < end ? 1 : 0;
  return static_cast<double>(n) / (end - first);
}

// host0 -> host2 (plane 0, their link addresses), 64 flows, one packet per 10 us (the NIC
// needs 8.5 us per packet) for 12 ms; the
// link p0-leaf1 - p0-spine0 goes down at 2 ms and (if revert_at) up again. Routing reacts at
// 2 + 5 ms in bgp labs.
struct LinkDownRun {
  explicit LinkDownRun(Routing routing, ns3::Time revert_at = ns3::Time(0))
      : lab(Clos2(routing)), fabric(test::BuildFabric(lab)) {
    host2.Attach(*fabric, "host2", 0);
    ScheduleStream(*fabric, lab, "host0", 0, test::HostAddress(lab, "host2", 0), 1200,
                   MicroSeconds(10), 64);
    const int link = Clos2FabricLink(0, 1, 0);
    Simulator::Schedule(MilliSeconds(2), [this, link] { fabric->SetLinkUp(link, false); });
    if (!revert_at.IsZero()) {
      Simulator::Schedule(revert_at, [this, link] { fabric->SetLinkUp(link, true); });
    }
    Simulator::Schedule(MicroSeconds(7100), [this] {
      spine0_drops_after_reaction = fabric->CountersOfSwitch("p0-spine0").no_route_drops;
    });
    Simulator::Run();
  }
  ~LinkDownRun() { Simulator::Destroy(); }

  emulator::ResolvedLab lab;
  ns3::Ptr<SimFabric> fabric;
  Recorder host2;
  uint64_t spine0_drops_after_reaction = 0;
};

class LinkDownBgpTestCase : public ns3::TestCase {
 public:
  LinkDownBgpTestCase()
      : ns3::TestCase("bgp: remote switches use a dead path until RoutingReactionTime, then "
                      "reroute") {}

 private:
  void DoRun() override {
    LinkDownRun run(Routing::kBgp, MilliSeconds(9));
    // Sequence i was sent at 10 i us.
    NS_TEST_ASSERT_MSG_EQ(DeliveredFraction(run.host2, 0, 190), 1.0, "before the fault");
    const double during = DeliveredFraction(run.host2, 200, 690);
    NS_TEST_ASSERT_MSG_GT(during, 0.3, "the flows hashed to spine0 are lost until 7 ms...");
    NS_TEST_ASSERT_MSG_LT(during, 0.7, "...the others are not");
    NS_TEST_ASSERT_MSG_EQ(DeliveredFraction(run.host2, 700, 1200), 1.0,
                          "after the reaction, and after the revert");
    const uint64_t spine0_drops = run.fabric->CountersOfSwitch("p0-spine0").no_route_drops;
    NS_TEST_ASSERT_MSG_GT(spine0_drops, 0u, "spine0 had no live port to leaf1");
    NS_TEST_ASSERT_MSG_EQ(spine0_drops, run.spine0_drops_after_reaction,
                          "and no traffic after the reaction");
    NS_TEST_ASSERT_MSG_EQ(run.fabric->RouteRecomputations(), 2u, "down and up, one each");
  }
};

class LinkDownStaticTestCase : public ns3::TestCase {
 public:
  LinkDownStaticTestCase()
      : ns3::TestCase("static: remote switches never reroute; the revert heals") {}

 private:
  void DoRun() override {
    LinkDownRun run(Routing::kStatic, MilliSeconds(9));
    NS_TEST_ASSERT_MSG_EQ(DeliveredFraction(run.host2, 0, 190), 1.0, "before the fault");
    const double after = DeliveredFraction(run.host2, 700, 890);
    NS_TEST_ASSERT_MSG_GT(after, 0.3, "still losing the flows hashed to spine0 at 7-8.9 ms");
    NS_TEST_ASSERT_MSG_LT(after, 0.7, "but only those");
    NS_TEST_ASSERT_MSG_EQ(DeliveredFraction(run.host2, 905, 1200), 1.0, "after the revert");
    NS_TEST_ASSERT_MSG_EQ(run.fabric->RouteRecomputations(), 0u, "no protocol");
  }
};

class AdjacentSwitchTestCase : public ns3::TestCase {
 public:
  AdjacentSwitchTestCase()
      : ns3::TestCase("the switch next to a dead link stops using it at once") {}

 private:
  void DoRun() override {
    const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
    ns3::Ptr<SimFabric> fabric = test::BuildFabric(lab);
    Recorder host0;
    host0.Attach(*fabric, "host0", 0);
    // From host2 (behind p0-leaf1) one packet per 20 us; the link is idle at 2.005 ms.
    ScheduleStream(*fabric, lab, "host2", 0, test::HostAddress(lab, "host0", 0), 600,
                   MicroSeconds(20), 64);
    const int link = Clos2FabricLink(0, 1, 0);
    Simulator::Schedule(MicroSeconds(2005), [&] { fabric->SetLinkUp(link, false); });
    Simulator::Run();
    NS_TEST_ASSERT_MSG_EQ(host0.Arrivals().size(), 600u, "nothing lost");
    NS_TEST_ASSERT_MSG_EQ(fabric->CountersOfSwitch("p0-leaf1").no_route_drops, 0u, "leaf1");
    NS_TEST_ASSERT_MSG_GT(fabric->Counters(Clos2FabricLink(0, 1, 1), true).tx_packets, 300u,
                          "leaf1's other uplink took over");
    Simulator::Destroy();
  }
};

class DownFaultsNestTestCase : public ns3::TestCase {
 public:
  DownFaultsNestTestCase()
      : ns3::TestCase("a link stays down until every down fault on it is reverted") {}

 private:
  void DoRun() override {
    const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
    ns3::Ptr<SimFabric> fabric = test::BuildFabric(lab);
    const int link = Clos2FabricLink(0, 0, 0);  // p0-leaf0 - p0-spine0
    fabric->SetLinkUp(link, false);
    fabric->SetSwitchUp("p0-spine0", false);
    fabric->SetLinkUp(link, true);
    NS_TEST_ASSERT_MSG_EQ(fabric->LinkUp(link), false, "spine0 still down");
    NS_TEST_ASSERT_MSG_EQ(fabric->LinkUp(Clos2FabricLink(0, 3, 0)), false, "all its links");
    fabric->SetSwitchUp("p0-spine0", true);
    NS_TEST_ASSERT_MSG_EQ(fabric->LinkUp(link), true, "both reverted");

    fabric->SetLinkUp(link, false);
    fabric->SetLinkUp(link, false);
    fabric->SetLinkUp(link, true);
    NS_TEST_ASSERT_MSG_EQ(fabric->LinkUp(link), false, "one of two link_down reverted");
    fabric->SetLinkUp(link, true);
    NS_TEST_ASSERT_MSG_EQ(fabric->LinkUp(link), true, "both reverted");
    fabric->SetLinkUp(link, true);
    fabric->SetLinkUp(link, false);
    NS_TEST_ASSERT_MSG_EQ(fabric->LinkUp(link), false, "an extra revert is not banked");
    fabric->SetLinkUp(link, true);

    const int host_link = Clos2HostLink(0, 3);
    fabric->SetPlaneHostLinksUp(0, false);
    fabric->SetLinkUp(host_link, false);
    fabric->SetPlaneHostLinksUp(0, true);
    NS_TEST_ASSERT_MSG_EQ(fabric->LinkUp(host_link), false, "link_down still in force");
    NS_TEST_ASSERT_MSG_EQ(fabric->LinkUp(Clos2HostLink(0, 4)), true, "other host links up");
    fabric->SetLinkUp(host_link, true);
    NS_TEST_ASSERT_MSG_EQ(fabric->LinkUp(host_link), true, "both reverted");
    Simulator::Destroy();
  }
};

class BlackholeTestCase : public ns3::TestCase {
 public:
  BlackholeTestCase()
      : ns3::TestCase("a blackhole drops one or both directions at the receiving ingress") {}

 private:
  void DoRun() override {
    const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
    ns3::Ptr<SimFabric> fabric = test::BuildFabric(lab);
    Recorder host0, host2;
    host0.Attach(*fabric, "host0", 0);
    host2.Attach(*fabric, "host2", 0);
    // Link 16: a = p0-leaf0, b = host0. host0 sends b -> a; host2's packets arrive a -> b.
    const int link = Clos2HostLink(0, 0);
    // 150 packets each way, one per 20 us: 1 ms per phase.
    ScheduleStream(*fabric, lab, "host0", 0, test::HostAddress(lab, "host2", 0), 150,
                   MicroSeconds(20), 8);
    ScheduleStream(*fabric, lab, "host2", 0, test::HostAddress(lab, "host0", 0), 150,
                   MicroSeconds(20), 8);
    fabric->SetBlackhole(link, false, true);
    Simulator::Schedule(MilliSeconds(1), [&] { fabric->SetBlackhole(link, true, true); });
    Simulator::Schedule(MilliSeconds(2), [&] { fabric->SetBlackhole(link, false, false); });
    Simulator::Run();
    // Packets sent within 60 us of a phase change may cross the link in the next phase.
    NS_TEST_ASSERT_MSG_EQ(DeliveredFraction(host2, 0, 47), 0.0, "b_to_a: host0's dropped");
    NS_TEST_ASSERT_MSG_EQ(DeliveredFraction(host0, 0, 47), 1.0, "a_to_b untouched");
    NS_TEST_ASSERT_MSG_EQ(DeliveredFraction(host2, 50, 97), 0.0, "both: host0's dropped");
    NS_TEST_ASSERT_MSG_EQ(DeliveredFraction(host0, 50, 97), 0.0, "both: host2's dropped");
    NS_TEST_ASSERT_MSG_EQ(DeliveredFraction(host2, 100, 150), 1.0, "cleared");
    NS_TEST_ASSERT_MSG_EQ(DeliveredFraction(host0, 100, 150), 1.0, "cleared");
    const PortCounters nic = fabric->Counters(link, false);
    NS_TEST_ASSERT_MSG_EQ(nic.tx_packets, 150u, "the NIC sent everything");
    NS_TEST_ASSERT_MSG_EQ(nic.fault_drops + nic.rx_packets, 150u, "dropped at leaf0's ingress");
    NS_TEST_ASSERT_MSG_EQ(host2.Arrivals().size(), nic.rx_packets, "what leaf0 received");
    NS_TEST_ASSERT_MSG_EQ(fabric->RouteRecomputations(), 0u, "a host link has no BGP session");
    Simulator::Destroy();
  }
};

class FabricBlackholeBgpTestCase : public ns3::TestCase {
 public:
  FabricBlackholeBgpTestCase()
      : ns3::TestCase("bgp: a blackholed fabric link keeps its carrier; after the reaction "
                      "time routing avoids it") {}

 private:
  void DoRun() override {
    const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
    ns3::Ptr<SimFabric> fabric = test::BuildFabric(lab);
    Recorder host2;
    host2.Attach(*fabric, "host2", 0);
    ScheduleStream(*fabric, lab, "host0", 0, test::HostAddress(lab, "host2", 0), 1200,
                   MicroSeconds(10), 64);
    const int link = Clos2FabricLink(0, 1, 0);
    Simulator::Schedule(MilliSeconds(2), [&] { fabric->SetBlackhole(link, true, true); });
    Simulator::Run();
    NS_TEST_ASSERT_MSG_EQ(DeliveredFraction(host2, 0, 190), 1.0, "before");
    const double during = DeliveredFraction(host2, 200, 690);
    NS_TEST_ASSERT_MSG_GT(during, 0.3, "flows via spine0 lost at leaf1's ingress");
    NS_TEST_ASSERT_MSG_LT(during, 0.7, "others delivered");
    NS_TEST_ASSERT_MSG_EQ(DeliveredFraction(host2, 700, 1200), 1.0, "after the reaction");
    NS_TEST_ASSERT_MSG_EQ(fabric->LinkUp(link), true, "carrier up");
    NS_TEST_ASSERT_MSG_GT(fabric->Counters(link, false).fault_drops, 0u, "dropped there");
    NS_TEST_ASSERT_MSG_EQ(fabric->RouteRecomputations(), 1u, "one reaction");
    Simulator::Destroy();
  }
};

// host0 -> host2 over a link losing `rate` of host0's packets; the sequences received.
std::vector<uint32_t> LossyRun(uint32_t seed, double rate, uint64_t* fault_drops,
                               size_t* reverse_delivered) {
  const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
  ns3::Ptr<SimFabric> fabric = test::BuildFabric(lab, seed);
  Recorder host0, host2;
  host0.Attach(*fabric, "host0", 0);
  host2.Attach(*fabric, "host2", 0);
  const int link = Clos2HostLink(0, 0);
  fabric->SetLoss(link, 0, rate);
  ScheduleStream(*fabric, lab, "host0", 0, test::HostAddress(lab, "host2", 0), 5000,
                 MicroSeconds(10), 16);
  ScheduleStream(*fabric, lab, "host2", 0, test::HostAddress(lab, "host0", 0), 100,
                 MicroSeconds(10), 16);
  Simulator::Run();
  *fault_drops = fabric->Counters(link, false).fault_drops;
  *reverse_delivered = host0.Arrivals().size();
  Simulator::Destroy();
  return host2.Sequences();
}

class LossTestCase : public ns3::TestCase {
 public:
  LossTestCase()
      : ns3::TestCase("loss drops about its rate in the chosen direction, the same packets for "
                      "the same seed") {}

 private:
  void DoRun() override {
    uint64_t drops = 0, unused_drops = 0;
    size_t reverse = 0, unused_reverse = 0;
    const std::vector<uint32_t> run = LossyRun(1, 0.1, &drops, &reverse);
    // 4500 expected, sigma 21.
    NS_TEST_ASSERT_MSG_EQ_TOL(static_cast<double>(run.size()), 4500.0, 110.0, "10% lost");
    NS_TEST_ASSERT_MSG_EQ(drops + run.size(), 5000u, "each loss counted at the ingress");
    NS_TEST_ASSERT_MSG_EQ(reverse, 100u, "the other direction loses nothing");
    NS_TEST_ASSERT_MSG_EQ((LossyRun(1, 0.1, &unused_drops, &unused_reverse) == run), true,
                          "same seed, same packets lost");
    NS_TEST_ASSERT_MSG_EQ((LossyRun(2, 0.1, &unused_drops, &unused_reverse) != run), true,
                          "another seed, other packets");
    bool threw = false;
    try {
      const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
      test::BuildFabric(lab)->SetLoss(0, -0.1, -0.1);
    } catch (const std::invalid_argument&) {
      threw = true;
    }
    NS_TEST_ASSERT_MSG_EQ(threw, true, "a negative rate is refused");
  }
};

class RateChangeTestCase : public ns3::TestCase {
 public:
  RateChangeTestCase()
      : ns3::TestCase("a rate change sets both directions' serialisation time; 0 restores") {}

 private:
  void DoRun() override {
    const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
    ns3::Ptr<SimFabric> fabric = test::BuildFabric(lab);
    Recorder host0, host2;
    host0.Attach(*fabric, "host0", 0);
    host2.Attach(*fabric, "host2", 0);
    const int link = Clos2HostLink(0, 0);
    fabric->SetLinkRate(link, 100'000'000);
    ScheduleStream(*fabric, lab, "host0", 0, test::HostAddress(lab, "host2", 0), 1,
                   MicroSeconds(1), 1);
    ScheduleStream(*fabric, lab, "host2", 0, test::HostAddress(lab, "host0", 0), 1,
                   MicroSeconds(1), 1);
    Simulator::Schedule(MilliSeconds(1), [&] { fabric->SetLinkRate(link, 0); });
    ScheduleStream(*fabric, lab, "host0", 0, test::HostAddress(lab, "host2", 0), 1,
                   MicroSeconds(1), 1, MilliSeconds(2));
    Simulator::Run();
    // 1066 bytes: 85280 ns at 100 Mbit/s, 8528 ns at 1 Gbit/s; 1 us per hop.
    const ns3::Time slow = NanoSeconds(85'280 + 1'000 + 3 * (8'528 + 1'000));
    NS_TEST_ASSERT_MSG_EQ(host2.Arrivals().size(), 2u, "both delivered");
    NS_TEST_ASSERT_MSG_EQ(host2.Arrivals()[0].at, slow, "first hop at 100 Mbit/s");
    NS_TEST_ASSERT_MSG_EQ(host0.Arrivals().size(), 1u, "reverse delivered");
    NS_TEST_ASSERT_MSG_EQ(host0.Arrivals()[0].at, slow, "last hop at 100 Mbit/s");
    NS_TEST_ASSERT_MSG_EQ(host2.Arrivals()[1].at,
                          MilliSeconds(2) + NanoSeconds(4 * (8'528 + 1'000)),
                          "back to the lab's 1 Gbit/s");
    Simulator::Destroy();
  }
};

class SwitchDownTestCase : public ns3::TestCase {
 public:
  SwitchDownTestCase()
      : ns3::TestCase("switch_down drops what its links hold; routes return a reaction time "
                      "after the revert") {}

 private:
  void DoRun() override {
    const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
    ns3::Ptr<SimFabric> fabric = test::BuildFabric(lab);
    Recorder host2;
    host2.Attach(*fabric, "host2", 0);
    const std::string src = test::HostAddress(lab, "host0", 0);
    auto via = [&](const std::string& spine) {
      return lab.PathVia("host0", "p0-leaf0", spine, "p0-leaf1", "host2").destination;
    };
    // 20 packets via spine0 at line rate; spine0 fails at 50 us with packets on its links.
    for (uint32_t i = 0; i < 20; ++i) {
      fabric->Send("host0", 0, NumberedPacket(src, via("p0-spine0"), 1, i));
    }
    Simulator::Schedule(MicroSeconds(50), [&] { fabric->SetSwitchUp("p0-spine0", false); });
    Simulator::Schedule(MicroSeconds(300), [&] {
      fabric->Send("host0", 0, NumberedPacket(src, via("p0-spine1"), 1, 100));
    });
    // Routes recomputed at 5.05 ms without spine0; reverted at 10 ms, recomputed at 15 ms.
    Simulator::Schedule(MilliSeconds(10), [&] { fabric->SetSwitchUp("p0-spine0", true); });
    Simulator::Schedule(MilliSeconds(12), [&] {
      fabric->Send("host0", 0, NumberedPacket(src, via("p0-spine0"), 1, 200));
    });
    Simulator::Schedule(MilliSeconds(16), [&] {
      fabric->Send("host0", 0, NumberedPacket(src, via("p0-spine0"), 1, 300));
    });
    Simulator::Run();
    std::set<uint32_t> got;
    for (uint32_t seq : host2.Sequences()) got.insert(seq);
    size_t first_burst = 0;
    for (uint32_t seq : got) first_burst += seq < 20 ? 1 : 0;
    NS_TEST_ASSERT_MSG_LT(first_burst, 20u, "the failure cut the burst");
    NS_TEST_ASSERT_MSG_GT(first_burst, 0u, "after some arrived");
    uint64_t fault_drops = 0;
    for (int leaf = 0; leaf < 4; ++leaf) {
      const int link = Clos2FabricLink(0, leaf, 0);
      fault_drops += fabric->Counters(link, true).fault_drops;
      fault_drops += fabric->Counters(link, false).fault_drops;
    }
    NS_TEST_ASSERT_MSG_GT(fault_drops, 0u, "packets on spine0's links dropped");
    NS_TEST_ASSERT_MSG_EQ(first_burst + fault_drops +
                              fabric->CountersOfSwitch("p0-leaf0").no_route_drops - 1,
                          20u, "the rest found leaf0's port to spine0 down");
    NS_TEST_ASSERT_MSG_EQ(got.count(100), 1u, "spine1 unaffected");
    NS_TEST_ASSERT_MSG_EQ(got.count(200), 0u, "reverted, but leaf0 has no route yet");
    NS_TEST_ASSERT_MSG_EQ(got.count(300), 1u, "routes back after the reaction time");
    NS_TEST_ASSERT_MSG_EQ(fabric->RouteRecomputations(), 2u, "down and up");
    Simulator::Destroy();
  }
};

class PlaneDownTestCase : public ns3::TestCase {
 public:
  PlaneDownTestCase()
      : ns3::TestCase("plane_down takes every host link of the plane down; the other plane "
                      "carries on") {}

 private:
  void DoRun() override {
    const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
    ns3::Ptr<SimFabric> fabric = test::BuildFabric(lab);
    Recorder host2_p0, host2_p1;
    host2_p0.Attach(*fabric, "host2", 0);
    host2_p1.Attach(*fabric, "host2", 1);
    const std::string dst0 = test::HostAddress(lab, "host2", 0);
    const std::string dst1 = test::HostAddress(lab, "host2", 1);
    const std::string src0 = test::HostAddress(lab, "host0", 0);
    const std::string src1 = test::HostAddress(lab, "host0", 1);
    const std::string container =
        lab.PathVia("host0", "p0-leaf0", "p0-spine0", "p0-leaf1", "host2").destination;
    fabric->SetPlaneHostLinksUp(0, false);
    for (int h = 0; h < 8; ++h) {
      NS_TEST_ASSERT_MSG_EQ(fabric->LinkUp(Clos2HostLink(0, h)), false, "plane 0 host link");
      NS_TEST_ASSERT_MSG_EQ(fabric->LinkUp(Clos2HostLink(1, h)), true, "plane 1 host link");
    }
    bool accepted = false;
    Simulator::Schedule(MilliSeconds(6), [&] {
      accepted = fabric->Send("host0", 0, NumberedPacket(src0, dst0, 1, 1));
      fabric->Send("host0", 1, NumberedPacket(src1, dst1, 1, 2));
    });
    // Reverted at 10 ms: link subnets return with the recomputation at 15 ms, while a uSID
    // path only needs the leaves' connected routes.
    Simulator::Schedule(MilliSeconds(10), [&] { fabric->SetPlaneHostLinksUp(0, true); });
    Simulator::Schedule(MilliSeconds(11), [&] {
      fabric->Send("host0", 0, NumberedPacket(src0, dst0, 1, 3));
      fabric->Send("host0", 0, NumberedPacket(src0, container, 1, 4));
    });
    Simulator::Schedule(MilliSeconds(16), [&] {
      fabric->Send("host0", 0, NumberedPacket(src0, dst0, 1, 5));
    });
    Simulator::Run();
    NS_TEST_ASSERT_MSG_EQ(accepted, true, "a down NIC takes the packet...");
    NS_TEST_ASSERT_MSG_EQ(fabric->Counters(Clos2HostLink(0, 0), false).fault_drops, 1u,
                          "...and drops it");
    NS_TEST_ASSERT_MSG_EQ((host2_p1.Sequences() == std::vector<uint32_t>{2}), true,
                          "plane 1 carries on");
    NS_TEST_ASSERT_MSG_EQ((host2_p0.Sequences() == std::vector<uint32_t>{4, 5}), true,
                          "uSID at once, link subnet after the reaction");
    NS_TEST_ASSERT_MSG_EQ(fabric->CountersOfSwitch("p0-leaf0").no_route_drops, 1u,
                          "the subnet was not routed yet");
    Simulator::Destroy();
  }
};

class SimFaultsTestSuite : public ns3::TestSuite {
 public:
  SimFaultsTestSuite() : ns3::TestSuite("mrclab-sim-faults", UNIT) {
    AddTestCase(new LinkDownBgpTestCase, QUICK);
    AddTestCase(new LinkDownStaticTestCase, QUICK);
    AddTestCase(new AdjacentSwitchTestCase, QUICK);
    AddTestCase(new DownFaultsNestTestCase, QUICK);
    AddTestCase(new BlackholeTestCase, QUICK);
    AddTestCase(new FabricBlackholeBgpTestCase, QUICK);
    AddTestCase(new LossTestCase, QUICK);
    AddTestCase(new RateChangeTestCase, QUICK);
    AddTestCase(new SwitchDownTestCase, QUICK);
    AddTestCase(new PlaneDownTestCase, QUICK);
  }
};

SimFaultsTestSuite g_sim_faults_test_suite;

}  // namespace
}  // namespace mrclab::emulator::sim
