// UsidSwitch on its own, with a hand-written FIB: the uN shift, lookups by uSID and by link
// address, the behaviour counters, ECMP over up ports, FIB validation.
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <vector>

#include "emulator/ns3/model/usid_switch.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "sim-test-helpers.h"

namespace mrclab::emulator::sim {
namespace {

using ns3::Simulator;
using test::Arrival;
using test::CollectingSink;

// A switch with `n` egress ports, each delivering into its own sink.
class Bench {
 public:
  explicit Bench(int n) : sw("p0-leaf0", 42) {
    for (int i = 0; i < n; ++i) {
      sinks.push_back(std::make_unique<CollectingSink>());
      PortConfig config;
      config.rate_bps = 100'000'000'000;
      ports.push_back(std::make_unique<SimPort>(config, sinks.back().get()));
      sw.AddEgressPort(ports.back().get());
    }
  }
  void Send(const std::string& dst, uint16_t src_port = 1000) {
    SimPacket p;
    p.src = ParseIpv6Address("fd00:0:10::2");
    p.dst = ParseIpv6Address(dst);
    p.src_port = src_port;
    p.payload_bytes = 100;
    sw.Receive(std::move(p));
  }
  bool CountersAddUp() const {
    const SwitchCounters& c = sw.Counters();
    return c.lookups == c.un_hits + c.forwarded + c.no_route_drops + c.local_drops;
  }

  UsidSwitch sw;
  std::vector<std::unique_ptr<CollectingSink>> sinks;
  std::vector<std::unique_ptr<SimPort>> ports;
};

class UnShiftTestCase : public ns3::TestCase {
 public:
  UnShiftTestCase()
      : ns3::TestCase("uN shifts the container by one uSID with zero fill, then looks up") {}

 private:
  void DoRun() override {
    Bench b(2);
    Fib fib;
    fib.groups = {{0}, {1}};
    fib.by_usid[0x1201] = {Behaviour::kUn, 0};
    fib.by_usid[0x1101] = {Behaviour::kForward, 0};
    fib.by_usid[0x1302] = {Behaviour::kForward, 1};
    b.sw.SetFib(fib);
    b.Send("fcbb:0:1201:1101:1202:1303::");
    b.Send("fcbb:0:1201:1302:1:2:3:4");   // a full container: the last uSID slot becomes 0
    b.Send("fcbb:0:1201::");              // exhausted after the shift: no route
    b.Send("fcbb:0:1101:1201::");         // not ours: forwarded unchanged
    b.Send("fcbb:1:1201::");              // outside fcbb:0::/32
    Simulator::Run();
    NS_TEST_ASSERT_MSG_EQ(b.sinks[0]->arrivals.size(), 2u, "port 0");
    NS_TEST_ASSERT_MSG_EQ(FormatIpv6Address(b.sinks[0]->arrivals[0].packet.dst),
                          "fcbb:0:1101:1202:1303::", "shifted once");
    NS_TEST_ASSERT_MSG_EQ(FormatIpv6Address(b.sinks[0]->arrivals[1].packet.dst),
                          "fcbb:0:1101:1201::", "unchanged");
    NS_TEST_ASSERT_MSG_EQ(b.sinks[1]->arrivals.size(), 1u, "port 1");
    NS_TEST_ASSERT_MSG_EQ(FormatIpv6Address(b.sinks[1]->arrivals[0].packet.dst),
                          "fcbb:0:1302:1:2:3:4:0", "zero fill");
    const SwitchCounters& c = b.sw.Counters();
    NS_TEST_ASSERT_MSG_EQ(c.un_hits, 3u, "uN executions");
    NS_TEST_ASSERT_MSG_EQ(c.lookups, 8u, "5 packets + 3 shifts");
    NS_TEST_ASSERT_MSG_EQ(c.forwarded, 3u, "forwarded");
    NS_TEST_ASSERT_MSG_EQ(c.no_route_drops, 2u, "exhausted container, foreign block");
    NS_TEST_ASSERT_MSG_EQ(b.CountersAddUp(), true, "every lookup ends in one behaviour");
    Simulator::Destroy();
  }
};

class LinkAddressTestCase : public ns3::TestCase {
 public:
  LinkAddressTestCase()
      : ns3::TestCase("link addresses are looked up by plane, link and endpoint") {}

 private:
  void DoRun() override {
    Bench b(1);
    Fib fib;
    fib.groups = {{0}};
    fib.by_link_address[LinkAddressKey(0, 0x12, 2)] = {Behaviour::kForward, 0};
    fib.by_link_address[LinkAddressKey(0, 0x12, 1)] = {Behaviour::kLocal, 0};
    b.sw.SetFib(fib);
    b.Send("fd00:0:12::2");     // forwarded
    b.Send("fd00:0:12::1");     // the switch's own address
    b.Send("fd00:1:12::2");     // same link number, other plane
    b.Send("fd00:0:12::3");     // not an endpoint
    b.Send("fd00:0:12:1::2");   // outside the /64
    b.Send("2001:db8::1");
    Simulator::Run();
    NS_TEST_ASSERT_MSG_EQ(b.sinks[0]->arrivals.size(), 1u, "forwarded");
    const SwitchCounters& c = b.sw.Counters();
    NS_TEST_ASSERT_MSG_EQ(c.local_drops, 1u, "own address");
    NS_TEST_ASSERT_MSG_EQ(c.no_route_drops, 4u, "no route");
    NS_TEST_ASSERT_MSG_EQ(b.CountersAddUp(), true, "every lookup ends in one behaviour");
    Simulator::Destroy();
  }
};

class EcmpTestCase : public ns3::TestCase {
 public:
  EcmpTestCase()
      : ns3::TestCase("ECMP spreads flows evenly, keeps a flow on one port, skips down ports") {}

 private:
  void DoRun() override {
    Bench b(4);
    Fib fib;
    fib.groups = {{0, 1, 2, 3}};
    fib.by_usid[0x1202] = {Behaviour::kForward, 0};
    b.sw.SetFib(fib);
    for (int flow = 0; flow < 4000; ++flow) b.Send("fcbb:0:1202::", static_cast<uint16_t>(flow));
    Simulator::Run();
    std::map<uint16_t, size_t> port_of;
    for (size_t i = 0; i < 4; ++i) {
      // 1000 expected per port; sigma 27.
      NS_TEST_ASSERT_MSG_EQ_TOL(static_cast<double>(b.sinks[i]->arrivals.size()), 1000.0, 150.0,
                                "share of port " << i);
      for (const Arrival& a : b.sinks[i]->arrivals) port_of[a.packet.src_port] = i;
      b.sinks[i]->arrivals.clear();
    }
    // The same flows again, with port 1 down: flows that were elsewhere do not all move, and
    // nothing uses port 1.
    b.ports[1]->SetUp(false);
    for (int flow = 0; flow < 4000; ++flow) b.Send("fcbb:0:1202::", static_cast<uint16_t>(flow));
    for (int repeat = 0; repeat < 10; ++repeat) b.Send("fcbb:0:1202::", 7);
    Simulator::Run();
    NS_TEST_ASSERT_MSG_EQ(b.sinks[1]->arrivals.size(), 0u, "a down port is skipped");
    size_t stayed = 0, flow7 = 0;
    std::set<size_t> ports_of_flow7;
    for (size_t i : {0, 2, 3}) {
      NS_TEST_ASSERT_MSG_EQ_TOL(static_cast<double>(b.sinks[i]->arrivals.size()), 4010.0 / 3,
                                200.0, "share of port " << i << " with port 1 down");
      for (const Arrival& a : b.sinks[i]->arrivals) {
        if (a.packet.src_port == 7) {
          ++flow7;
          ports_of_flow7.insert(i);
        }
        if (port_of[a.packet.src_port] == i) ++stayed;
      }
    }
    NS_TEST_ASSERT_MSG_EQ(flow7, 11u, "flow 7 delivered");
    NS_TEST_ASSERT_MSG_EQ(ports_of_flow7.size(), 1u, "one flow, one port");
    NS_TEST_ASSERT_MSG_GT(stayed, 2000u, "most flows of live ports stay put");
    for (auto& port : b.ports) port->SetUp(false);
    b.Send("fcbb:0:1202::");
    NS_TEST_ASSERT_MSG_EQ(b.sw.Counters().no_route_drops, 1u, "no live port: no route");
    NS_TEST_ASSERT_MSG_EQ(b.CountersAddUp(), true, "every lookup ends in one behaviour");
    Simulator::Destroy();
  }
};

class FibValidationTestCase : public ns3::TestCase {
 public:
  FibValidationTestCase()
      : ns3::TestCase("a FIB naming a missing group or port is refused and not installed") {}

 private:
  void DoRun() override {
    Bench b(2);
    Fib bad_group;
    bad_group.by_usid[0x1202] = {Behaviour::kForward, 3};
    Fib bad_port;
    bad_port.groups = {{0, 2}};
    for (const Fib* fib : {&bad_group, &bad_port}) {
      bool threw = false;
      try {
        b.sw.SetFib(*fib);
      } catch (const std::out_of_range&) {
        threw = true;
      }
      NS_TEST_ASSERT_MSG_EQ(threw, true, "refused");
      NS_TEST_ASSERT_MSG_EQ(b.sw.GetFib().groups.size(), 0u, "previous FIB kept");
    }
  }
};

class UsidSwitchTestSuite : public ns3::TestSuite {
 public:
  UsidSwitchTestSuite() : ns3::TestSuite("mrclab-usid-switch", UNIT) {
    AddTestCase(new UnShiftTestCase, QUICK);
    AddTestCase(new LinkAddressTestCase, QUICK);
    AddTestCase(new EcmpTestCase, QUICK);
    AddTestCase(new FibValidationTestCase, QUICK);
  }
};

UsidSwitchTestSuite g_usid_switch_test_suite;

}  // namespace
}  // namespace mrclab::emulator::sim
