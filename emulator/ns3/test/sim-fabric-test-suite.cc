// SimFabric on clos2: uSID source routing, delivery to link addresses, ECMP over a leaf's
// uplinks, ECN and tail drop under incast, NIC back-pressure, counters.
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "emulator/lab_spec.h"
#include "emulator/ns3/model/sim_fabric.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"
#include "sim-test-helpers.h"

namespace mrclab::emulator::sim {
namespace {

using emulator::Routing;
using ns3::MicroSeconds;
using ns3::Simulator;
using test::Clos2;
using test::Clos2FabricLink;
using test::Clos2HostLink;
using test::NumberedPacket;
using test::Recorder;

// Every switch's lookups end in exactly one behaviour.
bool CountersAddUp(const SimFabric& fabric, const emulator::ResolvedLab& lab) {
  for (const emulator::ResolvedNode* sw : lab.Switches()) {
    SwitchCounters c = fabric.CountersOfSwitch(sw->name);
    if (c.lookups != c.un_hits + c.forwarded + c.no_route_drops + c.local_drops) return false;
  }
  return true;
}

class UsidPathTestCase : public ns3::TestCase {
 public:
  UsidPathTestCase()
      : ns3::TestCase("a uSID container crosses exactly the spine it names, in either plane") {}

 private:
  void DoRun() override {
    const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
    for (int plane : {0, 1}) {
      for (int spine : {0, 1}) {
        ns3::Ptr<SimFabric> fabric = test::BuildFabric(lab);
        Recorder host2;
        host2.Attach(*fabric, "host2", plane);
        const std::string p = "p" + std::to_string(plane) + "-";
        const std::string spine_name = p + "spine" + std::to_string(spine);
        const emulator::UsidPath path =
            lab.PathVia("host0", p + "leaf0", spine_name, p + "leaf1", "host2");
        const std::string src = test::HostAddress(lab, "host0", plane);
        for (uint32_t i = 0; i < 10; ++i) {
          fabric->Send("host0", plane, NumberedPacket(src, path.destination, 1000 + i, i));
        }
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(host2.Arrivals().size(), 10u, "delivered via " << spine_name);
        NS_TEST_ASSERT_MSG_EQ(FormatIpv6Address(host2.Arrivals()[0].packet.dst),
                              "fcbb:0:" + emulator::UsidHex(lab.FindNode("host2")->ports[plane].usid) + "::",
                              "the container is consumed down to the host port's uSID");
        const std::vector<uint32_t> seqs = host2.Sequences();
        NS_TEST_ASSERT_MSG_EQ((seqs == std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
                              true, "in order");
        for (const std::string& sw : {p + "leaf0", spine_name, p + "leaf1"}) {
          NS_TEST_ASSERT_MSG_EQ(fabric->CountersOfSwitch(sw).un_hits, 10u, "uN on " << sw);
        }
        const std::string other_spine = p + "spine" + std::to_string(1 - spine);
        NS_TEST_ASSERT_MSG_EQ(fabric->CountersOfSwitch(other_spine).lookups, 0u,
                              "nothing crosses " << other_spine);
        NS_TEST_ASSERT_MSG_EQ(fabric->Counters(Clos2FabricLink(plane, 0, spine), true).tx_packets,
                              10u, "leaf0 -> " << spine_name);
        NS_TEST_ASSERT_MSG_EQ(fabric->Counters(Clos2FabricLink(plane, 1, spine), false).tx_packets,
                              10u, spine_name << " -> leaf1");
        NS_TEST_ASSERT_MSG_EQ(fabric->PacketHops(), 40u, "4 hops each");
        NS_TEST_ASSERT_MSG_EQ(CountersAddUp(*fabric, lab), true, "switch counters");
        Simulator::Destroy();
      }
    }
  }
};

class LinkAddressDeliveryTestCase : public ns3::TestCase {
 public:
  LinkAddressDeliveryTestCase()
      : ns3::TestCase("udp mode: a packet to the peer's link address arrives after 4 hops") {}

 private:
  void DoRun() override {
    const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
    ns3::Ptr<SimFabric> fabric = test::BuildFabric(lab);
    Recorder host2_p0, host2_p1;
    host2_p0.Attach(*fabric, "host2", 0);
    host2_p1.Attach(*fabric, "host2", 1);
    const std::string dst = test::HostAddress(lab, "host2", 0);
    NS_TEST_ASSERT_MSG_EQ(dst, "fd00:0:12::2", "host2's plane-0 link address");
    fabric->Send("host0", 0, NumberedPacket(test::HostAddress(lab, "host0", 0), dst, 1000, 1));
    // Plane 1 cannot reach a plane-0 address: its first leaf has no route.
    fabric->Send("host0", 1, NumberedPacket(test::HostAddress(lab, "host0", 1), dst, 1000, 2));
    // A switch's own address is not forwarded: link 0's a end is p0-leaf0.
    fabric->Send("host0", 0, NumberedPacket(test::HostAddress(lab, "host0", 0), "fd00::1", 1, 3));
    Simulator::Run();
    NS_TEST_ASSERT_MSG_EQ(host2_p0.Arrivals().size(), 1u, "delivered in plane 0");
    NS_TEST_ASSERT_MSG_EQ(host2_p1.Arrivals().size(), 0u, "nothing in plane 1");
    // 1066 bytes at 1 Gbit/s = 8528 ns per hop, plus 1 us of delay, 4 hops.
    NS_TEST_ASSERT_MSG_EQ(host2_p0.Arrivals()[0].at, ns3::NanoSeconds(4 * (8528 + 1000)),
                          "latency");
    NS_TEST_ASSERT_MSG_EQ(fabric->CountersOfSwitch("p1-leaf0").no_route_drops, 1u,
                          "plane 1 drops it");
    NS_TEST_ASSERT_MSG_EQ(fabric->CountersOfSwitch("p0-leaf0").local_drops, 1u,
                          "own address");
    NS_TEST_ASSERT_MSG_EQ(CountersAddUp(*fabric, lab), true, "switch counters");
    Simulator::Destroy();
  }
};

class LabLinkDelayTestCase : public ns3::TestCase {
 public:
  LabLinkDelayTestCase() : ns3::TestCase("the lab's link_delay is every link's propagation delay") {}

 private:
  void DoRun() override {
    const emulator::ResolvedLab lab = emulator::Resolve(emulator::ParseLabText(
        "name: t\nclos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 4, hosts: 8, hosts_per_leaf: 2}\n"
        "link_rate: 1Gbit\nlink_delay: 7us\n",
        "<test>"));
    ns3::Ptr<SimFabric> fabric = test::BuildFabric(lab);
    Recorder host2;
    host2.Attach(*fabric, "host2", 0);
    fabric->Send("host0", 0,
                 NumberedPacket(test::HostAddress(lab, "host0", 0), test::HostAddress(lab, "host2", 0), 1000, 1));
    Simulator::Run();
    NS_TEST_ASSERT_MSG_EQ(host2.Arrivals().size(), 1u, "delivered");
    // 1066 bytes at 1 Gbit/s = 8528 ns per hop, plus 7 us of delay, 4 hops.
    NS_TEST_ASSERT_MSG_EQ(host2.Arrivals()[0].at, ns3::NanoSeconds(4 * (8528 + 7000)), "latency");
    Simulator::Destroy();
  }
};

class EcmpSpreadTestCase : public ns3::TestCase {
 public:
  EcmpSpreadTestCase()
      : ns3::TestCase("flows spread over a leaf's uplinks; one flow always takes one path") {}

 private:
  void DoRun() override {
    const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
    ns3::Ptr<SimFabric> fabric = test::BuildFabric(lab);
    Recorder host2;
    host2.Attach(*fabric, "host2", 0);
    const std::string src = test::HostAddress(lab, "host0", 0);
    const std::string dst = test::HostAddress(lab, "host2", 0);
    // 2000 flows, one packet each, every 10 us (the NIC needs 8.5 us per packet).
    for (uint32_t i = 0; i < 2000; ++i) {
      Simulator::Schedule(MicroSeconds(10 * i), [&, i] {
        fabric->Send("host0", 0, NumberedPacket(src, dst, static_cast<uint16_t>(10000 + i), i));
      });
    }
    Simulator::Run();
    const uint64_t via0 = fabric->Counters(Clos2FabricLink(0, 0, 0), true).tx_packets;
    const uint64_t via1 = fabric->Counters(Clos2FabricLink(0, 0, 1), true).tx_packets;
    NS_TEST_ASSERT_MSG_EQ(via0 + via1, 2000u, "every packet took an uplink");
    // 1000 expected each, sigma 22.
    NS_TEST_ASSERT_MSG_EQ_TOL(static_cast<double>(via0), 1000.0, 110.0, "spread");
    NS_TEST_ASSERT_MSG_EQ(host2.Arrivals().size(), 2000u, "all delivered");

    // One flow, 200 packets: all on one uplink.
    for (uint32_t i = 0; i < 200; ++i) {
      Simulator::Schedule(MicroSeconds(10 * i),
                          [&, i] { fabric->Send("host0", 0, NumberedPacket(src, dst, 4242, i)); });
    }
    Simulator::Run();
    const uint64_t more0 = fabric->Counters(Clos2FabricLink(0, 0, 0), true).tx_packets - via0;
    const uint64_t more1 = fabric->Counters(Clos2FabricLink(0, 0, 1), true).tx_packets - via1;
    NS_TEST_ASSERT_MSG_EQ(std::min(more0, more1), 0u, "one flow, one uplink");
    NS_TEST_ASSERT_MSG_EQ(std::max(more0, more1), 200u, "all of it");
    Simulator::Destroy();
  }
};

class IncastTestCase : public ns3::TestCase {
 public:
  IncastTestCase()
      : ns3::TestCase("2:1 incast: the bottleneck port marks ECN above its threshold and "
                      "tail-drops when its buffer is full") {}

 private:
  void DoRun() override {
    const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
    ns3::Ptr<SimFabric> fabric = ns3::CreateObject<SimFabric>();
    fabric->SetAttribute("EcnThresholdBytes", ns3::UintegerValue(10'000));
    fabric->SetAttribute("PortBufferBytes", ns3::UintegerValue(50'000));
    fabric->Build(lab);
    Recorder host2;
    host2.Attach(*fabric, "host2", 0);
    // host4 via spine0 and host6 via spine1, 200 packets each at line rate: the only shared
    // port is p0-leaf1 -> host2. host6's packets are not ECN-capable.
    int sent = 0;
    for (auto [host, leaf, spine] : {std::tuple{"host4", 2, 0}, std::tuple{"host6", 3, 1}}) {
      const std::string container =
          lab.PathVia(host, "p0-leaf" + std::to_string(leaf), "p0-spine" + std::to_string(spine),
                      "p0-leaf1", "host2")
              .destination;
      for (uint32_t i = 0; i < 200; ++i) {
        SimPacket p = NumberedPacket(test::HostAddress(lab, host, 0), container, 7, i);
        p.ecn_capable = spine == 0;
        sent += fabric->Send(host, 0, std::move(p)) ? 1 : 0;
      }
    }
    NS_TEST_ASSERT_MSG_EQ(sent, 400, "the NICs took everything");
    Simulator::Run();
    const PortCounters bottleneck = fabric->Counters(Clos2HostLink(0, 2), true);
    size_t ce = 0, ce_not_capable = 0;
    for (const test::Arrival& a : host2.Arrivals()) {
      ce += a.packet.ecn_ce ? 1 : 0;
      ce_not_capable += a.packet.ecn_ce && !a.packet.ecn_capable ? 1 : 0;
    }
    NS_TEST_ASSERT_MSG_GT(bottleneck.ecn_marks, 50u, "marks above the threshold");
    NS_TEST_ASSERT_MSG_EQ(ce, bottleneck.ecn_marks, "every mark reaches the host");
    NS_TEST_ASSERT_MSG_EQ(ce_not_capable, 0u, "never on packets that are not ECN-capable");
    NS_TEST_ASSERT_MSG_GT(bottleneck.queue_drops, 50u, "tail drops");
    NS_TEST_ASSERT_MSG_EQ(bottleneck.queue_drops + host2.Arrivals().size(), 400u,
                          "every loss is a tail drop there");
    NS_TEST_ASSERT_MSG_LT_OR_EQ(bottleneck.max_queue_bytes, 50'000u, "within the buffer");
    NS_TEST_ASSERT_MSG_GT(bottleneck.max_queue_bytes, 50'000u - 1066, "and full");
    for (int spine : {0, 1}) {
      NS_TEST_ASSERT_MSG_LT_OR_EQ(
          fabric->Counters(Clos2FabricLink(0, 1, spine), false).max_queue_bytes, 2u * 1066,
          "no standing queue on the way");
    }
    Simulator::Destroy();
  }
};

class NicBackPressureTestCase : public ns3::TestCase {
 public:
  NicBackPressureTestCase()
      : ns3::TestCase("Send refuses what the NIC buffer cannot take; OnTxSpace refills it") {}

 private:
  void DoRun() override {
    const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
    ns3::Ptr<SimFabric> fabric = ns3::CreateObject<SimFabric>();
    fabric->SetAttribute("HostBufferBytes", ns3::UintegerValue(4 * 1066));
    fabric->Build(lab);
    Recorder host2;
    host2.Attach(*fabric, "host2", 0);
    const std::string src = test::HostAddress(lab, "host0", 0);
    const std::string dst = test::HostAddress(lab, "host2", 0);
    std::vector<bool> accepted;
    for (uint32_t i = 0; i < 6; ++i) {
      accepted.push_back(fabric->Send("host0", 0, NumberedPacket(src, dst, 1, i)));
    }
    NS_TEST_ASSERT_MSG_EQ((accepted == std::vector<bool>{true, true, true, true, false, false}),
                          true, "four fit");
    NS_TEST_ASSERT_MSG_EQ(fabric->QueuedBytes("host0", 0), 4u * 1066, "queued");
    NS_TEST_ASSERT_MSG_EQ(fabric->Counters(Clos2HostLink(0, 0), false).queue_drops, 2u,
                          "refusals counted on the NIC");
    // The refused packets are sent again by a pump that only sends what fits.
    uint32_t next = 4;
    fabric->SetOnTxSpace("host0", 0, [&] {
      while (next < 100 && fabric->QueuedBytes("host0", 0) + 1066 <= 4 * 1066) {
        NS_TEST_EXPECT_MSG_EQ(fabric->Send("host0", 0, NumberedPacket(src, dst, 1, next)), true,
                              "fits");
        ++next;
      }
    });
    Simulator::Run();
    std::vector<uint32_t> all(100);
    for (uint32_t i = 0; i < 100; ++i) all[i] = i;
    NS_TEST_ASSERT_MSG_EQ((host2.Sequences() == all), true, "everything, in order");
    NS_TEST_ASSERT_MSG_EQ(fabric->Counters(Clos2HostLink(0, 0), false).queue_drops, 2u,
                          "no refusal since");
    Simulator::Destroy();
  }
};

class BuildTestCase : public ns3::TestCase {
 public:
  BuildTestCase()
      : ns3::TestCase("Build: the lab's rate, unknown names refused, a second Build refused") {}

 private:
  void DoRun() override {
    const emulator::ResolvedLab lab = Clos2(Routing::kBgp);
    ns3::Ptr<SimFabric> fabric = test::BuildFabric(lab);
    auto throws = [](auto&& f) {
      try {
        f();
      } catch (const std::out_of_range&) {
        return true;
      }
      return false;
    };
    NS_TEST_ASSERT_MSG_EQ(throws([&] { fabric->Send("host9", 0, SimPacket{}); }), true, "host");
    NS_TEST_ASSERT_MSG_EQ(throws([&] { fabric->Send("host0", 2, SimPacket{}); }), true, "plane");
    NS_TEST_ASSERT_MSG_EQ(throws([&] { fabric->SetLinkUp(32, false); }), true, "link");
    NS_TEST_ASSERT_MSG_EQ(throws([&] { fabric->SetSwitchUp("p2-leaf0", false); }), true, "switch");
    NS_TEST_ASSERT_MSG_EQ(throws([&] { fabric->SetPlaneHostLinksUp(2, false); }), true, "plane");
    bool threw = false;
    try {
      fabric->Build(lab);
    } catch (const std::logic_error&) {
      threw = true;
    }
    NS_TEST_ASSERT_MSG_EQ(threw, true, "Build twice");
    Simulator::Destroy();
  }
};

class SimFabricTestSuite : public ns3::TestSuite {
 public:
  SimFabricTestSuite() : ns3::TestSuite("mrclab-sim-fabric", UNIT) {
    AddTestCase(new UsidPathTestCase, QUICK);
    AddTestCase(new LinkAddressDeliveryTestCase, QUICK);
    AddTestCase(new LabLinkDelayTestCase, QUICK);
    AddTestCase(new EcmpSpreadTestCase, QUICK);
    AddTestCase(new IncastTestCase, QUICK);
    AddTestCase(new NicBackPressureTestCase, QUICK);
    AddTestCase(new BuildTestCase, QUICK);
  }
};

SimFabricTestSuite g_sim_fabric_test_suite;

}  // namespace
}  // namespace mrclab::emulator::sim
