// Runs every collective's plan in memory, phase by phase, and checks the closed-form results:
// the algorithms are right before any packet is sent.
#include <gtest/gtest.h>

#include <vector>

#include "harness/job/collective_data.h"
#include "harness/job/collective_plan.h"

namespace mrclab::harness {
namespace {

struct Rank {
  std::vector<uint32_t> data, output;
  std::vector<std::vector<uint32_t>> slots;
};

// Executes the step plan; `corrupt_rank` >= 0 flips one word of the first chunk it receives.
std::vector<int> RunPlan(const std::vector<CollectiveKind>& kinds, int n, size_t words, int corrupt_rank = -1) {
  StepPlan plan = BuildStepPlan(kinds, n);
  std::vector<int> bad;
  for (size_t c = 0; c < kinds.size(); ++c) {
    const uint32_t base = PatternBase(7, 3, int(c));
    std::vector<Rank> ranks(n);
    for (int r = 0; r < n; ++r) {
      ranks[r].data.resize(n * words);
      ranks[r].output.resize(n * words);
      ranks[r].slots.resize(plan.slots[r]);
      FillInput(kinds[c], base, r, n, words, ranks[r].data.data());
    }
    bool corrupted = false;
    for (size_t k = 0; k < plan.plans[0][c].phases.size(); ++k) {
      for (int r = 0; r < n; ++r)
        for (const SendOp& s : plan.plans[r][c].phases[k].sends) {
          auto& slot = ranks[s.peer].slots[s.remote_slot];
          slot.assign(ranks[r].data.begin() + s.chunk * words, ranks[r].data.begin() + (s.chunk + 1) * words);
          if (s.peer == corrupt_rank && !corrupted) slot[0] ^= 1, corrupted = true;
        }
      for (int r = 0; r < n; ++r)
        for (const RecvOp& v : plan.plans[r][c].phases[k].recvs) {
          auto& dst = kinds[c] == CollectiveKind::kAllToAll ? ranks[r].output : ranks[r].data;
          EXPECT_EQ(ranks[r].slots[v.slot].size(), words);
          ApplyReceive(v.reduce, ranks[r].slots[v.slot].data(), dst.data() + v.chunk * words, words);
        }
    }
    int total = 0;
    for (int r = 0; r < n; ++r)
      total += CountBadChunks(kinds[c], base, r, n, words, ranks[r].data.data(), ranks[r].output.data());
    bad.push_back(total);
  }
  return bad;
}

const std::vector<CollectiveKind> kAll = {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                                          CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll};

TEST(CollectivePlan, EveryKindProducesTheExpectedResultForTwoToNineRanks) {
  for (int n = 2; n <= 9; ++n) {
    std::vector<int> bad = RunPlan(kAll, n, 33);
    for (size_t c = 0; c < kAll.size(); ++c) EXPECT_EQ(bad[c], 0) << ToString(kAll[c]) << " n=" << n;
  }
}

TEST(CollectivePlan, OneCorruptedWordIsDetected) {
  for (auto kind : kAll) {
    std::vector<int> bad = RunPlan({kind}, 4, 16, /*corrupt_rank=*/2);
    EXPECT_GT(bad[0], 0) << ToString(kind);
  }
}

TEST(CollectivePlan, PhaseCountsAndSlotsMatchTheRingAlgorithms) {
  StepPlan p = BuildStepPlan({CollectiveKind::kAllReduce, CollectiveKind::kAllToAll}, 8);
  EXPECT_EQ(p.plans[0][0].phases.size(), 14u);  // 2(N-1)
  EXPECT_EQ(p.plans[0][1].phases.size(), 1u);
  EXPECT_EQ(p.slots[3], 14 + 7);
  for (int r = 0; r < 8; ++r)
    for (const Phase& ph : p.plans[r][0].phases) {
      ASSERT_EQ(ph.sends.size(), 1u);
      EXPECT_EQ(ph.sends[0].peer, (r + 1) % 8);
    }
  EXPECT_THROW(BuildStepPlan({CollectiveKind::kAllReduce}, 1), std::invalid_argument);
}

TEST(CollectivePlan, BusBandwidthFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kAllGather, 8), 0.875);
  EXPECT_EQ(ParseCollectiveKind("all_to_all"), CollectiveKind::kAllToAll);
  EXPECT_FALSE(ParseCollectiveKind("broadcast"));
}

TEST(CollectiveData, ChecksumSeesEveryByte) {
  std::vector<uint8_t> a(4096, 5);
  const uint32_t h = Checksum24(a.data(), a.size());
  EXPECT_LE(h, 0xffffffu);
  for (size_t i : {0u, 7u, 8u, 4095u}) {
    auto b = a;
    b[i] ^= 0x40;
    EXPECT_NE(Checksum24(b.data(), b.size()), h) << i;
  }
}

}  // namespace
}  // namespace mrclab::harness
