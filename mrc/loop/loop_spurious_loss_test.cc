// Reordering that is not loss: one EV much slower than the others, no packet dropped. MRC must
// find out that the losses it declared there were spurious (the first transmission was
// acknowledged after all, or the responder saw a packet twice), take them back (the EV returns
// to GOOD at once) and widen its reorder window until the slow EV no longer looks lossy.
// (That real losses are never taken back is checked by every case of loop_transfer_test's
// RunLossCase.)
#include <gtest/gtest.h>

#include "mrc/loop/loop_pair_testing.h"

namespace mrclab::mrc {
namespace {

using testing::LoopPair;
using testing::SmallConfig;

constexpr uint16_t kSlowEv = 3;

// 8 EVs with a 5 us one-way delay each, except kSlowEv's 20 us (both directions: its ACKs
// come back on it too): an RTT of 40 us against 10 us, far beyond a window of one minimum RTT.
void MakeOneEvSlow(LoopPair& pair) {
  for (uint16_t ev = 0; ev < 8; ++ev)
    for (int h : {0, 1})
      pair.net().Path(h, ev).delay = Duration::Microseconds(ev == kSlowEv ? 20 : 5);
}

struct Rounds {
  uint64_t first_losses, second_losses;
};

// Two rounds of writes; returns the losses declared in each.
Rounds RunTwoRounds(LoopPair& pair) {
  pair.PostWrites(20, 16 * 1024, false);
  EXPECT_TRUE(pair.RunToCompletion());
  const uint64_t first = pair.qa().stats().rack_losses;
  pair.PostWrites(20, 16 * 1024, false, 20 * 16 * 1024);
  EXPECT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
  return {first, pair.qa().stats().rack_losses - first};
}

TEST(LoopSpuriousLossTest, ASlowEvIsLearnedNotMarkedBad) {
  LoopPair pair(SmallConfig(TransportMode::kMrc, 8));
  MakeOneEvSlow(pair);
  const Rounds r = RunTwoRounds(pair);
  const QpStats& s = pair.qa().stats();

  // The first round declares losses on the slow EV and proves them spurious...
  EXPECT_GT(r.first_losses, 0u);
  EXPECT_GT(s.spurious_losses, 0u);
  EXPECT_EQ(s.rto_fired, 0u);
  // ...the second, with the window widened, declares none.
  EXPECT_EQ(r.second_losses, 0u) << "first round: " << r.first_losses;
  // Every loss was counted against the slow EV, and every one was taken back: no packet was
  // dropped. (Copies that arrive twice together each get an ACK echoing them, and a proof that
  // comes after the window moved past its packet still counts.)
  const EvStatus slow = pair.qa().ListEvs()[kSlowEv];
  EXPECT_EQ(slow.counters.spurious_losses, s.spurious_losses);
  EXPECT_EQ(slow.counters.losses, s.rack_losses);
  EXPECT_EQ(s.spurious_losses, s.rack_losses);
  EXPECT_EQ(slow.state, EvState::kGood);
  // Whenever those losses made the EV ASSUMED_BAD, the proof brought it back at once.
  int undone = 0;
  for (const auto& e : pair.events_a())
    if (auto* c = std::get_if<EvStateChanged>(&e); c && c->reason == EvReason::kSpuriousLoss) ++undone;
  EXPECT_EQ(undone, pair.CountEvTransitions(slow.id, EvState::kAssumedBad));
  // The responder flags the copies it received twice (D-SACK).
  if (pair.qb().stats().duplicates_received > 0) {
    EXPECT_GT(s.duplicate_acks_received, 0u);
  }
}

// A slow EV holds back the cumulative point while the fast EVs run more than one SACK bitmap
// (64 PSNs) past it. Every packet that arrived must still be reported by some ACK: one left out
// looks lost to RACK (a packet sent after it was acknowledged), and the loss is counted
// against a fast EV that lost nothing.
TEST(LoopSpuriousLossTest, ArrivalsFarPastASlowPacketAreReportedNotDeclaredLost) {
  constexpr uint16_t kSlow = 0;  // the EV every QP sprays first
  LoopPair pair(SmallConfig(TransportMode::kMrc, 8));
  for (uint16_t ev = 0; ev < 8; ++ev)
    for (int h : {0, 1})
      pair.net().Path(h, ev).delay = Duration::Microseconds(ev == kSlow ? 20 : 5);
  pair.PostWrites(20, 16 * 1024, false);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
  for (const EvStatus& ev : pair.qa().ListEvs()) {
    if (ev.id == kSlow) continue;
    EXPECT_EQ(ev.counters.losses, 0u) << "EV " << ev.id << " lost nothing";
  }
  EXPECT_EQ(pair.qa().stats().rto_fired, 0u);
}

TEST(LoopSpuriousLossTest, WithoutWideningTheSlowEvKeepsLookingLossy) {
  QpConfig config = SmallConfig(TransportMode::kMrc, 8);
  config.reorder_window_max_srtts = 0;  // the window never grows beyond one minimum RTT
  LoopPair pair(config);
  MakeOneEvSlow(pair);
  const Rounds r = RunTwoRounds(pair);
  EXPECT_GT(r.second_losses, 0u);
}

TEST(LoopSpuriousLossTest, ADeadEvBesideASlowOneIsNeverTakenBack) {
  LoopPair pair(SmallConfig(TransportMode::kMrc, 8));
  MakeOneEvSlow(pair);
  constexpr uint16_t kDeadEv = 2;
  for (int h : {0, 1}) pair.net().Path(h, kDeadEv).drop = [](const DropContext&) { return true; };
  RunTwoRounds(pair);
  EXPECT_GT(pair.qa().stats().spurious_losses, 0u);  // the slow EV's
  for (const auto& e : pair.events_a())
    if (auto* c = std::get_if<EvStateChanged>(&e); c && c->ev == kDeadEv) {
      EXPECT_NE(c->reason, EvReason::kSpuriousLoss) << "the dead EV was taken back at " << c->at.nanoseconds();
    }
  EXPECT_EQ(pair.qa().ListEvs()[kDeadEv].state, EvState::kAssumedBad);
  EXPECT_EQ(pair.qa().ListEvs()[kDeadEv].counters.spurious_losses, 0u);
}

}  // namespace
}  // namespace mrclab::mrc
