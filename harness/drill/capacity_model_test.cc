#include "harness/drill/capacity_model.h"

#include <gtest/gtest.h>

#include "emulator/lab_spec.h"

namespace mrclab::harness {
namespace {

emulator::ResolvedLab Lab(const std::string& extra) {
  return emulator::Resolve(emulator::ParseLabText(
      "name: t\nclos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 4, hosts: 8, hosts_per_leaf: 2}\n" + extra,
      "t.yaml"), {.routes = false});
}

JobConfig Job(std::vector<CollectiveSpec> collectives) {
  JobConfig j;
  for (int h = 0; h < 8; ++h) j.hosts.push_back("host" + std::to_string(h));
  j.collectives = std::move(collectives);
  j.mtu = 1024;
  j.compute_seconds = 0.05;
  j.step_timeout_seconds = 5;
  return j;
}

MachineCapacity Capacity(double packet_hops_per_second) {
  MachineCapacity c;
  c.mtu = 1024;
  c.packet_hops_per_second = packet_hops_per_second;
  return c;
}

TEST(CapacityModel, RingAllReduceOnTheDefaultLab) {
  // 8 ranks, 1 MiB: 14 sends of a 128 KiB chunk per rank, 128 packets each.
  const JobDemand d = EstimateDemand(Job({{CollectiveKind::kAllReduce, 1 << 20}}), Lab("link_rate: 1Gbit\n"),
                                     Capacity(1e6));
  EXPECT_EQ(d.packets_per_step, 8u * 14 * 128);
  EXPECT_EQ(d.path_links, 4);
  EXPECT_NEAR(d.fabric_seconds, 14.0 * 131072 * 8 / 2e9, 1e-9);  // two 1 Gbit/s ports per host
  EXPECT_NEAR(d.machine_seconds, 14336.0 * 4 / 1e6, 1e-9);
  EXPECT_NEAR(d.step_seconds, 0.05 + d.machine_seconds, 1e-9);
  EXPECT_NEAR(d.scale_factor, d.machine_seconds / d.fabric_seconds, 1e-9);
  EXPECT_GT(d.scale_factor, 1);
  EXPECT_FALSE(DoesNotFit(Job({{CollectiveKind::kAllReduce, 1 << 20}}), d, Capacity(1e6)));
  // 1 Gbit/s over the scale factor (7.8), rounded down to a whole Mbit/s; at that rate the links
  // set the transfer time.
  const double faithful = 1e9 / d.scale_factor;
  EXPECT_EQ(d.faithful_link_rate_bps % 1'000'000, 0u);
  EXPECT_LE(static_cast<double>(d.faithful_link_rate_bps), faithful);
  EXPECT_GT(static_cast<double>(d.faithful_link_rate_bps), faithful - 1e6);
  const JobDemand slower =
      EstimateDemand(Job({{CollectiveKind::kAllReduce, 1 << 20}}),
                     Lab("link_rate: " + emulator::FormatRate(d.faithful_link_rate_bps) + "\n"), Capacity(1e6));
  EXPECT_LE(slower.scale_factor, 1 + 1e-9);
  EXPECT_EQ(EstimateDemand(Job({{CollectiveKind::kAllReduce, 1 << 20}}), Lab("link_rate: 100Mbit\n"), Capacity(1e6))
                .faithful_link_rate_bps,
            0u);
}

TEST(CapacityModel, AllToAllSendsOneChunkToEveryPeerAndUnshapedLinksHaveNoFabricTime) {
  const JobDemand d = EstimateDemand(Job({{CollectiveKind::kAllToAll, 8 << 10}}), Lab(""), Capacity(1e6));
  EXPECT_EQ(d.packets_per_step, 8u * 7 * 1);  // 1 KiB chunks: one packet each
  EXPECT_EQ(d.fabric_seconds, 0);
  EXPECT_EQ(d.scale_factor, 0);
}

TEST(CapacityModel, AStepLongerThanTheWatchdogIsRefusedWithWhatWouldFit) {
  const JobConfig job = Job({{CollectiveKind::kAllReduce, 512 << 20}});
  const MachineCapacity c = Capacity(1e6);
  const JobDemand d = EstimateDemand(job, Lab("link_rate: 1Gbit\n"), c);
  const auto why = DoesNotFit(job, d, c);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("over job.step_timeout (5.0 s)"), std::string::npos) << *why;
  EXPECT_NE(why->find("1.00M packet-hops/s at mtu 1024"), std::string::npos) << *why;
  // (5 - 0.05) / 29.36 s of forwarding: 16.9% of the sizes fit.
  EXPECT_NE(why->find("at most 16.9% of these would fit"), std::string::npos) << *why;
  EXPECT_FALSE(DoesNotFit(job, d, MachineCapacity{}));  // not measured: nothing to refuse on
}

}  // namespace
}  // namespace mrclab::harness
