// The udp source-port plan: a host's QP pairs never share a port, pairs on other hosts reuse
// them, and the span stays near the most QP pairs one host has.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "harness/job/collective_plan.h"
#include "harness/job/source_ports.h"

namespace mrclab::harness {
namespace {

JobConfig UdpJob(int hosts, int ranks_per_host = 1, mrc::TransportMode transport = mrc::TransportMode::kMrc) {
  JobConfig c;
  for (int h = 0; h < hosts; ++h) c.hosts.push_back("host" + std::to_string(h));
  c.ranks_per_host = ranks_per_host;
  c.transport = transport;
  c.ev_mode = mrc::EvMode::kUdp;
  c.evs_per_qp = 16;
  return c;
}

std::set<std::pair<int, int>> RankPairs(CollectiveKind kind, int ranks) { return StepPlan({kind}, ranks).RankPairs(); }

// Every port of every QP pair, per host: none may appear twice on one host.
void ExpectNoHostBindsAPortTwice(const SourcePortPlan& plan, const std::vector<std::pair<int, int>>& hosts) {
  std::map<int, std::set<uint32_t>> ports;
  for (size_t i = 0; i < hosts.size(); ++i) {
    const auto [a, b] = hosts[i];
    for (uint32_t p = plan.first_port(i); p < plan.first_port(i) + plan.width; ++p) {
      EXPECT_TRUE(ports[a].insert(p).second) << "host " << a << " port " << p;
      if (b != a) {
        EXPECT_TRUE(ports[b].insert(p).second) << "host " << b << " port " << p;
      }
    }
    EXPECT_LE(plan.first_port(i) + plan.width, 65536u);
  }
}

TEST(SourcePorts, ARingOfThousandsOfHostsNeedsAFewRanges) {
  const JobConfig c = UdpJob(8192);
  const auto hosts = QpPairHosts(RankPairs(CollectiveKind::kAllReduce, 8192), c);
  const SourcePortPlan plan = PlanSourcePorts(c, hosts, c.hosts.size());
  ASSERT_EQ(plan.range.size(), 8192u);
  EXPECT_EQ(plan.width, 16u);
  EXPECT_LE(plan.ranges, 3u);  // was one range per QP pair: 8192 x 16 ports
  ExpectNoHostBindsAPortTwice(plan, hosts);
}

TEST(SourcePorts, AnAllToAllNeedsAboutOneRangePerPeer) {
  const JobConfig c = UdpJob(32);
  const auto hosts = QpPairHosts(RankPairs(CollectiveKind::kAllToAll, 32), c);
  const SourcePortPlan plan = PlanSourcePorts(c, hosts, c.hosts.size());
  EXPECT_EQ(plan.range.size(), 496u);
  EXPECT_GE(plan.ranges, 31u);       // a host has 31 QP pairs
  EXPECT_LE(plan.ranges, 2u * 31);   // greedy colouring: at most 2 x 31 - 1
  EXPECT_EQ(plan.ports(), plan.ranges * 16);
  ExpectNoHostBindsAPortTwice(plan, hosts);
}

TEST(SourcePorts, RanksOnOneHostAndLanesEachGetTheirOwnPorts) {
  JobConfig c = UdpJob(4, /*ranks_per_host=*/3, mrc::TransportMode::kRc);
  c.qps_per_peer = 4;
  const auto hosts = QpPairHosts(RankPairs(CollectiveKind::kAllToAll, 12), c);
  ASSERT_EQ(hosts.size(), 66u * 4);
  EXPECT_EQ(hosts.front(), (std::pair<int, int>{0, 0}));  // ranks 0 and 1 share host 0
  const SourcePortPlan plan = PlanSourcePorts(c, hosts, c.hosts.size());
  EXPECT_EQ(plan.width, 1u);  // an RC QP sends on one EV
  ExpectNoHostBindsAPortTwice(plan, hosts);
}

TEST(SourcePorts, Srv6EvsNeedNone) {
  JobConfig c = UdpJob(8);
  c.ev_mode = mrc::EvMode::kSrv6;
  const SourcePortPlan plan = PlanSourcePorts(c, QpPairHosts(RankPairs(CollectiveKind::kAllReduce, 8), c), 8);
  EXPECT_EQ(plan.width, 0u);
  EXPECT_EQ(plan.ports(), 0u);
}

}  // namespace
}  // namespace mrclab::harness
