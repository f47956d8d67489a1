// The kernel's RC job as planned for each VM host's mrclab-rc-ranks: the same ranks and
// messages as the Workload's, one connection per pair and lane with one active side, lanes on
// the planes both hosts share, and the verbs ACK timeout exponent.
#include "harness/job/kernel_rc_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "emulator/lab_spec.h"

namespace mrclab::harness {
namespace {

using nlohmann::json;

emulator::ResolvedLab Lab() {
  return emulator::Resolve(emulator::ParseLabText(
      "name: k\nclos: {planes: 2, spines_per_plane: 1, leaves_per_plane: 2, hosts: 4, hosts_per_leaf: 2}\n"
      "runtimes: [{match: {kind: host}, runtime: vm}]\n", "k.yaml"));
}

TEST(KernelRcPlan, AckTimeoutExponentCoversTheTimeout) {
  EXPECT_EQ(AckTimeoutExponent(mrc::Duration::Microseconds(67108)), 14);  // 4.096 us * 2^14 = 67.109 ms
  EXPECT_EQ(AckTimeoutExponent(mrc::Duration::Microseconds(67110)), 15);
  EXPECT_EQ(AckTimeoutExponent(mrc::Duration::Milliseconds(67)), 14);
  EXPECT_EQ(AckTimeoutExponent(mrc::Duration::Milliseconds(8)), 11);     // 8.4 ms
  EXPECT_EQ(AckTimeoutExponent(mrc::Duration::Microseconds(1)), 1);
  EXPECT_EQ(AckTimeoutExponent(mrc::Duration::Seconds(1e5)), 31);
}

TEST(KernelRcPlan, EveryPairConnectsOncePerLaneOnSharedPlanes) {
  JobConfig c;
  c.hosts = {"host0", "host1", "host3"};
  c.ranks_per_host = 2;
  c.transport = mrc::TransportMode::kRc;
  c.qps_per_peer = 2;
  c.collectives = {{CollectiveKind::kAllToAll, 6 * 64}, {CollectiveKind::kAllReduce, 6 * 1000}};
  c.rc_retry_count = 6;
  const std::vector<json> plans = PlanKernelRc(Lab(), c);
  ASSERT_EQ(plans.size(), 3u);
  std::map<std::tuple<int, int, int>, json> qps;  // (rank, peer, lane)
  std::set<std::string> addresses[2];            // per lane
  for (const json& p : plans) {
    EXPECT_EQ(p["op"], "open");
    EXPECT_EQ(p["retry_count"], 6);
    EXPECT_EQ(p["ack_timeout"], 11);  // the model's default, 8 ms
    EXPECT_EQ(p["ranks"].size(), 2u);
    EXPECT_EQ(p["slot_bytes"], 1000u);  // the largest chunk
    for (const json& q : p["qps"]) {
      qps[{q["rank"], q["peer"], q["lane"]}] = q;
      addresses[q["lane"].get<int>()].insert(q["local"].get<std::string>());
    }
  }
  // all_to_all connects every pair of the 6 ranks: 15 pairs x 2 lanes x 2 sides.
  EXPECT_EQ(qps.size(), 60u);
  for (const auto& [key, q] : qps) {
    const auto [rank, peer, lane] = key;
    const json& other = qps.at({peer, rank, lane});
    EXPECT_NE(q["active"], other["active"]);
    EXPECT_EQ(q["active"], rank < peer);
    EXPECT_EQ(q["local"], other["remote"]);
  }
  // Lane 0 on every host's plane-0 address, lane 1 on plane 1: 3 hosts each.
  EXPECT_EQ(addresses[0].size(), 3u);
  EXPECT_EQ(addresses[1].size(), 3u);
  for (const std::string& a : addresses[0]) EXPECT_EQ(addresses[1].count(a), 0u);
  // A chunk's pieces cover it, in order.
  for (const json& col : plans[0]["collectives"]) {
    uint64_t next = 0;
    for (const json& piece : col["pieces"]) {
      EXPECT_EQ(piece[0], next);
      next += piece[1].get<uint64_t>();
    }
    EXPECT_EQ(next, col["chunk_bytes"]);
  }
  // The ring: rank 0 sends to 1 and receives from 5 in every all_reduce phase.
  const json& phases = plans[0]["ranks"][0]["phases"][1];
  EXPECT_EQ(phases.size(), 10u);
  for (const json& ph : phases) {
    EXPECT_EQ(ph["sends"][0][0], 1);
    EXPECT_EQ(ph["recvs"][0][0], 5);
  }
}

TEST(KernelRcPlan, RefusesWhatRcCannotRun) {
  JobConfig c;
  c.hosts = {"host0"};
  c.transport = mrc::TransportMode::kRc;
  EXPECT_THROW(PlanKernelRc(Lab(), c), std::invalid_argument);  // one rank
}

}  // namespace
}  // namespace mrclab::harness
