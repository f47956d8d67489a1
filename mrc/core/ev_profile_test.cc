#include "mrc/core/ev_profile.h"

#include <gtest/gtest.h>

#include "mrc/core/ev_selector.h"
#include "mrc/core/prober.h"

namespace mrclab::mrc {
namespace {

Timestamp T(int64_t us) { return Timestamp::FromNanoseconds(us * 1000); }
const Duration kPenalty = Duration::Microseconds(10);

TEST(EvProfileTest, SpreadsEvenlyOverPlanes) {
  auto evs = MakeEvProfile(8, 4);
  ASSERT_EQ(evs.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(evs[i].id, i);
    EXPECT_EQ(evs[i].plane, i % 4);
  }
}

TEST(EvProfileTest, LossesWithinTheCorrelatedLossWindowCountOnce) {
  EventSink sink;
  EvPolicyConfig config;
  config.losses_to_bad = 2;
  config.correlated_loss_window = Duration::Microseconds(100);
  EvTable table(7, MakeEvProfile(4, 1), config, &sink);
  EXPECT_FALSE(table.OnLoss(1, T(0), false, kPenalty));
  EXPECT_FALSE(table.OnLoss(1, T(0), false, kPenalty));   // the same sweep
  EXPECT_FALSE(table.OnLoss(1, T(99), false, kPenalty));  // the same stall
  EXPECT_EQ(table.at(1).counters.losses, 3u);             // every loss is still counted as one
  EXPECT_EQ(table.at(1).state, EvState::kGood);
  EXPECT_TRUE(table.OnLoss(1, T(100), false, kPenalty));  // a window later: a second, separate loss
  EXPECT_EQ(table.at(1).state, EvState::kAssumedBad);
  // A delivery in between starts the count afresh.
  EXPECT_FALSE(table.OnLoss(2, T(0), false, kPenalty));
  table.OnDelivered(2, T(50), std::nullopt, Duration::Zero(), kPenalty);
  EXPECT_FALSE(table.OnLoss(2, T(60), false, kPenalty));
  EXPECT_EQ(table.at(2).state, EvState::kGood);
  // Without the window every loss counts (the fabric semantics).
  EvTable fabric(8, MakeEvProfile(4, 1), EvPolicyConfig{.losses_to_bad = 2}, &sink);
  EXPECT_FALSE(fabric.OnLoss(1, T(0), false, kPenalty));
  EXPECT_TRUE(fabric.OnLoss(1, T(0), false, kPenalty));
}

TEST(EvProfileTest, ConsecutiveLossesMakeAnEvAssumedBadAndProbesBringItBack) {
  EventSink sink;
  EvPolicyConfig config;
  config.losses_to_bad = 2;
  config.probes_to_good = 3;
  EvTable table(7, MakeEvProfile(4, 1), config, &sink);
  EXPECT_FALSE(table.OnLoss(1, T(0), false, kPenalty));
  EXPECT_FALSE(table.Usable(1, T(5)));  // penalized
  EXPECT_TRUE(table.Usable(1, T(11)));
  EXPECT_TRUE(table.OnLoss(1, T(20), false, kPenalty));
  EXPECT_EQ(table.at(1).state, EvState::kAssumedBad);
  auto e = sink.Pop();
  ASSERT_TRUE(e);
  auto& change = std::get<EvStateChanged>(*e);
  EXPECT_EQ(change.qpn, 7u);
  EXPECT_EQ(change.ev, 1);
  EXPECT_EQ(change.to, EvState::kAssumedBad);
  EXPECT_EQ(change.reason, EvReason::kLoss);

  table.OnProbeReply(1, T(30));
  table.OnProbeTimeout(1, T(31));  // a failure restarts the count
  table.OnProbeReply(1, T(32));
  table.OnProbeReply(1, T(33));
  EXPECT_EQ(table.at(1).state, EvState::kAssumedBad);
  table.OnProbeReply(1, T(34));
  EXPECT_EQ(table.at(1).state, EvState::kGood);
  e = sink.Pop();
  ASSERT_TRUE(e);
  EXPECT_EQ(std::get<EvStateChanged>(*e).reason, EvReason::kProbesSucceeded);
}

TEST(EvProfileTest, DeliveryResetsTheLossCount) {
  EvTable table(1, MakeEvProfile(4, 1), EvPolicyConfig{}, nullptr);
  table.OnLoss(2, T(0), false, kPenalty);
  table.OnDelivered(2, T(1), std::nullopt, Duration::Zero(), kPenalty);
  EXPECT_FALSE(table.OnLoss(2, T(2), false, kPenalty));
  EXPECT_EQ(table.at(2).state, EvState::kGood);
}

TEST(EvProfileTest, TimeoutIsImmediatelyBadButMinActiveIsKept) {
  EvPolicyConfig config;
  config.min_active = 2;
  EvTable table(1, MakeEvProfile(3, 1), config, nullptr);
  EXPECT_TRUE(table.OnLoss(0, T(0), true, kPenalty));
  EXPECT_FALSE(table.OnLoss(1, T(0), true, kPenalty));  // would leave 1 < min_active GOOD
  EXPECT_EQ(table.GoodCount(), 2u);
  EXPECT_FALSE(table.Deny(2, T(1)));
  EXPECT_EQ(table.at(2).state, EvState::kGood);
}

TEST(EvProfileTest, ControllerDenyAllowAndPlanes) {
  EventSink sink;
  EvTable table(1, MakeEvProfile(8, 2), EvPolicyConfig{}, &sink);
  EXPECT_TRUE(table.Deny(3, T(0)));
  EXPECT_EQ(table.at(3).state, EvState::kDenied);
  EXPECT_FALSE(table.Allow(4, T(0)));  // not denied
  EXPECT_TRUE(table.Allow(3, T(1)));
  EXPECT_EQ(table.SetPlane(1, false, T(2)), 4u);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(table.at(i).state, i % 2 ? EvState::kDenied : EvState::kGood);
  EXPECT_EQ(table.SetPlane(1, true, T(3)), 4u);
  EXPECT_EQ(table.GoodCount(), 8u);
  EXPECT_EQ(sink.size(), 2u + 8u);
}

TEST(EvSelectorTest, RoundRobinSkipsBadPenalizedAndExcluded) {
  EvTable table(1, MakeEvProfile(4, 1), EvPolicyConfig{}, nullptr);
  SprayingSelector sel;
  std::vector<size_t> picks;
  for (int i = 0; i < 8; ++i) picks.push_back(*sel.Pick(table, T(0)));
  EXPECT_EQ(picks, (std::vector<size_t>{0, 1, 2, 3, 0, 1, 2, 3}));
  table.Deny(1, T(0));
  table.OnLoss(2, T(0), false, kPenalty);  // penalized until 10 us
  picks.clear();
  for (int i = 0; i < 4; ++i) picks.push_back(*sel.Pick(table, T(1)));
  EXPECT_EQ(picks, (std::vector<size_t>{0, 3, 0, 3}));
  EXPECT_EQ(*sel.Pick(table, T(1), 0), 3u);
  EXPECT_EQ(*sel.Pick(table, T(1), 3), 0u);
}

TEST(EvSelectorTest, FallsBackInsteadOfStalling) {
  EvPolicyConfig config;
  config.min_active = 0;
  EvTable table(1, MakeEvProfile(2, 1), config, nullptr);
  SprayingSelector sel;
  table.OnLoss(0, T(0), false, kPenalty);
  table.OnLoss(1, T(0), false, kPenalty);
  ASSERT_TRUE(sel.Pick(table, T(1), 0));  // both penalized: still a GOOD one
  EXPECT_EQ(*sel.Pick(table, T(1), 0), 1u);
  table.OnLoss(0, T(0), true, kPenalty);
  table.OnLoss(1, T(0), true, kPenalty);
  EXPECT_EQ(table.GoodCount(), 0u);
  EXPECT_TRUE(sel.Pick(table, T(1)));  // all ASSUMED_BAD: still something
  table.Deny(0, T(2));
  table.Deny(1, T(2));
  EXPECT_FALSE(sel.Pick(table, T(3)));
}

TEST(EvSelectorTest, EcmpHashIsStableAndSpreads) {
  EXPECT_EQ(EcmpHashIndex(10, 20, 16), EcmpHashIndex(10, 20, 16));
  std::set<size_t> seen;
  for (uint32_t q = 0; q < 200; ++q) seen.insert(EcmpHashIndex(q, 7, 16));
  EXPECT_GT(seen.size(), 12u);
}

TEST(ProberTest, ProbesBadEvsAndReportsControllerProbes) {
  EventSink sink;
  EvPolicyConfig config;
  config.probe_interval = Duration::Microseconds(100);
  config.probe_timeout = Duration::Microseconds(50);
  EvTable table(9, MakeEvProfile(4, 1), config, &sink);
  Prober prober;
  EXPECT_FALSE(prober.Next(table, T(0)));
  table.OnLoss(2, T(0), true, kPenalty);
  sink.Pop();
  auto p = prober.Next(table, T(0));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->ev_index, 2u);
  EXPECT_FALSE(prober.Next(table, T(1)));  // one outstanding per EV
  EXPECT_EQ(prober.NextTimeout(table), T(50));
  prober.OnTimeout(table, T(50), &sink, 9);
  EXPECT_EQ(prober.NextTimeout(table), T(100));
  EXPECT_FALSE(prober.Next(table, T(99)));
  auto q = prober.Next(table, T(100));
  ASSERT_TRUE(q);
  EXPECT_EQ(prober.OnReply(q->probe_id, table, T(110), &sink, 9), Duration::Microseconds(10));

  const uint32_t id = prober.Request(0);
  auto c = prober.Next(table, T(120));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->probe_id, id);
  prober.OnReply(id, table, T(127), &sink, 9);
  auto e = sink.Pop();
  ASSERT_TRUE(e);
  auto& done = std::get<ProbeCompleted>(*e);
  EXPECT_EQ(done.ev, 0);
  EXPECT_EQ(done.rtt, Duration::Microseconds(7));
}

}  // namespace
}  // namespace mrclab::mrc
