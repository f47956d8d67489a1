#include "emulator/netns/frr_config.h"

#include <gtest/gtest.h>

#include "emulator/lab_spec.h"

namespace mrclab::emulator::netns {
namespace {

ResolvedLab Lab(const std::string& routing) {
  return Resolve(ParseLabText("name: t\nrouting: " + routing +
                                  "\nclos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 2, "
                                  "hosts: 4, hosts_per_leaf: 2}\n",
                              "<test>"));
}

TEST(FrrConfig, BgpLeafPeersWithEverySpineUnnumberedAndAnnouncesItsUsid) {
  ResolvedLab lab = Lab("bgp");
  const ResolvedNode* leaf = lab.FindNode("p1-leaf0");
  ASSERT_NE(leaf, nullptr);
  auto files = FrrConfigs(lab, *leaf, "/x");
  const std::string& bgp = files.at("bgpd");
  EXPECT_EQ(bgp.rfind("frr defaults datacenter\n", 0), 0u);
  EXPECT_NE(bgp.find("router bgp " + std::to_string(leaf->asn) + "\n"), std::string::npos);
  EXPECT_NE(bgp.find(" neighbor spine0 interface peer-group fabric\n"), std::string::npos);
  EXPECT_NE(bgp.find(" neighbor spine1 interface peer-group fabric\n"), std::string::npos);
  EXPECT_EQ(bgp.find("neighbor host"), std::string::npos) << "hosts do not run BGP";
  EXPECT_NE(bgp.find("  network fcbb:0:" + UsidHex(leaf->usid) + "::/48\n"), std::string::npos);
  EXPECT_NE(bgp.find(" neighbor fabric bfd\n"), std::string::npos);
  // BFD runs at the lab's interval (FRR's 300 ms on a lab this small), through one profile.
  EXPECT_NE(bgp.find(" neighbor fabric bfd profile fabric\n"), std::string::npos);
  EXPECT_NE(files.at("bfdd").find(" profile fabric\n  transmit-interval 300\n  receive-interval 300\n"),
            std::string::npos)
      << files.at("bfdd");
  EXPECT_NE(files.at("zebra").find("log file /x/zebra.log"), std::string::npos);
  // Plain multipath routes: FRR 8.4 does not heal kernel nexthop groups after a link flap.
  EXPECT_NE(files.at("zebra").find("no zebra nexthop kernel enable\n"), std::string::npos);
  // The leaf routes its hosts' uSIDs with staticd, one line per next hop.
  EXPECT_NE(files.at("staticd").find("ipv6 route fcbb:0:"), std::string::npos);
}

TEST(FrrConfig, StaticModeHasNoBgpAndEcmpStaticRoutes) {
  ResolvedLab lab = Lab("static");
  const ResolvedNode* leaf = lab.FindNode("p0-leaf0");
  auto files = FrrConfigs(lab, *leaf, "/x");
  EXPECT_EQ(files.at("bgpd").find("router bgp"), std::string::npos);
  const ResolvedNode* remote = lab.FindNode("p0-leaf1");
  const std::string locator = "ipv6 route fcbb:0:" + UsidHex(remote->usid) + "::/48 ";
  const std::string& statics = files.at("staticd");
  size_t count = 0;
  for (size_t pos = statics.find(locator); pos != std::string::npos;
       pos = statics.find(locator, pos + 1))
    ++count;
  EXPECT_EQ(count, 2u) << "one next hop per spine:\n" << statics;
}

}  // namespace
}  // namespace mrclab::emulator::netns
