// A job's footprint: the QP pairs counted in closed form (CountQpPairs, which --check trusts
// before anything is listed) are the pairs the collective plan connects.
#include "harness/job/job_footprint.h"

#include <gtest/gtest.h>

#include <string>

#include "harness/job/collective_plan.h"

namespace mrclab::harness {
namespace {

JobConfig Job(int hosts, int ranks_per_host, int qps_per_peer, std::vector<CollectiveKind> kinds) {
  JobConfig c;
  for (int h = 0; h < hosts; ++h) c.hosts.push_back("host" + std::to_string(h));
  c.ranks_per_host = ranks_per_host;
  c.qps_per_peer = qps_per_peer;
  c.collectives.clear();
  for (CollectiveKind k : kinds) c.collectives.push_back(CollectiveSpec{k, 1 << 20});
  return c;
}

TEST(JobFootprint, CountedQpPairsAreThePairsThePlanConnects) {
  const std::vector<std::vector<CollectiveKind>> mixes = {
      {CollectiveKind::kAllReduce},
      {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter},
      {CollectiveKind::kAllToAll},
      {CollectiveKind::kAllReduce, CollectiveKind::kAllToAll},
  };
  for (const auto& kinds : mixes)
    for (int hosts : {1, 2, 3, 8, 17})
      for (int ranks_per_host : {1, 2})
        for (int qps_per_peer : {1, 3}) {
          const int ranks = hosts * ranks_per_host;
          if (ranks < 2) continue;
          const JobConfig c = Job(hosts, ranks_per_host, qps_per_peer, kinds);
          const size_t listed = StepPlan(kinds, ranks).RankPairs().size() * static_cast<size_t>(qps_per_peer);
          EXPECT_EQ(CountQpPairs(c), listed) << ranks << " ranks, " << kinds.size() << " collectives, "
                                             << qps_per_peer << " QPs per peer";
          EXPECT_EQ(EstimateFootprint(c, 8).qp_pairs, listed);
        }
}

}  // namespace
}  // namespace mrclab::harness
