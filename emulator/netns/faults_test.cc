// The pure parts of fault injection: names, JSON, link targets, validation, config routing.
#include "emulator/netns/faults.h"

#include <gtest/gtest.h>

#include <functional>

#include "emulator/lab_spec.h"

namespace mrclab::emulator::netns {
namespace {

ResolvedLab Lab(const std::string& routing = "bgp") {
  return Resolve(ParseLabText("name: t\nrouting: " + routing + "\nlink_rate: 1Gbit\n"
                              "clos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 2, "
                              "hosts: 4, hosts_per_leaf: 2}\n",
                              "<test>"));
}

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const FaultError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Faults, KindNamesRoundTrip) {
  for (const auto& info : emulator::FaultKinds()) EXPECT_EQ(ParseFaultKind(ToString(info.kind)), info.kind);
  EXPECT_EQ(ToString(FaultKind::kPlaneDown), "plane_down");
  EXPECT_FALSE(ParseFaultKind("flapping"));
  // flap is planned into link_down windows; a FaultAction never carries it.
  EXPECT_THROW(FaultAction::FromJson({{"kind", "flap"}, {"link", 0}}), emulator::FaultError);
  EXPECT_THROW(FaultAction::FromJson({{"kind", "ev_deny"}}), emulator::FaultError);
  EXPECT_EQ(ParseDirection("a-b"), Direction::kAToB);
  EXPECT_FALSE(ParseDirection("up"));
}

TEST(Faults, JsonRoundTripKeepsWhatTheKindUses) {
  FaultAction a;
  a.kind = FaultKind::kLoss;
  a.link = 3;
  a.direction = Direction::kBToA;
  a.loss_rate = 0.02;
  const nlohmann::json doc = a.ToJson();
  EXPECT_EQ(doc, (nlohmann::json{{"kind", "loss"}, {"link", 3}, {"direction", "b-a"},
                                 {"loss_rate", 0.02}}));
  FaultAction b = FaultAction::FromJson(doc);
  EXPECT_EQ(b.kind, a.kind);
  EXPECT_EQ(b.link, 3);
  EXPECT_EQ(b.direction, Direction::kBToA);
  EXPECT_DOUBLE_EQ(b.loss_rate, 0.02);

  FaultAction c;
  c.kind = FaultKind::kConfigChange;
  c.node = "p0-leaf0";
  c.config_lines = {"router bgp 1", " neighbor spine0 shutdown"};
  FaultAction d = FaultAction::FromJson(c.ToJson());
  EXPECT_EQ(d.config_lines, c.config_lines);
  EXPECT_TRUE(d.revert_lines.empty());
}

TEST(Faults, FromJsonNamesTheBadField) {
  EXPECT_NE(ErrorOf([] { FaultAction::FromJson({{"kind", "nope"}}); }).find("kind: 'nope'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { FaultAction::FromJson({{"kind", "rate"}, {"rate_bps", -1}}); })
                .find("rate_bps"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { FaultAction::FromJson({{"kind", "rate"}, {"colour", 1}}); })
                .find("colour: unknown field"),
            std::string::npos);
}

TEST(Faults, LinkTargets) {
  ResolvedLab lab = Lab();
  EXPECT_EQ(ResolveLinkTarget(lab, "p0-leaf0:spine0"), 0);
  EXPECT_EQ(ResolveLinkTarget(lab, "p0-spine0:leaf0"), 0);
  EXPECT_EQ(ResolveLinkTarget(lab, "p0-spine0--p0-leaf0"), 0);
  EXPECT_EQ(ResolveLinkTarget(lab, "host1:eth1"), lab.FindNode("host1")->interfaces[1].link);
  EXPECT_EQ(ResolveLinkTarget(lab, "5"), 5);
  EXPECT_NE(ErrorOf([&] { ResolveLinkTarget(lab, "p0-leaf0:spine7"); })
                .find("p0-leaf0 has no interface 'spine7' (its interfaces: spine0, spine1, host0, host1)"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { ResolveLinkTarget(lab, "p0-leaf0--p1-spine0"); }).find("no link joins"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { ResolveLinkTarget(lab, "999"); }).find("has links 0.."), std::string::npos);
  EXPECT_NE(ErrorOf([&] { ResolveLinkTarget(lab, "nowhere"); }).find("expected NODE:INTERFACE"),
            std::string::npos);
}

TEST(Faults, ValidationNamesFieldAndReason) {
  ResolvedLab lab = Lab();
  FaultAction a;
  a.kind = FaultKind::kSwitchDown;
  a.node = "host0";
  EXPECT_NE(ErrorOf([&] { ValidateFault(lab, a); }).find("node: 'host0' is a host"), std::string::npos);
  a.kind = FaultKind::kRate;
  a.link = 0;
  EXPECT_NE(ErrorOf([&] { ValidateFault(lab, a); }).find("rate_bps: must be positive"),
            std::string::npos);
  a.kind = FaultKind::kLoss;
  a.loss_rate = 1.5;
  EXPECT_NE(ErrorOf([&] { ValidateFault(lab, a); }).find("loss_rate: 1.5 is outside 0..1"),
            std::string::npos);
  a.kind = FaultKind::kPlaneDown;
  a.plane = 2;
  EXPECT_NE(ErrorOf([&] { ValidateFault(lab, a); }).find("plane: 2 is not a plane"), std::string::npos);
  a.kind = FaultKind::kBgpReset;
  a.node = "p0-leaf0";
  ResolvedLab static_lab = Lab("static");
  EXPECT_NE(ErrorOf([&] { ValidateFault(static_lab, a); }).find("runs no BGP"), std::string::npos);
  a.kind = FaultKind::kConfigChange;
  a.config_lines = {"router bgp 1", "write memory"};
  EXPECT_NE(ErrorOf([&] { ValidateFault(lab, a); }).find("config_lines[1]"), std::string::npos);
  a.config_lines = {"router bgp 1"};
  EXPECT_EQ(ErrorOf([&] { ValidateFault(lab, a); }), "(no error)");
}

TEST(Faults, OnlyRateIsRefusedOnAVmHostsLinks) {
  const ResolvedLab lab = Resolve(ParseLabText("name: t\nrouting: bgp\nlink_rate: 1Gbit\n"
                                               "clos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 2, "
                                               "hosts: 4, hosts_per_leaf: 2}\n"
                                               "runtimes: [{match: {node: host0}, runtime: vm}]\n",
                                               "<test>"));
  FaultAction a;
  a.kind = FaultKind::kRate;
  a.rate_bps = 100'000'000;
  a.link = ResolveLinkTarget(lab, "p0-leaf0:host0");
  EXPECT_NE(ErrorOf([&] { ValidateFault(lab, a); }).find("ends on VM host host0: rate is not made"), std::string::npos);
  // Drops on the leaf's side, link down at the tap and the guest NIC's carrier.
  for (FaultKind k : {FaultKind::kBlackhole, FaultKind::kLoss, FaultKind::kLinkDown}) {
    a.kind = k;
    a.loss_rate = 0.1;
    EXPECT_EQ(ErrorOf([&] { ValidateFault(lab, a); }), "(no error)") << ToString(k);
  }
  a.kind = FaultKind::kRate;
  a.link = ResolveLinkTarget(lab, "p0-leaf1:host2");  // a namespace host's link
  EXPECT_EQ(ErrorOf([&] { ValidateFault(lab, a); }), "(no error)");
  a.kind = FaultKind::kSwitchDown;
  a.node = "p1-leaf0";
  EXPECT_EQ(ErrorOf([&] { ValidateFault(lab, a); }), "(no error)");
  a.kind = FaultKind::kPlaneDown;
  a.plane = 1;
  EXPECT_EQ(ErrorOf([&] { ValidateFault(lab, a); }), "(no error)");
}

TEST(Faults, ConfigLinesGoToTheDaemonThatOwnsThem) {
  EXPECT_EQ(ConfigDaemon("router bgp 4200010000"), "bgpd");
  EXPECT_EQ(ConfigDaemon("no router bgp 4200010000"), "bgpd");
  EXPECT_EQ(ConfigDaemon("bgp as-path access-list x permit 1"), "bgpd");
  EXPECT_EQ(ConfigDaemon("route-map DENY deny 10"), "bgpd");
  EXPECT_EQ(ConfigDaemon("ipv6 prefix-list P seq 5 permit ::/0"), "bgpd");
  EXPECT_EQ(ConfigDaemon("ipv6 route fd99::/64 blackhole"), "staticd");
  EXPECT_EQ(ConfigDaemon("bfd"), "bfdd");
  EXPECT_EQ(ConfigDaemon("interface spine0"), "zebra");
}

TEST(Faults, DescriptionsNameTheLinkAndDirection) {
  ResolvedLab lab = Lab();
  FaultAction a;
  a.kind = FaultKind::kBlackhole;
  a.link = 0;
  EXPECT_EQ(a.Describe(lab), "blackhole p0-leaf0:spine0 <-> p0-spine0:leaf0 (both directions)");
  a.direction = Direction::kAToB;
  EXPECT_EQ(a.Describe(lab), "blackhole p0-leaf0:spine0 <-> p0-spine0:leaf0 (p0-leaf0 -> p0-spine0 only)");
  a.kind = FaultKind::kRate;
  a.rate_bps = 100000000;
  EXPECT_EQ(a.Describe(lab), "rate 100Mbit p0-leaf0:spine0 <-> p0-spine0:leaf0 (lab: 1Gbit)");
}

}  // namespace
}  // namespace mrclab::emulator::netns
