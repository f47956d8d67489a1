#include "emulator/lab_spec.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>

#include "emulator/clos_generator.h"

namespace mrclab::emulator {
namespace {

const std::string kLabs = std::string(MRCLAB_SOURCE_DIR) + "/labs/";

const std::string kSmallClos =
    "name: t\n"
    "clos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 2, hosts: 4, hosts_per_leaf: 2}\n";

std::optional<LabError> ErrorOf(const std::string& yaml) {
  try {
    ParseLabText(yaml, "t.yaml");
  } catch (const LabError& e) {
    return e;
  }
  return std::nullopt;
}

// Asserts that parsing fails at `field`, and returns the reason for further checks.
std::string ExpectFieldError(const std::string& yaml, const std::string& field) {
  std::optional<LabError> e = ErrorOf(yaml);
  if (!e) {
    ADD_FAILURE() << "no error for:\n" << yaml;
    return "";
  }
  EXPECT_EQ(e->file(), "t.yaml");
  EXPECT_EQ(e->field(), field) << e->what();
  EXPECT_FALSE(e->reason().empty());
  EXPECT_EQ(std::string(e->what()), "t.yaml: " + e->field() + ": " + e->reason());
  return e->reason();
}

TEST(LabErrorTest, WhatIsFileFieldReason) {
  LabError e("labs/x.yaml", "clos.planes", "must be a positive integer");
  EXPECT_STREQ(e.what(), "labs/x.yaml: clos.planes: must be a positive integer");
  EXPECT_EQ(e.file(), "labs/x.yaml");
  EXPECT_EQ(e.field(), "clos.planes");
  EXPECT_EQ(e.reason(), "must be a positive integer");
  // Whatever a file held (a quoted key with a newline, an escape YAML quotes back), one line.
  LabError odd("x.yaml", "a\nb", std::string("bad \x01 char\r"));
  EXPECT_STREQ(odd.what(), "x.yaml: a\\nb: bad \\x01 char\\x0d");
}

TEST(ParseRateTest, DecimalUnits) {
  EXPECT_EQ(ParseRate("1Gbit"), 1000000000u);
  EXPECT_EQ(ParseRate("10Gbit"), 10000000000u);
  EXPECT_EQ(ParseRate("100Mbit"), 100000000u);
  EXPECT_EQ(ParseRate("500kbit"), 500000u);
  EXPECT_EQ(ParseRate("100000bit"), 100000u);
  EXPECT_EQ(ParseRate("2.5Gbit"), 2500000000u);
  EXPECT_EQ(ParseRate("1mbit"), 1000000u);
  EXPECT_EQ(ParseRate("1Tbit"), 1000000000000u);
}

TEST(ParseRateTest, RejectsNonsense) {
  for (const char* bad : {"", "fast", "100", "Gbit", "1 Gbit", "1GB", "1Gbps", "0Gbit", "1.5bit",
                          "-1Gbit", "1.Gbit", "99999999999999999999Tbit", "1bit", "64bit", "99kbit"}) {
    EXPECT_THROW(ParseRate(bad), std::invalid_argument) << bad;
  }
}

TEST(ClosGeneratorTest, NamesOrderAndInterfaces) {
  GeneratedFabric f = GenerateClos({2, 2, 4, 8, 2});
  ASSERT_EQ(f.nodes.size(), 2u * (2 + 4) + 8);
  EXPECT_EQ(f.nodes[0].name, "p0-spine0");
  EXPECT_EQ(f.nodes[1].name, "p0-spine1");
  EXPECT_EQ(f.nodes[2].name, "p0-leaf0");
  EXPECT_EQ(f.nodes[6].name, "p1-spine0");
  EXPECT_EQ(f.nodes[11].name, "p1-leaf3");
  EXPECT_EQ(f.nodes[12].name, "host0");
  EXPECT_EQ(f.nodes[19].name, "host7");
  EXPECT_EQ(f.nodes[8].plane, 1);
  EXPECT_EQ(f.nodes[8].role, SwitchRole::kLeaf);
  EXPECT_EQ(f.nodes[6].role, SwitchRole::kSpine);
  EXPECT_EQ(f.nodes[12].kind, NodeKind::kHost);

  ASSERT_EQ(f.links.size(), 2u * 4 * 2 + 2u * 8);
  // Fabric: for each plane, leaf, spine.
  EXPECT_EQ(f.links[0].a.node, "p0-leaf0");
  EXPECT_EQ(f.links[0].a.interface, "spine0");
  EXPECT_EQ(f.links[0].b.node, "p0-spine0");
  EXPECT_EQ(f.links[0].b.interface, "leaf0");
  EXPECT_EQ(f.links[1].a.node, "p0-leaf0");
  EXPECT_EQ(f.links[1].b.node, "p0-spine1");
  EXPECT_EQ(f.links[3].a.node, "p0-leaf1");
  EXPECT_EQ(f.links[3].a.interface, "spine1");
  EXPECT_EQ(f.links[3].b.interface, "leaf1");
  EXPECT_EQ(f.links[8].a.node, "p1-leaf0");
  // Host ports: for each plane, host.
  EXPECT_EQ(f.links[16].a.node, "p0-leaf0");
  EXPECT_EQ(f.links[16].a.interface, "host0");
  EXPECT_EQ(f.links[16].b.node, "host0");
  EXPECT_EQ(f.links[16].b.interface, "eth0");
  EXPECT_EQ(f.links[19].a.node, "p0-leaf1");  // host3 / 2 hosts per leaf
  EXPECT_EQ(f.links[31].a.node, "p1-leaf3");
  EXPECT_EQ(f.links[31].a.interface, "host7");
  EXPECT_EQ(f.links[31].b.interface, "eth1");
}

TEST(ClosGeneratorTest, PlanesNeverMeet) {
  GeneratedFabric f = GenerateClos({4, 4, 8, 32, 4});
  for (const LinkSpec& l : f.links) {
    if (l.b.node.rfind("host", 0) == 0) continue;
    EXPECT_EQ(l.a.node.substr(0, 3), l.b.node.substr(0, 3)) << l.a.node << " " << l.b.node;
  }
}

TEST(ParseLabTest, ShippedLabsParse) {
  struct Want {
    const char* file;
    size_t nodes, links;
  };
  for (Want w :
       {Want{"clos2.yaml", 20, 32}, Want{"clos2-static.yaml", 20, 32}, Want{"clos4.yaml", 80, 256},
        Want{"clos8.yaml", 160, 768}, Want{"mixed.yaml", 14, 20}}) {
    LabSpec spec = ParseLabFile(kLabs + w.file);
    EXPECT_EQ(spec.nodes.size(), w.nodes) << w.file;
    EXPECT_EQ(spec.links.size(), w.links) << w.file;
    EXPECT_EQ(spec.source, kLabs + w.file);
  }
}

TEST(ParseLabTest, LinkMtu) {
  EXPECT_EQ(ParseLabText("name: t\nnodes: {a: {kind: switch}}\n", "t.yaml").mtu, kDefaultLinkMtu);
  EXPECT_EQ(ParseLabText("name: t\nmtu: 9000\nnodes: {a: {kind: switch}}\n", "t.yaml").mtu, 9000u);
  for (const char* bad : {"1279", "9217", "jumbo", "9000.5", "-1", "[1]"})
    ExpectFieldError("name: t\nmtu: " + std::string(bad) + "\nnodes: {a: {kind: switch}}\n", "mtu");
}

TEST(ParseLabTest, Clos2) {
  LabSpec spec = ParseLabFile(kLabs + "clos2.yaml");
  EXPECT_EQ(spec.name, "clos2");
  ASSERT_TRUE(spec.clos.has_value());
  EXPECT_EQ(spec.clos->planes, 2);
  EXPECT_EQ(spec.clos->spines_per_plane, 2);
  EXPECT_EQ(spec.clos->leaves_per_plane, 4);
  EXPECT_EQ(spec.clos->hosts, 8);
  EXPECT_EQ(spec.clos->hosts_per_leaf, 2);
  EXPECT_EQ(spec.routing, Routing::kBgp);
  EXPECT_EQ(spec.link_rate_bps, 1000000000u);
  EXPECT_EQ(ParseLabFile(kLabs + "clos2-static.yaml").routing, Routing::kStatic);
}

TEST(ParseLabTest, MixedExtendsGeneratedFabric) {
  LabSpec spec = ParseLabFile(kLabs + "mixed.yaml");
  EXPECT_EQ(spec.nodes[11].name, "host3");  // generated first
  EXPECT_EQ(spec.nodes[12].name, "edge0");
  EXPECT_EQ(spec.nodes[12].kind, NodeKind::kSwitch);
  EXPECT_EQ(spec.nodes[12].plane, 0);
  EXPECT_FALSE(spec.nodes[12].role.has_value());
  EXPECT_EQ(spec.nodes[13].name, "storage0");
  EXPECT_EQ(spec.nodes[13].kind, NodeKind::kHost);
  EXPECT_EQ(spec.links[16].a.node, "edge0");
  EXPECT_EQ(spec.links[16].b.node, "p0-spine0");
  EXPECT_EQ(spec.links[19].a.node, "p1-leaf1");
  EXPECT_EQ(spec.links[19].b.interface, "eth1");
  EXPECT_EQ(spec.link_rate_bps, 100000000u);
}

TEST(ParseLabTest, ExplicitOnly) {
  LabSpec spec = ParseLabText(
      "name: tiny\n"
      "routing: static\n"
      "nodes:\n"
      "  s: {kind: switch, role: spine}\n"
      "  l: {kind: switch, plane: 0, role: leaf}\n"
      "  h: {kind: host}\n"
      "links:\n"
      "  - endpoints: [l:up, s:down]\n"
      "  - {endpoints: [h:eth0, l:h]}\n",
      "<string>");
  EXPECT_FALSE(spec.clos.has_value());
  ASSERT_EQ(spec.nodes.size(), 3u);
  EXPECT_EQ(spec.nodes[0].role, SwitchRole::kSpine);
  EXPECT_FALSE(spec.nodes[0].plane.has_value());
  EXPECT_EQ(spec.nodes[1].plane, 0);
  ASSERT_EQ(spec.links.size(), 2u);
  EXPECT_EQ(spec.links[1].a.node, "h");
  EXPECT_EQ(spec.links[1].a.interface, "eth0");
  EXPECT_EQ(spec.source, "<string>");
  EXPECT_FALSE(spec.link_rate_bps.has_value());
}

TEST(ParseLabTest, MissingFile) {
  try {
    ParseLabFile("/nonexistent/lab.yaml");
    FAIL();
  } catch (const LabError& e) {
    EXPECT_EQ(e.file(), "/nonexistent/lab.yaml");
  }
}

TEST(ParseLabErrorTest, YamlSyntaxError) {
  std::string reason = ExpectFieldError("name: t\nclos: {planes: 2\n", "line 3");
  EXPECT_NE(reason.find("YAML"), std::string::npos);
  ExpectFieldError("name: [a, b\n", "line 2");
}

TEST(ParseLabErrorTest, NotAMapping) {
  ExpectFieldError("", "(document)");
  ExpectFieldError("- a\n- b\n", "(document)");
}

TEST(ParseLabErrorTest, MissingName) {
  ExpectFieldError(
      "clos: {planes: 1, spines_per_plane: 1, leaves_per_plane: 1, hosts: 1, "
      "hosts_per_leaf: 1}\n",
      "name");
}

TEST(ParseLabErrorTest, BadName) {
  for (const char* name : {"Clos", "1lab", "-x", "a_b", "abcdefghijklmnopq", "\"\"", "[a]"}) {
    ExpectFieldError(
        std::string("name: ") + name + "\n" + kSmallClos.substr(kSmallClos.find('\n') + 1), "name");
  }
  // 16 characters is the limit.
  EXPECT_NO_THROW(ParseLabText(
      "name: abcdefghijklmnop\n" + kSmallClos.substr(kSmallClos.find('\n') + 1), "t.yaml"));
}

TEST(ParseLabErrorTest, UnknownKeys) {
  ExpectFieldError(kSmallClos + "colour: blue\n", "colour");
  ExpectFieldError(
      "name: t\nclos: {planes: 1, spines_per_plane: 1, leaves_per_plane: 1, hosts: 1, "
      "hosts_per_leaf: 1, spines: 3}\n",
      "clos.spines");
  ExpectFieldError(kSmallClos + "nodes: {x: {kind: switch, colour: red}}\n", "nodes.x.colour");
  ExpectFieldError(kSmallClos + "links: [{endpoints: [p0-leaf0:a, p0-spine0:b], mtu: 9000}]\n",
                   "links[0].mtu");
  ExpectFieldError(kSmallClos + "name: u\n", "name");  // duplicate key
}

TEST(ParseLabErrorTest, ClosNumbersMustBePositiveIntegers) {
  const char* fields[] = {"planes", "spines_per_plane", "leaves_per_plane", "hosts",
                          "hosts_per_leaf"};
  for (const char* field : fields) {
    for (const char* bad : {"-1", "2.5", "two", "[1]", "''"}) {
      std::string clos;
      for (const char* f : fields) {
        clos += std::string(clos.empty() ? "" : ", ") + f + ": " +
                (std::string(f) == field ? bad : "2");
      }
      ExpectFieldError("name: t\nclos: {" + clos + "}\n", std::string("clos.") + field);
    }
  }
  ExpectFieldError(
      "name: t\nclos: {planes: 0, spines_per_plane: 1, leaves_per_plane: 1, hosts: 1, "
      "hosts_per_leaf: 1}\n",
      "clos.planes");
  ExpectFieldError(
      "name: t\nclos: {planes: 1, spines_per_plane: 1, leaves_per_plane: 1, hosts: 1}\n",
      "clos.hosts_per_leaf");
  ExpectFieldError("name: t\nclos: 3\n", "clos");
}

TEST(ParseLabErrorTest, AScenarioGivenAsALabSaysSo) {
  const std::string why =
      ExpectFieldError("name: s\nlab: clos2\njob: {collectives: [{kind: all_reduce}]}\n", "job");
  EXPECT_NE(why.find("this is a scenario, not a lab file: run it with `mrclab drill t.yaml`"), std::string::npos) << why;
}

TEST(ParseLabTest, LinkDelay) {
  EXPECT_EQ(ParseDelay("1us"), 1000u);
  EXPECT_EQ(ParseDelay("2.5us"), 2500u);
  EXPECT_EQ(ParseDelay("500ns"), 500u);
  EXPECT_EQ(ParseDelay("1ms"), 1000000u);
  for (const char* bad : {"1", "us", "-1us", "1s", "0ns", "2000ms", "1 us", "0.1ns"})
    EXPECT_THROW(ParseDelay(bad), std::invalid_argument) << bad;
  LabSpec spec = ParseLabText("name: t\nlink_delay: 2us\nnodes: {a: {kind: switch}}\n", "t.yaml");
  EXPECT_EQ(spec.link_delay_ns, 2000u);
  ExpectFieldError("name: t\nlink_delay: fast\nnodes: {a: {kind: switch}}\n", "link_delay");
}

TEST(ParseLabErrorTest, ClosLimitsOfTheUsidPlan) {
  ExpectFieldError(
      "name: t\nclos: {planes: 16, spines_per_plane: 1, leaves_per_plane: 1, "
      "hosts: 1, hosts_per_leaf: 1}\n",
      "clos.planes");
  ExpectFieldError(
      "name: t\nclos: {planes: 1, spines_per_plane: 1280, leaves_per_plane: 1, "
      "hosts: 1, hosts_per_leaf: 1}\n",
      "clos.spines_per_plane");
  ExpectFieldError(
      "name: t\nclos: {planes: 1, spines_per_plane: 1, leaves_per_plane: 1280, "
      "hosts: 1, hosts_per_leaf: 1}\n",
      "clos.leaves_per_plane");
  ExpectFieldError(
      "name: t\nclos: {planes: 1, spines_per_plane: 1, leaves_per_plane: 2, "
      "hosts: 1025, hosts_per_leaf: 1025}\n",
      "clos.hosts_per_leaf");
  // The paper's fabric fits: 131,072 hosts on 512 leaves of 256 per plane.
  LabSpec big = ParseLabText(
      "name: t\nclos: {planes: 8, spines_per_plane: 256, leaves_per_plane: 512, "
      "hosts: 131072, hosts_per_leaf: 256}\n",
      "t.yaml");
  EXPECT_EQ(big.clos->hosts, 131072);
  // A few bytes must not ask for more than any machine can plan: 15 x 1279 x 1279 links.
  ExpectFieldError(
      "name: t\nclos: {planes: 15, spines_per_plane: 1279, leaves_per_plane: 1279, "
      "hosts: 1, hosts_per_leaf: 1}\n",
      "clos");
}

TEST(ParseLabErrorTest, PlaneWithNoSpines) {
  std::string reason = ExpectFieldError(
      "name: t\nclos: {planes: 2, spines_per_plane: 0, leaves_per_plane: 2, hosts: 2, "
      "hosts_per_leaf: 1}\n",
      "clos.spines_per_plane");
  EXPECT_NE(reason.find("spine"), std::string::npos);
}

TEST(ParseLabErrorTest, TooManyHosts) {
  std::string reason = ExpectFieldError(
      "name: t\nclos: {planes: 1, spines_per_plane: 1, leaves_per_plane: 4, hosts: 9, "
      "hosts_per_leaf: 2}\n",
      "clos.hosts");
  EXPECT_NE(reason.find("9 hosts"), std::string::npos);
  EXPECT_NO_THROW(
      ParseLabText("name: t\nclos: {planes: 1, spines_per_plane: 1, "
                   "leaves_per_plane: 4, hosts: 8, hosts_per_leaf: 2}\n",
                   "t.yaml"));
}

TEST(ParseLabErrorTest, BadRouting) {
  ExpectFieldError(kSmallClos + "routing: ospf\n", "routing");
  ExpectFieldError(kSmallClos + "routing: [bgp]\n", "routing");
}

TEST(ParseLabErrorTest, BadLinkRate) {
  ExpectFieldError(kSmallClos + "link_rate: fast\n", "link_rate");
  ExpectFieldError(kSmallClos + "link_rate: 1000\n", "link_rate");
  ExpectFieldError(kSmallClos + "link_rate: 0Mbit\n", "link_rate");
}

TEST(ParseLabErrorTest, UnknownNodeInLink) {
  std::string reason = ExpectFieldError(kSmallClos +
                                            "links:\n  - endpoints: [p0-leaf0:x, p0-spine0:x]\n"
                                            "  - endpoints: [p0-leaf0:y, p9-spine0:y]\n",
                                        "links[1].endpoints[1]");
  EXPECT_NE(reason.find("p9-spine0"), std::string::npos);
}

TEST(ParseLabErrorTest, EndpointNotNodeColonInterface) {
  for (const char* bad : {"p0-leaf0", "p0-leaf0:", ":eth0", "p0-leaf0:a:b", "[a, b]"}) {
    ExpectFieldError(kSmallClos + "links: [{endpoints: [p0-spine0:z, " + bad + "]}]\n",
                     "links[0].endpoints[1]");
  }
  ExpectFieldError(kSmallClos + "links: [{endpoints: [p0-spine0:z]}]\n", "links[0].endpoints");
  ExpectFieldError(kSmallClos + "links: [{}]\n", "links[0].endpoints");
  ExpectFieldError(kSmallClos + "links: {a: b}\n", "links");
}

TEST(ParseLabErrorTest, DuplicateNodeNames) {
  std::string reason = ExpectFieldError(
      "name: t\nnodes:\n  a: {kind: switch}\n  b: {kind: host}\n  a: {kind: host}\n", "nodes.a");
  EXPECT_NE(reason.find("duplicate key"), std::string::npos);
  reason = ExpectFieldError(kSmallClos + "nodes: {p0-leaf1: {kind: switch}}\n", "nodes.p0-leaf1");
  EXPECT_NE(reason.find("generated"), std::string::npos);
  ExpectFieldError(kSmallClos + "nodes: {host3: {kind: host}}\n", "nodes.host3");
}

TEST(ParseLabErrorTest, InterfaceUsedByTwoLinks) {
  std::string reason = ExpectFieldError(
      kSmallClos +
          "nodes: {x: {kind: switch}}\n"
          "links:\n  - endpoints: [x:a, p0-spine0:x]\n  - endpoints: [x:a, p0-spine1:x]\n",
      "links[1].endpoints[0]");
  EXPECT_NE(reason.find("links[0]"), std::string::npos);
  reason = ExpectFieldError(kSmallClos +
                                "nodes: {x: {kind: switch}}\n"
                                "links: [{endpoints: [x:a, p0-leaf0:spine0]}]\n",
                            "links[0].endpoints[1]");
  EXPECT_NE(reason.find("generated"), std::string::npos);
}

TEST(ParseLabErrorTest, LinkToItself) {
  ExpectFieldError(kSmallClos + "links: [{endpoints: [p0-leaf0:a, p0-leaf0:b]}]\n",
                   "links[0].endpoints");
}

TEST(ParseLabErrorTest, BadNodeNames) {
  for (const char* bad :
       {"Big", "9lives", "under_score", "a.b", "abcdefghijklmnopqrstuvwxyz0123456"}) {
    ExpectFieldError(std::string("name: t\nnodes: {") + bad + ": {kind: switch}}\n",
                     std::string("nodes.") + bad);
  }
  // 31 characters is the limit.
  EXPECT_NO_THROW(ParseLabText(
      "name: t\nnodes: {abcdefghijklmnopqrstuvwxyz01234: {kind: switch}}\n", "t.yaml"));
}

TEST(ParseLabErrorTest, BadNodeBodies) {
  ExpectFieldError("name: t\nnodes: {x: {plane: 0}}\n", "nodes.x.kind");
  ExpectFieldError("name: t\nnodes: {x: {kind: router}}\n", "nodes.x.kind");
  ExpectFieldError("name: t\nnodes: {x: }\n", "nodes.x");
  ExpectFieldError("name: t\nnodes: {x: {kind: switch, role: core}}\n", "nodes.x.role");
  ExpectFieldError("name: t\nnodes: {x: {kind: switch, plane: -1}}\n", "nodes.x.plane");
  ExpectFieldError("name: t\nnodes: {x: {kind: switch, plane: 15}}\n", "nodes.x.plane");
  ExpectFieldError("name: t\nnodes: {x: {kind: host, plane: 0}}\n", "nodes.x.plane");
  ExpectFieldError("name: t\nnodes: {x: {kind: host, role: leaf}}\n", "nodes.x.role");
  ExpectFieldError("name: t\nnodes: [x]\n", "nodes");
}

TEST(ParseLabErrorTest, BadInterfaceNames) {
  std::string reason =
      ExpectFieldError(kSmallClos +
                           "nodes: {x: {kind: switch}}\n"
                           "links: [{endpoints: [x:abcdefghijklmnop, p0-spine0:x]}]\n",
                       "links[0].endpoints[0]");
  EXPECT_NE(reason.find("15"), std::string::npos);
  for (const char* bad : {"a/b", "a b", "a@b", "\"a\\tb\"", "lo", "sr0", "all", "default"}) {
    ExpectFieldError(kSmallClos +
                         "nodes: {x: {kind: switch}}\n"
                         "links: [{endpoints: [x:eth0, 'p0-spine0:" +
                         std::string(bad) + "']}]\n",
                     "links[0].endpoints[1]");
  }
  EXPECT_NO_THROW(ParseLabText(kSmallClos + "nodes: {x: {kind: switch}}\n"
                                            "links: [{endpoints: [x:abcdefghijklmno, "
                                            "p0-spine0:A_b.c-9]}]\n",
                               "t.yaml"));
}

TEST(ParseLabErrorTest, HostToHostLink) {
  std::string reason = ExpectFieldError(
      kSmallClos + "nodes: {h: {kind: host}}\nlinks: [{endpoints: [h:eth0, host0:eth9]}]\n",
      "links[0].endpoints");
  EXPECT_NE(reason.find("host-to-host"), std::string::npos);
}

TEST(ParseLabErrorTest, NoNodes) {
  ExpectFieldError("name: t\n", "nodes");
  ExpectFieldError("name: t\nnodes: {}\nlinks: []\n", "nodes");
}

}  // namespace
}  // namespace mrclab::emulator
