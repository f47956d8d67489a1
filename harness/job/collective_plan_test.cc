// Runs every collective's plan in memory, phase by phase, and checks the closed-form results:
// the algorithms are right before any packet is sent.
#include <gtest/gtest.h>

#include <vector>

#include "harness/job/collective_data.h"
#include "harness/job/collective_plan.h"
#include "harness/job/workload.h"

namespace mrclab::harness {
namespace {

struct Rank {
  std::vector<uint32_t> data, output;
  std::vector<std::vector<uint32_t>> slots;
};

// Executes the step plan; `corrupt_rank` >= 0 flips one word of the first chunk it receives.
std::vector<int> RunPlan(const std::vector<CollectiveKind>& kinds, int n, size_t words, int corrupt_rank = -1) {
  StepPlan plan(kinds, n);
  std::vector<int> bad;
  for (size_t c = 0; c < kinds.size(); ++c) {
    const uint32_t base = PatternBase(7, 3, int(c));
    std::vector<Rank> ranks(n);
    for (int r = 0; r < n; ++r) {
      ranks[r].data.resize(n * words);
      ranks[r].output.resize(n * words);
      ranks[r].slots.resize(plan.slots());
      FillInput(kinds[c], base, r, n, words, ranks[r].data.data());
    }
    bool corrupted = false;
    for (size_t k = 0; k < plan.phases(c); ++k) {
      for (int r = 0; r < n; ++r)
        for (const SendOp& s : plan.At(r, c, k).sends) {
          auto& slot = ranks[s.peer].slots[s.remote_slot];
          slot.assign(ranks[r].data.begin() + s.chunk * words, ranks[r].data.begin() + (s.chunk + 1) * words);
          if (s.peer == corrupt_rank && !corrupted) slot[0] ^= 1, corrupted = true;
        }
      for (int r = 0; r < n; ++r)
        for (const RecvOp& v : plan.At(r, c, k).recvs) {
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
  StepPlan p({CollectiveKind::kAllReduce, CollectiveKind::kAllToAll}, 8);
  EXPECT_EQ(p.phases(0), 14u);  // 2(N-1)
  EXPECT_EQ(p.phases(1), 1u);
  EXPECT_EQ(p.slots(), 14 + 7);
  for (int r = 0; r < 8; ++r)
    for (size_t k = 0; k < p.phases(0); ++k) {
      const Phase ph = p.At(r, 0, k);
      ASSERT_EQ(ph.sends.size(), 1u);
      EXPECT_EQ(ph.sends[0].peer, (r + 1) % 8);
      EXPECT_EQ(ph.recvs[0].slot, static_cast<int>(k));
    }
  EXPECT_THROW(StepPlan({CollectiveKind::kAllReduce}, 1), std::invalid_argument);
}

// Every send names the slot its receiver reads the same (collective, phase, sender) from.
TEST(CollectivePlan, SendersAndReceiversAgreeOnSlots) {
  for (int n : {2, 3, 8, 13}) {
    StepPlan p(kAll, n);
    for (size_t c = 0; c < kAll.size(); ++c)
      for (size_t k = 0; k < p.phases(c); ++k)
        for (int r = 0; r < n; ++r)
          for (const SendOp& s : p.At(r, c, k).sends) {
            int found = 0;
            for (const RecvOp& v : p.At(s.peer, c, k).recvs)
              if (v.peer == r) {
                EXPECT_EQ(v.slot, s.remote_slot);
                ++found;
              }
            EXPECT_EQ(found, 1) << ToString(kAll[c]) << " n=" << n;
          }
  }
}

// The plan is computed, not stored: the paper's 131,072 ranks cost nothing to describe.
TEST(CollectivePlan, ClusterScalePlansAreComputedOnDemand) {
  StepPlan p({CollectiveKind::kAllReduce}, 131072);
  EXPECT_EQ(p.slots(), 2 * 131071);
  const Phase last = p.At(5, 0, p.phases(0) - 1);
  EXPECT_EQ(last.sends[0].peer, 6);
  EXPECT_EQ(last.recvs[0].peer, 4);
  EXPECT_EQ(last.recvs[0].slot, 2 * 131071 - 1);
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

// qps_per_peer: a chunk's pieces, one per QP, cover it exactly, in order, in whole words.
TEST(ChunkPieces, CoverTheChunkInOrderInWholeWords) {
  for (size_t words : {1u, 5u, 64u, 1000u, 262144u})
    for (int pieces : {1, 2, 3, 8, 64}) {
      if (words < static_cast<size_t>(pieces)) continue;
      size_t next = 0, smallest = SIZE_MAX, largest = 0;
      for (int i = 0; i < pieces; ++i) {
        const Piece p = PieceOf(words, pieces, i);
        EXPECT_EQ(p.offset, next) << words << "/" << pieces << " piece " << i;
        EXPECT_EQ(p.bytes % 4, 0u);
        EXPECT_GT(p.bytes, 0u);
        next = p.offset + p.bytes;
        smallest = std::min(smallest, p.bytes);
        largest = std::max(largest, p.bytes);
      }
      EXPECT_EQ(next, 4 * words) << words << "/" << pieces;
      EXPECT_LE(largest - smallest, 4u) << "pieces differ by one word at most";
    }
}

}  // namespace
}  // namespace mrclab::harness
