// ComputeFibs on hand-made topologies: which destinations each switch reaches and over which
// ports, in both route modes, with links down or not carrying routes.
#include <stdexcept>
#include <vector>

#include "emulator/ns3/model/fabric_routes.h"
#include "ns3/test.h"

namespace mrclab::emulator::sim {
namespace {

// Two spines (one ASN), two leaves (their own ASNs), one host per leaf:
//   link 0: l0-s0   link 1: l0-s1   link 2: l1-s0   link 3: l1-s1   (a = leaf)
//   link 4: l0-host (uSID 1301)     link 5: l1-host (uSID 1302)      (a = leaf)
// Egress-port indices: a leaf's uplink to s0 is 0, to s1 is 1, its host port 2; a spine's
// port to l0 is 0, to l1 is 1.
enum { kS0, kS1, kL0, kL1 };
RouteTopology SmallClos() {
  RouteTopology t;
  t.switches = {{0, 100, 0x1101}, {0, 100, 0x1102}, {0, 201, 0x1201}, {0, 202, 0x1202}};
  auto fabric = [&](int leaf, int spine) {
    RouteTopology::Link l;
    l.a_switch = leaf;
    l.b_switch = spine;
    l.a_port = spine == kS0 ? 0 : 1;
    l.b_port = leaf == kL0 ? 0 : 1;
    t.links.push_back(l);
  };
  fabric(kL0, kS0);
  fabric(kL0, kS1);
  fabric(kL1, kS0);
  fabric(kL1, kS1);
  for (int leaf : {kL0, kL1}) {
    RouteTopology::Link l;
    l.a_switch = leaf;
    l.a_port = 2;
    l.host_usid = leaf == kL0 ? 0x1301 : 0x1302;
    t.links.push_back(l);
  }
  return t;
}

// The ports an entry forwards over; {} for no route; {-1} for kUn, {-2} for kLocal.
std::vector<int> Ports(const Fib& fib, const FibEntry* entry) {
  if (entry == nullptr || entry->behaviour == Behaviour::kNoRoute) return {};
  if (entry->behaviour == Behaviour::kUn) return {-1};
  if (entry->behaviour == Behaviour::kLocal) return {-2};
  return {fib.groups[entry->group].begin(), fib.groups[entry->group].end()};
}
std::vector<int> UsidPorts(const Fib& fib, uint16_t usid) {
  return Ports(fib, FindUsid(fib, usid));
}
std::vector<int> AddressPorts(const Fib& fib, uint16_t link, uint16_t host_id) {
  return Ports(fib, LookupLinkAddress(fib, 0, link, host_id));
}
using P = std::vector<int>;

class AllUpTestCase : public ns3::TestCase {
 public:
  AllUpTestCase()
      : ns3::TestCase("all links up: locators, host uSIDs and link subnets over shortest paths") {}

 private:
  void DoRun() override {
    for (RouteMode mode : {RouteMode::kShortestPath, RouteMode::kBgp}) {
      const std::vector<Fib> fibs = ComputeFibs(SmallClos(), mode);
      const Fib& l0 = fibs[kL0];
      const Fib& s0 = fibs[kS0];
      NS_TEST_ASSERT_MSG_EQ((UsidPorts(l0, 0x1201) == P{-1}), true, "own uSID: uN");
      NS_TEST_ASSERT_MSG_EQ((UsidPorts(l0, 0x1101) == P{0}), true, "spine 0 directly");
      NS_TEST_ASSERT_MSG_EQ((UsidPorts(l0, 0x1202) == P{0, 1}), true, "leaf 1: ECMP");
      NS_TEST_ASSERT_MSG_EQ((UsidPorts(l0, 0x1301) == P{2}), true, "own host port");
      NS_TEST_ASSERT_MSG_EQ((UsidPorts(l0, 0x1302) == P{0, 1}), true, "remote host port");
      NS_TEST_ASSERT_MSG_EQ((AddressPorts(l0, 4, 2) == P{2}), true, "own host's address");
      NS_TEST_ASSERT_MSG_EQ((AddressPorts(l0, 4, 1) == P{-2}), true, "own address: local");
      NS_TEST_ASSERT_MSG_EQ((AddressPorts(l0, 5, 2) == P{0, 1}), true, "remote host address");
      NS_TEST_ASSERT_MSG_EQ((AddressPorts(l0, 0, 2) == P{0}), true, "peer on a fabric link");
      NS_TEST_ASSERT_MSG_EQ((AddressPorts(l0, 2, 1) == P{0}), true,
                            "link l1-s0 via its nearer end s0");
      NS_TEST_ASSERT_MSG_EQ((UsidPorts(s0, 0x1302) == P{1}), true, "spine to a host port");
      NS_TEST_ASSERT_MSG_EQ((AddressPorts(s0, 3, 2) == P{1}), true,
                            "link l1-s1 via its nearer end l1");
      // Spine to spine crosses a leaf: a valid path only without AS-path loop prevention.
      const P spine_to_spine = mode == RouteMode::kBgp ? P{} : P{0, 1};
      NS_TEST_ASSERT_MSG_EQ((UsidPorts(s0, 0x1102) == spine_to_spine), true,
                            "spine 1 from spine 0");
    }
  }
};

class LinkDownTestCase : public ns3::TestCase {
 public:
  LinkDownTestCase()
      : ns3::TestCase("a down link: shortest paths go around it, BGP refuses the valley") {}

 private:
  void DoRun() override {
    RouteTopology t = SmallClos();
    t.links[2].up = false;  // l1-s0
    const std::vector<Fib> bfs = ComputeFibs(t, RouteMode::kShortestPath);
    NS_TEST_ASSERT_MSG_EQ((UsidPorts(bfs[kL0], 0x1202) == P{1}), true, "l0 to l1 via s1 only");
    NS_TEST_ASSERT_MSG_EQ((UsidPorts(bfs[kS0], 0x1202) == P{0}), true,
                          "s0 to l1 via l0 and s1 (valley)");
    NS_TEST_ASSERT_MSG_EQ((AddressPorts(bfs[kS0], 2, 1) == P{1}), true,
                          "connected routes stay (the switch skips the down port)");
    NS_TEST_ASSERT_MSG_EQ((AddressPorts(bfs[kL0], 2, 1) == P{}), true,
                          "a down link's subnet is not announced");
    const std::vector<Fib> bgp = ComputeFibs(t, RouteMode::kBgp);
    NS_TEST_ASSERT_MSG_EQ((UsidPorts(bgp[kL0], 0x1202) == P{1}), true, "l0 to l1 via s1 only");
    NS_TEST_ASSERT_MSG_EQ((UsidPorts(bgp[kS0], 0x1202) == P{}), true, "s0 lost l1");
    NS_TEST_ASSERT_MSG_EQ((UsidPorts(bgp[kS0], 0x1302) == P{}), true, "and l1's host");
    NS_TEST_ASSERT_MSG_EQ((UsidPorts(bgp[kS0], 0x1301) == P{0}), true, "but not l0's");

    t.links[2].up = true;
    t.links[2].carries_routes = false;  // a blackhole: BGP session down, interfaces up
    const std::vector<Fib> blackholed = ComputeFibs(t, RouteMode::kBgp);
    NS_TEST_ASSERT_MSG_EQ((UsidPorts(blackholed[kS0], 0x1202) == P{}), true, "no path over it");
    NS_TEST_ASSERT_MSG_EQ((AddressPorts(blackholed[kL0], 2, 1) == P{0}), true,
                          "its subnet is still announced (by s0)");

    t.links[4].up = false;  // l0's host link
    const std::vector<Fib> host_down = ComputeFibs(t, RouteMode::kBgp);
    NS_TEST_ASSERT_MSG_EQ((UsidPorts(host_down[kL1], 0x1301) == P{}), true, "host uSID withdrawn");
    NS_TEST_ASSERT_MSG_EQ((UsidPorts(host_down[kL0], 0x1301) == P{2}), true,
                          "connected at its leaf");
  }
};

class TieTestCase : public ns3::TestCase {
 public:
  TieTestCase()
      : ns3::TestCase("a subnet whose two ends are equally near is reached through both") {}

 private:
  void DoRun() override {
    // A triangle x-y-z (link 0: x-y, link 1: y-z, link 2: z-x), each switch its own ASN.
    RouteTopology t;
    t.switches = {{0, 1, 0x1101}, {0, 2, 0x1102}, {0, 3, 0x1103}};
    auto link = [&](int a, int a_port, int b, int b_port) {
      RouteTopology::Link l;
      l.a_switch = a;
      l.a_port = a_port;
      l.b_switch = b;
      l.b_port = b_port;
      t.links.push_back(l);
    };
    link(0, 0, 1, 0);
    link(1, 1, 2, 0);
    link(2, 1, 0, 1);
    const std::vector<Fib> fibs = ComputeFibs(t, RouteMode::kBgp);
    NS_TEST_ASSERT_MSG_EQ((AddressPorts(fibs[2], 0, 1) == P{0, 1}), true, "z to link x-y");
  }
};

class ValidationTestCase : public ns3::TestCase {
 public:
  ValidationTestCase() : ns3::TestCase("impossible topologies are refused") {}

 private:
  void DoRun() override {
    RouteTopology hosts_only = SmallClos();
    hosts_only.links[4].a_switch = -1;
    RouteTopology two_planes = SmallClos();
    two_planes.switches[kS0].plane = 1;
    RouteTopology bad_switch = SmallClos();
    bad_switch.links[0].b_switch = 9;
    for (const RouteTopology* t : {&hosts_only, &two_planes, &bad_switch}) {
      bool threw = false;
      try {
        ComputeFibs(*t, RouteMode::kBgp);
      } catch (const std::invalid_argument&) {
        threw = true;
      }
      NS_TEST_ASSERT_MSG_EQ(threw, true, "refused");
    }
  }
};

class FabricRoutesTestSuite : public ns3::TestSuite {
 public:
  FabricRoutesTestSuite() : ns3::TestSuite("mrclab-fabric-routes", UNIT) {
    AddTestCase(new AllUpTestCase, QUICK);
    AddTestCase(new LinkDownTestCase, QUICK);
    AddTestCase(new TieTestCase, QUICK);
    AddTestCase(new ValidationTestCase, QUICK);
  }
};

FabricRoutesTestSuite g_fabric_routes_test_suite;

}  // namespace
}  // namespace mrclab::emulator::sim
