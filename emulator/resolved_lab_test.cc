#include "emulator/resolved_lab.h"
#include "emulator/usid_plan.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace mrclab::emulator {
namespace {

const std::string kLabs = std::string(MRCLAB_SOURCE_DIR) + "/labs/";

ResolvedLab Load(const std::string& file) { return Resolve(ParseLabFile(kLabs + file)); }

ResolvedLab FromText(const std::string& yaml) { return Resolve(ParseLabText(yaml, "t.yaml")); }

std::string ExpectResolveError(const LabSpec& spec, const std::string& field) {
  try {
    Resolve(spec);
  } catch (const LabError& e) {
    EXPECT_EQ(e.file(), spec.source);
    EXPECT_EQ(e.field(), field) << e.what();
    return e.reason();
  }
  ADD_FAILURE() << "Resolve did not throw";
  return "";
}

std::string ExpectResolveError(const std::string& yaml, const std::string& field) {
  return ExpectResolveError(ParseLabText(yaml, "t.yaml"), field);
}

const Route* FindRoute(const ResolvedNode& n, const std::string& prefix) {
  for (const Route& r : n.routes) {
    if (r.prefix == prefix) return &r;
  }
  return nullptr;
}

const std::string kSmallClos =
    "name: t\n"
    "clos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 2, hosts: 4, hosts_per_leaf: 2}\n";

TEST(FormatIpv6Test, CanonicalRfc5952) {
  EXPECT_EQ(FormatIpv6({0, 0, 0, 0, 0, 0, 0, 0}), "::");
  EXPECT_EQ(FormatIpv6({0, 0, 0, 0, 0, 0, 0, 1}), "::1");
  EXPECT_EQ(FormatIpv6({0xfd00, 0, 0, 0, 0, 0, 0, 0}), "fd00::");
  EXPECT_EQ(FormatIpv6({0xfd00, 0, 5, 0, 0, 0, 0, 1}), "fd00:0:5::1");
  EXPECT_EQ(FormatIpv6({0xfd00, 1, 0x1b, 0, 0, 0, 0, 2}), "fd00:1:1b::2");
  EXPECT_EQ(FormatIpv6({0xfcbb, 0, 0x1201, 0x1101, 0x1202, 0x1302, 0, 0}),
            "fcbb:0:1201:1101:1202:1302::");
  EXPECT_EQ(FormatIpv6({1, 0, 1, 0, 1, 0, 1, 0}), "1:0:1:0:1:0:1:0");  // single zeros stay
  EXPECT_EQ(FormatIpv6({1, 0, 0, 1, 0, 0, 1, 1}), "1::1:0:0:1:1");     // leftmost on a tie
  EXPECT_EQ(FormatIpv6({1, 0, 0, 1, 0, 0, 0, 1}), "1:0:0:1::1");       // longest run
  EXPECT_EQ(FormatIpv6({0xABCD, 0x0ff, 1, 2, 3, 4, 5, 6}), "abcd:ff:1:2:3:4:5:6");
}

TEST(UsidTest, HexAddressLocator) {
  EXPECT_EQ(UsidHex(0x1101), "1101");
  EXPECT_EQ(UsidHex(0x2e0a), "2e0a");
  EXPECT_EQ(UsidAddress(0x1101), "fcbb:0:1101::");
  EXPECT_EQ(UsidLocator(0x2203), "fcbb:0:2203::/48");
}

TEST(ResolveTest, ShippedLabCounts) {
  struct Want {
    const char* file;
    int planes, switches, hosts, links, fabric_links;
  };
  for (Want w : {Want{"clos2.yaml", 2, 12, 8, 32, 16}, Want{"clos2-static.yaml", 2, 12, 8, 32, 16},
                 Want{"clos4.yaml", 4, 48, 32, 256, 128}, Want{"clos8.yaml", 8, 96, 64, 768, 256},
                 Want{"mixed.yaml", 2, 9, 5, 20, 10}}) {
    ResolvedLab lab = Load(w.file);
    EXPECT_EQ(lab.planes, w.planes) << w.file;
    EXPECT_EQ(static_cast<int>(lab.Switches().size()), w.switches) << w.file;
    EXPECT_EQ(static_cast<int>(lab.Hosts().size()), w.hosts) << w.file;
    EXPECT_EQ(static_cast<int>(lab.links.size()), w.links) << w.file;
    EXPECT_EQ(lab.ExpectedBgpSessions(), 2 * w.fabric_links) << w.file;
    int fabric = 0;
    for (const ResolvedLink& l : lab.links) fabric += l.fabric;
    EXPECT_EQ(fabric, w.fabric_links) << w.file;
  }
}

TEST(ResolveTest, BfdIntervalGrowsWithTheFabricUnlessTheLabSetsIt) {
  EXPECT_EQ(DefaultBfdIntervalNs(0), 300000000u);
  EXPECT_EQ(DefaultBfdIntervalNs(16), 300000000u);    // clos2: FRR's default
  EXPECT_EQ(DefaultBfdIntervalNs(128), 700000000u);   // clos4: 640 ms, rounded up
  EXPECT_EQ(DefaultBfdIntervalNs(256), 1300000000u);  // clos8
  EXPECT_EQ(Load("clos2.yaml").bfd_interval_ns, 300000000u);
  EXPECT_EQ(Load("clos4.yaml").bfd_interval_ns, 700000000u);
  const std::string small = "name: t\nclos: {planes: 1, spines_per_plane: 1, leaves_per_plane: 2, hosts: 2, hosts_per_leaf: 1}\n";
  EXPECT_EQ(FromText(small + "bfd_interval: 1s\n").bfd_interval_ns, 1000000000u);
  EXPECT_EQ(FromText(small + "bfd_interval: 50ms\n").bfd_interval_ns, 50000000u);
  for (const char* bad : {"5ms", "61s", "fast", "1.5s", "300", "ms"})
    EXPECT_THROW(ParseLabText(small + "bfd_interval: " + bad + "\n", "t.yaml"), LabError) << bad;
}

TEST(ResolveTest, NodeOrderAndNetns) {
  ResolvedLab lab = Load("clos2.yaml");
  std::vector<std::string> names;
  for (const ResolvedNode& n : lab.nodes) names.push_back(n.name);
  std::vector<std::string> want = {"p0-spine0", "p0-spine1", "p0-leaf0",  "p0-leaf1", "p0-leaf2",
                                   "p0-leaf3",  "p1-spine0", "p1-spine1", "p1-leaf0", "p1-leaf1",
                                   "p1-leaf2",  "p1-leaf3",  "host0",     "host1",    "host2",
                                   "host3",     "host4",     "host5",     "host6",    "host7"};
  EXPECT_EQ(names, want);
  const ResolvedNode* leaf = lab.FindNode("p1-leaf2");
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(leaf->netns, "clos2-p1-leaf2");
  EXPECT_EQ(leaf->plane, 1);
  EXPECT_EQ(leaf->index, 2);
  EXPECT_EQ(leaf->role, SwitchRole::kLeaf);
  const ResolvedNode* host = lab.FindNode("host6");
  EXPECT_EQ(host->netns, "clos2-host6");
  EXPECT_EQ(host->plane, -1);
  EXPECT_EQ(host->index, 6);
  EXPECT_EQ(lab.FindNode("nope"), nullptr);
  EXPECT_EQ(lab.name, "clos2");
  EXPECT_EQ(lab.link_rate_bps, 1000000000u);
}

TEST(ResolveTest, LinkAddressing) {
  ResolvedLab lab = Load("clos2.yaml");
  const ResolvedLink& l0 = lab.links[0];
  EXPECT_EQ(l0.subnet, "fd00::/64");
  EXPECT_EQ(l0.a_address, "fd00::1");
  EXPECT_EQ(l0.b_address, "fd00::2");
  EXPECT_TRUE(l0.fabric);
  const ResolvedLink& l5 = lab.links[5];
  EXPECT_EQ(l5.subnet, "fd00:0:5::/64");
  const ResolvedLink& l27 = lab.links[27];  // host3's plane-1 port
  EXPECT_EQ(l27.plane, 1);
  EXPECT_FALSE(l27.fabric);
  EXPECT_EQ(l27.a.node, "p1-leaf1");
  EXPECT_EQ(l27.b.node, "host3");
  EXPECT_EQ(l27.subnet, "fd00:1:1b::/64");
  EXPECT_EQ(l27.a_address, "fd00:1:1b::1");
  EXPECT_EQ(l27.b_address, "fd00:1:1b::2");

  const ResolvedNode* host = lab.FindNode("host3");
  ASSERT_EQ(host->interfaces.size(), 2u);
  const ResolvedInterface& eth1 = host->interfaces[1];
  EXPECT_EQ(eth1.name, "eth1");
  EXPECT_EQ(eth1.link, 27);
  EXPECT_EQ(eth1.plane, 1);
  EXPECT_EQ(eth1.address, "fd00:1:1b::2/64");
  EXPECT_EQ(eth1.peer_node, "p1-leaf1");
  EXPECT_EQ(eth1.peer_interface, "host3");
  EXPECT_EQ(eth1.peer_address, "fd00:1:1b::1");
}

TEST(ResolveTest, InterfacesInLinkOrderAndConsistent) {
  for (const char* file : {"clos2.yaml", "clos4.yaml", "clos8.yaml", "mixed.yaml"}) {
    ResolvedLab lab = Load(file);
    size_t ends = 0;
    for (const ResolvedNode& n : lab.nodes) {
      std::set<std::string> names;
      int last = -1;
      for (const ResolvedInterface& i : n.interfaces) {
        EXPECT_LE(i.name.size(), 15u) << n.name << " " << i.name;
        EXPECT_TRUE(names.insert(i.name).second) << n.name << " " << i.name;
        EXPECT_GT(i.link, last);
        last = i.link;
        const ResolvedLink& l = lab.links[i.link];
        EXPECT_EQ(i.plane, l.plane);
        const ResolvedNode* peer = lab.FindNode(i.peer_node);
        ASSERT_NE(peer, nullptr);
        bool found = false;
        for (const ResolvedInterface& pi : peer->interfaces) {
          if (pi.link == i.link) {
            found = true;
            EXPECT_EQ(pi.name, i.peer_interface);
            EXPECT_EQ(pi.address, i.peer_address + "/64");
            EXPECT_EQ(pi.peer_address + "/64", i.address);
          }
        }
        EXPECT_TRUE(found);
        ++ends;
      }
    }
    EXPECT_EQ(ends, 2 * lab.links.size()) << file;
  }
}

TEST(ResolveTest, AddressesAreUniqueAcrossTheLab) {
  for (const char* file : {"clos2.yaml", "clos4.yaml", "clos8.yaml", "mixed.yaml"}) {
    ResolvedLab lab = Load(file);
    std::set<std::string> addresses, subnets;
    for (const ResolvedLink& l : lab.links) {
      EXPECT_TRUE(subnets.insert(l.subnet).second) << l.subnet;
      EXPECT_TRUE(addresses.insert(l.a_address).second) << l.a_address;
      EXPECT_TRUE(addresses.insert(l.b_address).second) << l.b_address;
      EXPECT_EQ(l.subnet.substr(0, 5), "fd00:");
    }
    for (const ResolvedNode* h : lab.Hosts()) {
      for (const ResolvedNode::Port& p : h->ports) {
        EXPECT_TRUE(addresses.insert(UsidAddress(p.usid)).second);
      }
    }
  }
}

TEST(ResolveTest, AddressesUseThePlaneAndHexLinkIndex) {
  ResolvedLab lab = Load("clos8.yaml");
  const ResolvedLink& last = lab.links.back();
  EXPECT_EQ(last.index, 767);
  EXPECT_EQ(last.plane, 7);
  EXPECT_EQ(last.subnet, "fd00:7:2ff::/64");
  EXPECT_EQ(last.a.node, "p7-leaf7");
  EXPECT_EQ(last.b.node, "host63");
  EXPECT_EQ(last.b.interface, "eth7");
}

TEST(ResolveTest, UsidPlan) {
  ResolvedLab lab = Load("clos2.yaml");
  EXPECT_EQ(lab.FindNode("p0-spine0")->usid, 0x1101);
  EXPECT_EQ(lab.FindNode("p0-spine1")->usid, 0x1102);
  EXPECT_EQ(lab.FindNode("p1-leaf2")->usid, 0x2203);
  EXPECT_EQ(lab.FindNode("p0-leaf0")->usid, 0x1201);
  const ResolvedNode* host6 = lab.FindNode("host6");
  ASSERT_EQ(host6->ports.size(), 2u);
  EXPECT_EQ(host6->ports[0].plane, 0);
  EXPECT_EQ(host6->ports[0].usid, 0x1307);
  EXPECT_EQ(host6->ports[0].interface, "eth0");
  EXPECT_EQ(host6->ports[1].plane, 1);
  EXPECT_EQ(host6->ports[1].usid, 0x2307);
  EXPECT_EQ(host6->ports[1].interface, "eth1");
  EXPECT_EQ(host6->ports[1].address,
            host6->interfaces[1].address.substr(0, host6->interfaces[1].address.find('/')));
  EXPECT_EQ(host6->usid, 0);
  EXPECT_EQ(host6->asn, 0u);
}

TEST(ResolveTest, UsidsAreUnique) {
  for (const char* file : {"clos2.yaml", "clos4.yaml", "clos8.yaml", "mixed.yaml"}) {
    ResolvedLab lab = Load(file);
    std::set<uint16_t> usids;
    for (const ResolvedNode& n : lab.nodes) {
      if (n.kind == NodeKind::kSwitch) {
        EXPECT_TRUE(usids.insert(n.usid).second) << n.name;
        EXPECT_EQ(n.usid >> 12, n.plane + 1);
        EXPECT_EQ((n.usid >> 8) & 0xf, n.role == SwitchRole::kSpine ? 1 : 2);
        EXPECT_EQ(n.usid & 0xff, n.index + 1);
      }
      for (const ResolvedNode::Port& p : n.ports) {
        EXPECT_TRUE(usids.insert(p.usid).second) << n.name;
        EXPECT_EQ(p.usid >> 12, p.plane + 1);
        EXPECT_EQ((p.usid >> 8) & 0xf, 3);
      }
    }
  }
}

// Past 255 of a role, 255 hosts and 65536 links: overflow blocks, leaf-local host-port uSIDs
// (usid_plan.h) and the link index's high half in the address's fourth group.
TEST(ResolveTest, WidePlanPastTheSmallLimits) {
  ResolvedLab lab = Resolve(ParseLabText(
      "name: wide\nclos: {planes: 2, spines_per_plane: 300, leaves_per_plane: 300, hosts: 600, hosts_per_leaf: 2}\n",
      "wide.yaml"));
  EXPECT_TRUE(lab.host_usids_leaf_local);
  EXPECT_EQ(lab.FindNode("p0-spine254")->usid, 0x11ff);
  EXPECT_EQ(lab.FindNode("p0-spine255")->usid, 0x1400);
  EXPECT_EQ(lab.FindNode("p1-leaf299")->usid, 0x2800 + 44);
  EXPECT_EQ(lab.FindNode("p1-leaf299")->router_id, "10.1.6.43");  // leaf 299 = 256 + 43
  std::set<uint16_t> switch_usids;
  for (const ResolvedNode* n : lab.Switches()) {
    EXPECT_TRUE(switch_usids.insert(n->usid).second) << n->name;
    EXPECT_FALSE(IsLeafLocalUsid(n->usid)) << n->name;
  }
  // host3 is the second host of p0-leaf1 (and of p1-leaf1).
  const ResolvedNode* host3 = lab.FindNode("host3");
  EXPECT_EQ(host3->ports[0].usid, 0x1c01);
  EXPECT_EQ(host3->ports[1].usid, 0x2c01);
  EXPECT_EQ(lab.FindNode("host2")->ports[0].usid, 0x1c00);
  // Only the leaf routes its hosts' local uSIDs.
  std::vector<std::string> leaf_usid_routes;
  for (const Route& r : lab.FindNode("p0-leaf1")->routes) leaf_usid_routes.push_back(r.prefix);
  EXPECT_EQ(leaf_usid_routes, (std::vector<std::string>{"fcbb:0:1c00::/48", "fcbb:0:1c01::/48"}));
  const ResolvedLink& far = lab.links.at(70000);  // 0x11170
  EXPECT_EQ(far.subnet, "fd00:0:1170:1::/64");
  EXPECT_EQ(far.a_address, "fd00:0:1170:1::1");
  EXPECT_EQ(lab.links.back().subnet, "fd00:1:c3cf:2::/64");  // 180000 + 1199 = 0x2c3cf
  const UsidPath path = lab.PathVia("host0", "p0-leaf0", "p0-spine299", "p0-leaf1", "host3");
  EXPECT_EQ(path.destination, "fcbb:0:1201:142c:1202:1c01::");
}

TEST(ResolveTest, RoutesCanBeSkipped) {
  ResolvedLab lab = Resolve(ParseLabText(kSmallClos, "t.yaml"), {.routes = false});
  for (const ResolvedNode& n : lab.nodes) EXPECT_TRUE(n.routes.empty()) << n.name;
  EXPECT_EQ(lab.SpineProofPaths().size(), Resolve(ParseLabText(kSmallClos, "t.yaml")).SpineProofPaths().size());
}

TEST(ResolveTest, HostPortsOnePerPlane) {
  ResolvedLab lab = Load("clos8.yaml");
  for (const ResolvedNode* h : lab.Hosts()) {
    ASSERT_EQ(h->ports.size(), 8u) << h->name;
    for (int p = 0; p < 8; ++p) {
      EXPECT_EQ(h->ports[p].plane, p);
      EXPECT_EQ(h->ports[p].interface, "eth" + std::to_string(p));
    }
  }
}

TEST(ResolveTest, AsnPlanAndRouterIds) {
  ResolvedLab lab = Load("clos4.yaml");
  std::map<uint32_t, std::string> leaf_asns;
  for (const ResolvedNode* n : lab.Switches()) {
    uint32_t plane_base = 4200000000u + static_cast<uint32_t>(n->plane) * 100000u;
    if (n->role == SwitchRole::kSpine) {
      EXPECT_EQ(n->asn, plane_base) << n->name;
      EXPECT_EQ(n->router_id, "10." + std::to_string(n->plane) + ".1." + std::to_string(n->index));
    } else {
      EXPECT_EQ(n->asn, plane_base + 10000u + static_cast<uint32_t>(n->index)) << n->name;
      EXPECT_TRUE(leaf_asns.emplace(n->asn, n->name).second) << n->name;
      EXPECT_EQ(n->router_id, "10." + std::to_string(n->plane) + ".2." + std::to_string(n->index));
    }
  }
  EXPECT_EQ(leaf_asns.size(), 32u);
  EXPECT_EQ(lab.FindNode("p3-spine2")->asn, 4200300000u);
  EXPECT_EQ(lab.FindNode("p3-leaf7")->asn, 4200310007u);
  EXPECT_EQ(lab.FindNode("p3-leaf7")->router_id, "10.3.2.7");
  EXPECT_NE(lab.FindNode("p0-spine0")->asn, lab.FindNode("p1-spine0")->asn);
}

TEST(ResolveTest, HostRoutes) {
  for (const char* file : {"clos2.yaml", "clos2-static.yaml"}) {
    ResolvedLab lab = Load(file);
    const ResolvedNode* host = lab.FindNode("host3");
    ASSERT_EQ(host->routes.size(), 4u);
    // Sorted by prefix: fcbb... before fd00...
    EXPECT_EQ(host->routes[0].prefix, "fcbb:0:1000::/36");
    EXPECT_EQ(host->routes[1].prefix, "fcbb:0:2000::/36");
    EXPECT_EQ(host->routes[2].prefix, "fd00::/32");
    EXPECT_EQ(host->routes[3].prefix, "fd00:1::/32");
    for (int i : {0, 2}) {
      ASSERT_EQ(host->routes[i].next_hops.size(), 1u);
      EXPECT_EQ(host->routes[i].next_hops[0].address, "fd00:0:13::1");
      EXPECT_EQ(host->routes[i].next_hops[0].interface, "eth0");
    }
    for (int i : {1, 3}) {
      ASSERT_EQ(host->routes[i].next_hops.size(), 1u);
      EXPECT_EQ(host->routes[i].next_hops[0].address, "fd00:1:1b::1");
      EXPECT_EQ(host->routes[i].next_hops[0].interface, "eth1");
    }
  }
}

TEST(ResolveTest, BgpModeLeavesRouteOnlyTheirHostsUsids) {
  ResolvedLab lab = Load("clos2.yaml");
  for (const ResolvedNode* n : lab.Switches()) {
    if (n->role == SwitchRole::kSpine) {
      EXPECT_TRUE(n->routes.empty()) << n->name;
      continue;
    }
    ASSERT_EQ(n->routes.size(), 2u) << n->name;  // 2 hosts per leaf
  }
  const ResolvedNode* leaf = lab.FindNode("p1-leaf1");
  ASSERT_EQ(leaf->routes.size(), 2u);
  EXPECT_EQ(leaf->routes[0].prefix, "fcbb:0:2303::/48");
  ASSERT_EQ(leaf->routes[0].next_hops.size(), 1u);
  EXPECT_EQ(leaf->routes[0].next_hops[0].address, "fd00:1:1a::2");
  EXPECT_EQ(leaf->routes[0].next_hops[0].interface, "host2");
  EXPECT_EQ(leaf->routes[1].prefix, "fcbb:0:2304::/48");
  EXPECT_EQ(leaf->routes[1].next_hops[0].address, "fd00:1:1b::2");
  EXPECT_EQ(leaf->routes[1].next_hops[0].interface, "host3");
}

TEST(ResolveTest, StaticRoutesReachEveryLocatorOfThePlane) {
  for (const char* file : {"clos2-static.yaml", "mixed.yaml"}) {
    LabSpec spec = ParseLabFile(kLabs + file);
    spec.routing = Routing::kStatic;
    ResolvedLab lab = Resolve(spec);
    for (const ResolvedNode* s : lab.Switches()) {
      for (const ResolvedNode* t : lab.Switches()) {
        const Route* r = FindRoute(*s, UsidLocator(t->usid));
        if (s == t || s->plane != t->plane) {
          EXPECT_EQ(r, nullptr) << s->name << " -> " << t->name;
        } else {
          ASSERT_NE(r, nullptr) << s->name << " -> " << t->name;
          EXPECT_FALSE(r->next_hops.empty());
        }
      }
      for (const ResolvedNode* h : lab.Hosts()) {
        for (const ResolvedNode::Port& p : h->ports) {
          const Route* r = FindRoute(*s, UsidLocator(p.usid));
          EXPECT_EQ(r != nullptr, p.plane == s->plane) << s->name << " -> " << h->name;
        }
      }
    }
  }
}

TEST(ResolveTest, StaticRoutesEcmpOnLeafToAllSpines) {
  ResolvedLab lab = Load("clos4.yaml");
  LabSpec spec = ParseLabFile(kLabs + "clos4.yaml");
  spec.routing = Routing::kStatic;
  lab = Resolve(spec);
  const ResolvedNode* leaf = lab.FindNode("p2-leaf0");
  const ResolvedNode* remote = lab.FindNode("p2-leaf5");
  const Route* r = FindRoute(*leaf, UsidLocator(remote->usid));
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->next_hops.size(), 4u);
  std::set<std::string> ifs;
  for (const NextHop& h : r->next_hops) {
    ifs.insert(h.interface);
    bool is_spine_address = false;
    for (const ResolvedInterface& i : leaf->interfaces) {
      if (i.name == h.interface) is_spine_address = i.peer_address == h.address;
    }
    EXPECT_TRUE(is_spine_address) << h.address;
  }
  EXPECT_EQ(ifs, (std::set<std::string>{"spine0", "spine1", "spine2", "spine3"}));
  // Next hops sorted by address.
  for (size_t i = 1; i < r->next_hops.size(); ++i) {
    EXPECT_LT(r->next_hops[i - 1].interface, r->next_hops[i].interface);
  }
  // A spine reaches a leaf in one hop.
  const Route* down = FindRoute(*lab.FindNode("p2-spine1"), UsidLocator(remote->usid));
  ASSERT_NE(down, nullptr);
  ASSERT_EQ(down->next_hops.size(), 1u);
  EXPECT_EQ(down->next_hops[0].interface, "leaf5");
  // A leaf reaches a spine directly.
  const Route* up = FindRoute(*leaf, UsidLocator(lab.FindNode("p2-spine3")->usid));
  ASSERT_NE(up, nullptr);
  ASSERT_EQ(up->next_hops.size(), 1u);
  EXPECT_EQ(up->next_hops[0].interface, "spine3");
}

TEST(ResolveTest, StaticRoutesToHostSubnetsAndUsids) {
  LabSpec spec = ParseLabFile(kLabs + "clos2-static.yaml");
  ResolvedLab lab = Resolve(spec);
  const ResolvedNode* leaf = lab.FindNode("p0-leaf0");
  // Directly attached host: uSID via the host's link address, no subnet route.
  const Route* own = FindRoute(*leaf, "fcbb:0:1302::/48");
  ASSERT_NE(own, nullptr);
  ASSERT_EQ(own->next_hops.size(), 1u);
  EXPECT_EQ(own->next_hops[0].address, "fd00:0:11::2");
  EXPECT_EQ(own->next_hops[0].interface, "host1");
  EXPECT_EQ(FindRoute(*leaf, "fd00:0:11::/64"), nullptr);
  // Remote host (host5 on p0-leaf2, link 21 = 0x15): via both spines.
  const Route* subnet = FindRoute(*leaf, "fd00:0:15::/64");
  ASSERT_NE(subnet, nullptr);
  EXPECT_EQ(subnet->next_hops.size(), 2u);
  const Route* usid = FindRoute(*leaf, "fcbb:0:1306::/48");
  ASSERT_NE(usid, nullptr);
  EXPECT_EQ(usid->next_hops.size(), 2u);
  // Fabric subnets are connected or not routed; other planes are never routed.
  for (const ResolvedNode* s : lab.Switches()) {
    for (const Route& r : s->routes) {
      for (const ResolvedLink& l : lab.links) {
        if (l.fabric) {
          EXPECT_NE(r.prefix, l.subnet);
        }
      }
      std::string plane = std::to_string(s->plane);
      bool in_plane = r.prefix.rfind("fd00:" + plane + ":", 0) == 0 ||
                      r.prefix.rfind("fcbb:0:" + std::to_string(s->plane + 1), 0) == 0;
      EXPECT_TRUE(in_plane) << s->name << " " << r.prefix;
    }
    // Sorted by prefix, no duplicates.
    for (size_t i = 1; i < s->routes.size(); ++i) {
      EXPECT_NE(s->routes[i - 1].prefix, s->routes[i].prefix);
    }
  }
  // Per leaf of clos2-static: 5 other locators + 8 host uSIDs + 6 remote host subnets.
  EXPECT_EQ(leaf->routes.size(), 5u + 8u + 6u);
  // Per spine: 5 other locators + 8 host uSIDs + 8 host subnets.
  EXPECT_EQ(lab.FindNode("p1-spine0")->routes.size(), 5u + 8u + 8u);
}

TEST(ResolveTest, MixedLabExplicitNodes) {
  ResolvedLab lab = Load("mixed.yaml");
  const ResolvedNode* edge = lab.FindNode("edge0");
  ASSERT_NE(edge, nullptr);
  EXPECT_EQ(edge->role, SwitchRole::kLeaf);  // inferred from its host link
  EXPECT_EQ(edge->plane, 0);
  EXPECT_EQ(edge->index, 2);  // after p0-leaf0, p0-leaf1
  EXPECT_EQ(edge->usid, 0x1203);
  EXPECT_EQ(edge->asn, 4200010002u);
  EXPECT_EQ(edge->router_id, "10.0.2.2");
  // Switches stay ordered by plane and role: edge0 follows p0-leaf1.
  EXPECT_EQ(lab.nodes[4].name, "edge0");
  EXPECT_EQ(lab.nodes[5].name, "p1-spine0");
  const ResolvedNode* storage = lab.FindNode("storage0");
  ASSERT_NE(storage, nullptr);
  EXPECT_EQ(storage->index, 4);
  ASSERT_EQ(storage->ports.size(), 2u);
  EXPECT_EQ(storage->ports[0].usid, 0x1305);
  EXPECT_EQ(storage->ports[1].usid, 0x2305);
  EXPECT_EQ(lab.nodes.back().name, "storage0");
  UsidPath p = lab.PathVia("host0", "p0-leaf0", "p0-spine1", "edge0", "storage0");
  EXPECT_EQ(p.destination, "fcbb:0:1201:1102:1203:1305::");
}

TEST(ResolveTest, SpineProofPathsCoverEverySpine) {
  for (const char* file : {"clos2.yaml", "clos4.yaml", "clos8.yaml", "mixed.yaml"}) {
    ResolvedLab lab = Load(file);
    std::vector<UsidPath> paths = lab.SpineProofPaths();
    std::set<std::string> spines;
    for (const UsidPath& p : paths) {
      EXPECT_TRUE(spines.insert(p.spine).second);
      EXPECT_NE(p.leaf_a, p.leaf_b) << file;
      EXPECT_NE(p.src_host, p.dst_host) << file;
      EXPECT_EQ(lab.FindNode(p.spine)->plane, p.plane);
      UsidPath again = lab.PathVia(p.src_host, p.leaf_a, p.spine, p.leaf_b, p.dst_host);
      EXPECT_EQ(again.destination, p.destination);
    }
    int n_spines = 0;
    for (const ResolvedNode* s : lab.Switches()) n_spines += s->role == SwitchRole::kSpine;
    EXPECT_EQ(static_cast<int>(paths.size()), n_spines) << file;
  }
  ResolvedLab lab = Load("clos2.yaml");
  std::vector<UsidPath> paths = lab.SpineProofPaths();
  ASSERT_EQ(paths.size(), 4u);
  EXPECT_EQ(paths[0].plane, 0);
  EXPECT_EQ(paths[0].spine, "p0-spine0");
  EXPECT_EQ(paths[0].leaf_a, "p0-leaf0");
  EXPECT_EQ(paths[0].leaf_b, "p0-leaf1");
  EXPECT_EQ(paths[0].src_host, "host0");
  EXPECT_EQ(paths[0].dst_host, "host2");
  EXPECT_EQ(paths[0].destination, "fcbb:0:1201:1101:1202:1303::");
  EXPECT_EQ(paths[3].spine, "p1-spine1");
  EXPECT_EQ(paths[3].leaf_a, "p1-leaf1");
  EXPECT_EQ(paths[3].leaf_b, "p1-leaf2");
  EXPECT_EQ(paths[3].destination, "fcbb:0:2202:2102:2203:2305::");
}

TEST(ResolveTest, SpineProofPathOnASingleLeaf) {
  ResolvedLab lab = FromText(
      "name: t\nclos: {planes: 1, spines_per_plane: 2, leaves_per_plane: 1, hosts: 2, "
      "hosts_per_leaf: 2}\n");
  std::vector<UsidPath> paths = lab.SpineProofPaths();
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[1].leaf_a, "p0-leaf0");
  EXPECT_EQ(paths[1].leaf_b, "p0-leaf0");
  EXPECT_EQ(paths[1].src_host, "host0");
  EXPECT_EQ(paths[1].dst_host, "host1");
  EXPECT_EQ(paths[1].destination, "fcbb:0:1201:1102:1201:1302::");
}

TEST(ResolveTest, PathViaChecksAdjacency) {
  ResolvedLab lab = Load("clos2.yaml");
  UsidPath p = lab.PathVia("host1", "p1-leaf0", "p1-spine1", "p1-leaf3", "host7");
  EXPECT_EQ(p.plane, 1);
  EXPECT_EQ(p.destination, "fcbb:0:2201:2102:2204:2308::");
  EXPECT_EQ(p.src_host, "host1");
  EXPECT_EQ(p.dst_host, "host7");
  // host2 is not on p1-leaf0.
  EXPECT_THROW(lab.PathVia("host2", "p1-leaf0", "p1-spine1", "p1-leaf3", "host7"),
               std::invalid_argument);
  // Planes never meet.
  EXPECT_THROW(lab.PathVia("host1", "p1-leaf0", "p0-spine1", "p1-leaf3", "host7"),
               std::invalid_argument);
  // Roles matter.
  EXPECT_THROW(lab.PathVia("host1", "p1-leaf0", "p1-leaf1", "p1-leaf3", "host7"),
               std::invalid_argument);
  EXPECT_THROW(lab.PathVia("host1", "p1-leaf0", "p1-spine1", "p1-leaf3", "p1-leaf3"),
               std::invalid_argument);
  EXPECT_THROW(lab.PathVia("nobody", "p1-leaf0", "p1-spine1", "p1-leaf3", "host7"),
               std::invalid_argument);
}

TEST(ResolveTest, ToJsonIsCompleteAndStable) {
  ResolvedLab lab = Load("clos2-static.yaml");
  nlohmann::json j = lab.ToJson();
  EXPECT_EQ(j.dump(), Load("clos2-static.yaml").ToJson().dump());
  EXPECT_EQ(j["name"], "clos2-static");
  EXPECT_EQ(j["routing"], "static");
  EXPECT_EQ(j["link_rate_bps"], 1000000000u);
  EXPECT_EQ(j["plane_count"], 2);
  EXPECT_EQ(j["expected_bgp_sessions"], 32);
  ASSERT_EQ(j["planes"].size(), 2u);
  EXPECT_EQ(j["planes"][1]["prefix"], "fd00:1::/32");
  EXPECT_EQ(j["planes"][1]["usid_prefix"], "fcbb:0:2000::/36");
  EXPECT_EQ(j["planes"][1]["spines"].size(), 2u);
  EXPECT_EQ(j["planes"][1]["leaves"].size(), 4u);
  EXPECT_EQ(j["planes"][1]["hosts"].size(), 8u);
  ASSERT_EQ(j["nodes"].size(), 20u);
  ASSERT_EQ(j["links"].size(), 32u);
  const nlohmann::json& spine = j["nodes"][0];
  EXPECT_EQ(spine["name"], "p0-spine0");
  EXPECT_EQ(spine["kind"], "switch");
  EXPECT_EQ(spine["role"], "spine");
  EXPECT_EQ(spine["netns"], "clos2-static-p0-spine0");
  EXPECT_EQ(spine["asn"], 4200000000u);
  EXPECT_EQ(spine["router_id"], "10.0.1.0");
  EXPECT_EQ(spine["usid"], "1101");
  EXPECT_EQ(spine["locator"], "fcbb:0:1101::/48");
  EXPECT_EQ(spine["interfaces"].size(), 4u);
  EXPECT_FALSE(spine["routes"].empty());
  EXPECT_TRUE(spine["routes"][0].contains("next_hops"));
  const nlohmann::json& host = j["nodes"][19];
  EXPECT_EQ(host["name"], "host7");
  EXPECT_EQ(host["kind"], "host");
  EXPECT_FALSE(host.contains("asn"));
  ASSERT_EQ(host["ports"].size(), 2u);
  EXPECT_EQ(host["ports"][1]["usid"], "2308");
  EXPECT_EQ(host["ports"][1]["usid_address"], "fcbb:0:2308::");
  EXPECT_EQ(j["links"][0]["subnet"], "fd00::/64");
  EXPECT_EQ(j["links"][0]["a"]["node"], "p0-leaf0");
  EXPECT_EQ(j["links"][0]["b"]["address"], "fd00::2");
  EXPECT_EQ(j["spine_proof_paths"].size(), 4u);

  LabSpec spec = ParseLabText(kSmallClos, "t.yaml");
  EXPECT_TRUE(Resolve(spec).ToJson()["link_rate_bps"].is_null());
}

// --- Impossible plans ---

TEST(ResolveTest, DumpJsonWritesToJsonsTextInPieces) {
  std::vector<ResolvedLab> labs;
  for (const char* file : {"clos2.yaml", "clos2-static.yaml", "clos4.yaml", "mixed.yaml", "vm-side-by-side.yaml"})
    labs.push_back(Load(file));
  // Leaf-local host uSIDs, a lab name and source that need escaping, no link rate.
  labs.push_back(Resolve(ParseLabText(
      "name: wide\nclos: {planes: 3, spines_per_plane: 2, leaves_per_plane: 130, hosts: 260, hosts_per_leaf: 2}\n",
      "dir \"q\"\\wide.yaml")));
  for (const ResolvedLab& lab : labs) {
    std::string text;
    size_t pieces = 0;
    lab.DumpJson([&](std::string_view piece) { text += piece, ++pieces; });
    EXPECT_EQ(text, lab.ToJson().dump()) << lab.name;
    EXPECT_GT(pieces, lab.nodes.size() + lab.links.size()) << lab.name;  // one node or link at a time
    nlohmann::json summary = lab.SummaryJson();
    EXPECT_FALSE(summary.contains("nodes") || summary.contains("links") || summary.contains("spine_proof_paths"));
    EXPECT_EQ(summary["planes"], lab.ToJson()["planes"]) << lab.name;
  }
}

TEST(ResolveErrorTest, PlanesNeverMeet) {
  std::string reason = ExpectResolveError(
      kSmallClos + "links: [{endpoints: [p0-leaf0:x, p1-spine0:x]}]\n", "links[16]");
  EXPECT_NE(reason.find("planes never meet"), std::string::npos);
}

TEST(ResolveErrorTest, HostWithTwoPortsInOnePlane) {
  std::string reason = ExpectResolveError(
      kSmallClos + "links: [{endpoints: [p0-leaf1:extra, host0:eth9]}]\n", "nodes.host0");
  EXPECT_NE(reason.find("plane 0"), std::string::npos);
}

TEST(ResolveErrorTest, HostWithoutPort) {
  ExpectResolveError(kSmallClos + "nodes: {lonely: {kind: host}}\n", "nodes.lonely");
}

TEST(ResolveErrorTest, PlaneWithLeavesButNoSpines) {
  std::string reason = ExpectResolveError(
      "name: t\nnodes:\n  l: {kind: switch, plane: 3}\n  h: {kind: host}\n"
      "links: [{endpoints: [l:h, h:eth0]}]\n",
      "nodes.l");
  EXPECT_NE(reason.find("no spines"), std::string::npos);
}

TEST(ResolveErrorTest, SpineWithHostPorts) {
  ExpectResolveError(kSmallClos +
                         "nodes:\n  s: {kind: switch, role: spine}\n  h: {kind: host}\n"
                         "links: [{endpoints: [s:h, h:eth0]}]\n",
                     "nodes.s.role");
}

TEST(ResolveErrorTest, TooManyPlanes) {
  LabSpec spec = ParseLabText(kSmallClos, "t.yaml");
  spec.nodes.push_back({"far", NodeKind::kSwitch, 15, SwitchRole::kSpine});
  ExpectResolveError(spec, "nodes.far.plane");
  LabSpec clos = ParseLabText(kSmallClos, "t.yaml");
  clos.clos->planes = 16;
  ExpectResolveError(clos, "clos.planes");
}

TEST(ResolveErrorTest, TooManyOfARoleInAPlane) {
  LabSpec spec;
  spec.name = "t";
  spec.source = "big.yaml";
  spec.nodes.push_back({"s", NodeKind::kSwitch, 0, SwitchRole::kSpine});
  for (int i = 0; i < 1280; ++i) {
    spec.nodes.push_back({"l" + std::to_string(i), NodeKind::kSwitch, 0, SwitchRole::kLeaf});
  }
  std::string reason = ExpectResolveError(spec, "nodes.l1279");
  EXPECT_NE(reason.find("1279"), std::string::npos);
  spec.nodes.pop_back();
  EXPECT_NO_THROW(Resolve(spec));
}

// One leaf with `hosts` hosts: beyond 255 hosts their ports are leaf-local, at most 1024.
LabSpec OneLeaf(int hosts) {
  LabSpec spec;
  spec.name = "t";
  spec.source = "big.yaml";
  spec.nodes.push_back({"s", NodeKind::kSwitch, 0, SwitchRole::kSpine});
  spec.nodes.push_back({"l", NodeKind::kSwitch, 0, SwitchRole::kLeaf});
  spec.links.push_back({{"l", "s"}, {"s", "l"}});
  for (int i = 0; i < hosts; ++i) {
    std::string h = "h" + std::to_string(i);
    spec.nodes.push_back({h, NodeKind::kHost, std::nullopt, std::nullopt});
    spec.links.push_back({{"l", h}, {h, "eth0"}});
  }
  return spec;
}

TEST(ResolveErrorTest, TooManyHostPortsOnALeaf) {
  std::string reason = ExpectResolveError(OneLeaf(1025), "nodes.l");
  EXPECT_NE(reason.find("1024 host ports"), std::string::npos);
  EXPECT_NO_THROW(Resolve(OneLeaf(1024), {.routes = false}));
}

TEST(ResolveErrorTest, InterfaceNameTooLong) {
  LabSpec spec = ParseLabText(kSmallClos, "t.yaml");
  spec.links[0].a.interface = "a-very-long-ifname";
  ExpectResolveError(spec, "links[0].endpoints[0]");
}

TEST(ResolveErrorTest, HandBuiltSpecsAreChecked) {
  LabSpec spec = ParseLabText(kSmallClos, "t.yaml");
  spec.links.push_back({{"p0-leaf0", "x"}, {"ghost", "x"}});
  ExpectResolveError(spec, "links[16].endpoints[1]");
  spec.links.back() = {{"p0-leaf0", "spine0"}, {"p0-spine0", "y"}};
  ExpectResolveError(spec, "links[16].endpoints[0]");
  spec.links.back() = {{"p0-leaf0", "y"}, {"p0-leaf0", "z"}};
  ExpectResolveError(spec, "links[16].endpoints");
  spec.links.back() = {{"host0", "y"}, {"host1", "z"}};
  ExpectResolveError(spec, "links[16].endpoints");
  spec.links.pop_back();
  spec.nodes.push_back(spec.nodes[0]);
  ExpectResolveError(spec, "nodes.p0-spine0");
  LabSpec empty;
  empty.name = "t";
  empty.source = "e.yaml";
  ExpectResolveError(empty, "nodes");
}

}  // namespace
}  // namespace mrclab::emulator

namespace mrclab::emulator {
namespace {

TEST(ResolveSysctls, SelectorsPickNodesAndLaterEntriesWin) {
  const ResolvedLab lab = FromText(
      "name: t\nclos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 2, hosts: 4, hosts_per_leaf: 2}\n"
      "sysctls:\n"
      "  - set: {net.ipv6.neigh.default.gc_thresh3: 8192}\n"
      "  - match: {role: leaf, plane: 0}\n    set: {net.ipv6.fib_multipath_hash_policy: 0}\n"
      "  - match: {node: p0-leaf1}\n    set: {net.ipv6.fib_multipath_hash_policy: 2}\n"
      "  - match: {kind: host}\n    set: {net.ipv6.conf.all.accept_ra: 0}\n");
  auto keys = [&](const std::string& node) {
    std::vector<std::string> out;
    for (const auto& s : lab.FindNode(node)->sysctls) out.push_back(s.key + "=" + s.value);
    return out;
  };
  EXPECT_EQ(keys("p0-spine0"), std::vector<std::string>{"net.ipv6.neigh.default.gc_thresh3=8192"});
  EXPECT_EQ(keys("p1-leaf0"), std::vector<std::string>{"net.ipv6.neigh.default.gc_thresh3=8192"});
  EXPECT_EQ(keys("p0-leaf1"), (std::vector<std::string>{"net.ipv6.neigh.default.gc_thresh3=8192",
                                                        "net.ipv6.fib_multipath_hash_policy=0",
                                                        "net.ipv6.fib_multipath_hash_policy=2"}));
  EXPECT_EQ(keys("host0"), (std::vector<std::string>{"net.ipv6.neigh.default.gc_thresh3=8192",
                                                     "net.ipv6.conf.all.accept_ra=0"}));
  EXPECT_EQ(lab.FindNode("p0-leaf1")->sysctls[2].field, "sysctls[2].set.net.ipv6.fib_multipath_hash_policy");
  // The plan shows what each node gets, the later value of a key winning.
  const nlohmann::json j = lab.ToJson();
  for (const auto& n : j["nodes"]) {
    if (n["name"] == "p0-leaf1") {
      EXPECT_EQ(n["sysctls"]["net.ipv6.fib_multipath_hash_policy"], "2");
    }
  }
}

TEST(ResolveSysctls, ErrorsNameTheField) {
  const std::string base =
      "name: t\nclos: {planes: 1, spines_per_plane: 1, leaves_per_plane: 1, hosts: 1, hosts_per_leaf: 1}\n";
  auto error = [&](const std::string& extra) {
    try {
      FromText(base + extra);
    } catch (const LabError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("sysctls:\n  - set: {kernel.pid_max: 1}\n"),
            "t.yaml: sysctls[0].set.kernel.pid_max: only net.* settings are per network namespace; this one "
            "would change the whole machine");
  EXPECT_EQ(error("sysctls:\n  - match: {plane: 3}\n    set: {net.core.somaxconn: 1}\n"),
            "t.yaml: sysctls[0].match: matches no node of the lab");
  EXPECT_EQ(error("sysctls:\n  - match: {node: nope}\n    set: {net.core.somaxconn: 1}\n"),
            "t.yaml: sysctls[0].match.node: unknown node 'nope'");
  EXPECT_EQ(error("sysctls:\n  - match: {role: core}\n    set: {net.core.somaxconn: 1}\n"),
            "t.yaml: sysctls[0].match.role: 'core' must be spine or leaf");
  EXPECT_EQ(error("sysctls:\n  - set: {}\n"),
            "t.yaml: sysctls[0].set: expected a non-empty mapping of net.* settings to values");
  EXPECT_EQ(error("sysctls:\n  - set: {net.core.somaxconn: \"1/../x\"}\n"),
            "t.yaml: sysctls[0].set.net.core.somaxconn: the value must be one line of at most 256 characters "
            "without '/'");
  EXPECT_EQ(error("sysctls: {net.core.somaxconn: 1}\n"),
            "t.yaml: sysctls: expected a list of {match, set}, got a mapping");
}

}  // namespace
}  // namespace mrclab::emulator

namespace mrclab::emulator {
namespace {

// A lab with frr_config whose files are in a folder of the test's own.
class ResolveFrrConfigs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("frr-config-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "spine.j2") << "{{ generated }}\n";
    std::ofstream(dir_ / "leaf.conf") << "hostname x\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  ResolvedLab Lab(const std::string& entries, bool check_files = true) const {
    return Resolve(ParseLabText(
        "name: t\nclos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 2, hosts: 4, hosts_per_leaf: 2}\n"
        "frr_config:\n" + entries,
        "t.yaml", {.files_dir = dir_.string(), .check_files = check_files}));
  }
  std::string Error(const std::string& entries) const {
    try {
      Lab(entries);
    } catch (const LabError& e) {
      return e.what();
    }
    return "no error";
  }
  std::filesystem::path dir_;
};

TEST_F(ResolveFrrConfigs, SelectorsPickSwitchesAndLaterEntriesWin) {
  const ResolvedLab lab = Lab("  - {match: {role: spine}, template: spine.j2}\n"
                              "  - {match: {plane: 1}, file: leaf.conf}\n");
  const auto& spine0 = lab.FindNode("p0-spine0")->frr_config;
  ASSERT_TRUE(spine0);
  EXPECT_TRUE(spine0->is_template);
  EXPECT_EQ(spine0->path, (dir_ / "spine.j2").string());
  EXPECT_EQ(spine0->field, "frr_config[0].template");
  EXPECT_FALSE(lab.FindNode("p0-leaf0")->frr_config);            // none matches: generated
  EXPECT_FALSE(lab.FindNode("p1-spine0")->frr_config->is_template);  // both match: the later wins
  EXPECT_EQ(lab.FindNode("p1-leaf1")->frr_config->field, "frr_config[1].file");
  EXPECT_FALSE(lab.FindNode("host0")->frr_config);                 // plane: switches only
  for (const auto& n : lab.ToJson()["nodes"]) {
    if (n["name"] == "p0-spine0") {
      EXPECT_EQ(n["frr_config"]["template"], (dir_ / "spine.j2").string());
    }
  }
}

TEST_F(ResolveFrrConfigs, ErrorsNameTheField) {
  EXPECT_EQ(Error("  - {template: nope.j2}\n"),
            "t.yaml: frr_config[0].template: 'nope.j2': no such file (" + (dir_ / "nope.j2").string() + ")");
  EXPECT_EQ(Error("  - {match: {node: host0}, file: leaf.conf}\n"), "t.yaml: frr_config[0].match: matches no switch of the lab");
  EXPECT_EQ(Error("  - {match: {role: leaf}}\n"),
            "t.yaml: frr_config[0]: give either template (a Jinja2 template of frr.conf) or file (a plain frr.conf)");
  EXPECT_EQ(Error("  - {match: {role: leaf}, file: leaf.conf, mode: x}\n").rfind("t.yaml: frr_config[0].mode: unknown key", 0),
            0u);
  // A deployed lab's saved text: its files were read at deploy, and need not be there any more.
  EXPECT_EQ(Lab("  - {template: gone.j2}\n", false).FindNode("p0-leaf0")->frr_config->path, (dir_ / "gone.j2").string());
}

// Switches from router images (images:): tags as given, archives found next to the lab file.
class ResolveImages : public ResolveFrrConfigs {
 protected:
  ResolvedLab ImageLab(const std::string& entries) const {
    return Resolve(ParseLabText(
        "name: t\nclos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 2, hosts: 4, hosts_per_leaf: 2}\n"
        "images:\n" + entries,
        "t.yaml", {.files_dir = dir_.string()}));
  }
  std::string ImageError(const std::string& entries) const {
    try {
      ImageLab(entries);
    } catch (const LabError& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(ResolveImages, SelectorsPickSwitchesAndLaterEntriesWin) {
  std::ofstream(dir_ / "router.tar") << "x";
  const ResolvedLab lab = ImageLab("  - {image: mrclab/frr:trixie}\n"
                                   "  - {match: {plane: 1, role: leaf}, archive: router.tar}\n");
  ASSERT_TRUE(lab.FindNode("p0-spine0")->image);
  EXPECT_EQ(lab.FindNode("p0-spine0")->image->reference, "mrclab/frr:trixie");
  EXPECT_EQ(lab.FindNode("p0-spine0")->image->field, "images[0].image");
  const auto& leaf = lab.FindNode("p1-leaf1")->image;
  ASSERT_TRUE(leaf);
  EXPECT_TRUE(leaf->is_archive);
  EXPECT_EQ(leaf->reference, (dir_ / "router.tar").string());
  EXPECT_EQ(leaf->field, "images[1].archive");
  EXPECT_FALSE(lab.FindNode("host0")->image);  // hosts never
  for (const auto& n : lab.ToJson()["nodes"])
    if (n["name"] == "p0-leaf0") {
      EXPECT_EQ(n["image"]["image"], "mrclab/frr:trixie");
    }
}

TEST_F(ResolveImages, ErrorsNameTheField) {
  EXPECT_EQ(ImageError("  - {archive: nope.tar}\n"),
            "t.yaml: images[0].archive: 'nope.tar': no such file (" + (dir_ / "nope.tar").string() + ")");
  EXPECT_EQ(ImageError("  - {match: {role: leaf}}\n"),
            "t.yaml: images[0]: give either image (a tag: mrclab image list) or archive (a podman save file)");
  EXPECT_EQ(ImageError("  - {image: 'Bad Name'}\n"),
            "t.yaml: images[0].image: 'Bad Name' is not an image name (lower-case letters, digits and . _ / : @ -)");
  EXPECT_EQ(ImageError("  - {match: {node: host1}, image: x}\n"), "t.yaml: images[0].match: matches no switch of the lab");
  EXPECT_EQ(ImageError("  - {match: {kind: host}, image: x}\n"),
            "t.yaml: images[0].match.kind: only switches run from router images; hosts run the MRC endpoints");
  EXPECT_EQ(ImageError("  image: x\n"), "t.yaml: images: expected a list of {match, image or archive}, got a mapping");
}

}  // namespace
}  // namespace mrclab::emulator

namespace mrclab::emulator {
namespace {

// Hosts as VMs (runtimes:): every host, then one taken back; memory and cpus as given.
TEST(ResolveRuntimes, SelectorsPickHostsAndLaterEntriesWin) {
  const ResolvedLab lab = FromText(kSmallClos +
                                   "runtimes:\n"
                                   "  - {match: {kind: host}, runtime: vm, memory: 1GiB, cpus: 2}\n"
                                   "  - {match: {node: host3}, runtime: netns}\n");
  for (const char* name : {"host0", "host1", "host2"}) {
    const ResolvedNode* h = lab.FindNode(name);
    ASSERT_TRUE(h->vm) << name;
    EXPECT_EQ(h->vm->memory_mib, 1024u);
    EXPECT_EQ(h->vm->cpus, 2u);
    EXPECT_EQ(h->vm->field, "runtimes[0]");
  }
  EXPECT_FALSE(lab.FindNode("host3")->vm);
  for (const ResolvedLink& link : lab.links) {  // the VM host a link ends on: only host links of VMs
    const ResolvedNode* vm = lab.VmHostOn(link);
    const std::string host = link.fabric ? "" : link.a.node.rfind("host", 0) == 0 ? link.a.node : link.b.node;
    EXPECT_EQ(vm ? vm->name : "", host == "host3" ? "" : host) << link.a.node << "-" << link.b.node;
  }
  EXPECT_EQ(lab.ToJson()["nodes"].size(), lab.nodes.size());
  EXPECT_EQ(FromText(kSmallClos + "runtimes: [{runtime: vm}]\n").FindNode("host0")->vm->memory_mib, 256u);
}

TEST(ResolveRuntimes, ErrorsNameTheField) {
  auto error = [&](const std::string& extra) {
    try {
      FromText(kSmallClos + extra);
    } catch (const LabError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("runtimes: [{match: {role: spine}, runtime: vm}]\n"),
            "t.yaml: runtimes[0].match: only hosts have a runtime (switches run FRR: images: for containers)");
  EXPECT_EQ(error("runtimes: [{runtime: docker}]\n"), "t.yaml: runtimes[0].runtime: 'docker' must be vm or netns");
  EXPECT_EQ(error("runtimes: [{match: {node: host0}}]\n"),
            "t.yaml: runtimes[0].runtime: missing: vm (a VM with its own kernel) or netns");
  EXPECT_EQ(error("runtimes: [{runtime: vm, memory: 64MiB}]\n"),
            "t.yaml: runtimes[0].memory: '64MiB' must be from 128MiB to 16GiB");
  EXPECT_EQ(error("runtimes: [{runtime: vm, memory: lots}]\n"),
            "t.yaml: runtimes[0].memory: 'lots' is not a size like 256MiB or 1GiB");
  EXPECT_EQ(error("runtimes: [{runtime: vm, cpus: 0}]\n"), "t.yaml: runtimes[0].cpus: must be an integer from 1 to 16");
  EXPECT_EQ(error("runtimes: [{runtime: netns, cpus: 2}]\n"), "t.yaml: runtimes[0]: memory and cpus are for runtime: vm");
  EXPECT_EQ(error("runtimes: [{match: {node: host9}, runtime: vm}]\n"),
            "t.yaml: runtimes[0].match.node: unknown node 'host9'");
}

}  // namespace
}  // namespace mrclab::emulator
