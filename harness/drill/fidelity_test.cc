#include "harness/drill/fidelity.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace mrclab::harness {
namespace {

FidelitySample Calm(double t) { return {t, 0.40, 0.0, 0.02, 0.1, 0.5}; }
FidelitySample Hogged(double t) { return {t, 0.99, 0.0, 0.45, 3.0, 12.0}; }

TEST(Fidelity, BusyCpusAloneOrOneLateTimerAreNotSaturation) {
  EXPECT_FALSE(Saturated(Calm(1)));
  EXPECT_TRUE(Saturated(Hogged(1)));
  EXPECT_FALSE(Saturated({1, 0.99, 0, 0.05, 0.5, 1}));    // busy forwarding, threads not waiting
  EXPECT_FALSE(Saturated({1, 0.60, 0, 0.50, 8, 40}));     // somewhat late timers, CPUs to spare
  EXPECT_EQ(Classify({1, 0.97, 0, 0.05, 6, 9}), Saturation::kBusy);      // busy and timers late
  EXPECT_EQ(Classify({1, 0.75, 0.45, 0.5, 51, 129}), Saturation::kSteal);  // a VM on a busy host
  EXPECT_EQ(Classify({1, 0.60, 0.05, 0.3, 25, 60}), Saturation::kLate);   // timers tens of ms late
}

TEST(Fidelity, TheReasonNamesWhatSaturatedTheMachine) {
  std::vector<FidelitySample> samples;
  for (int t = 1; t <= 10; ++t) samples.push_back({double(t), 0.75, 0.45, 0.5, 51, 129});
  const FidelityReport r = EvaluateFidelity(samples, {{"rc baseline", 0, 10}}, {}, {});
  ASSERT_EQ(r.reasons.size(), 1u);
  EXPECT_EQ(r.reasons[0], "the machine was saturated during rc baseline (10 of 10 s: the hypervisor taking the "
                          "CPUs (steal) 10 s), so its step times measured this machine, not the fabric");
  EXPECT_DOUBLE_EQ(r.steal_max, 0.45);
}

TEST(Fidelity, AFaultWindowOnASaturatedMachineIsInconclusive) {
  std::vector<FidelitySample> samples;
  for (int t = 1; t <= 20; ++t) samples.push_back(t >= 11 && t <= 14 ? Hogged(t) : Calm(t));
  const std::vector<Interval> intervals = {{"baseline", 0, 9}, {"fault 0 link_flap (window 0)", 10, 13 + kSettleSeconds}};
  const FidelityReport r = EvaluateFidelity(samples, intervals, {{10, 13}}, {});
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.intervals.size(), 2u);
  EXPECT_FALSE(r.intervals[0].emulator_bound);
  EXPECT_TRUE(r.intervals[1].emulator_bound);
  EXPECT_EQ(r.intervals[1].saturated, 4);
  EXPECT_EQ(r.intervals[1].seconds, 5);  // the seconds ending at 11..15 overlap [10, 15]
  ASSERT_EQ(r.reasons.size(), 1u);
  EXPECT_NE(r.reasons[0].find("fault 0 link_flap (window 0)"), std::string::npos);
  EXPECT_EQ(r.saturated, 4);
  EXPECT_DOUBLE_EQ(r.cpu_busy_max, 0.99);
  EXPECT_EQ(ToJson(r)["status"], "inconclusive");
}

TEST(Fidelity, OneSaturatedSecondOrASmallShareIsNoise) {
  std::vector<FidelitySample> samples;
  for (int t = 1; t <= 40; ++t) samples.push_back(t == 12 || t == 30 || t == 31 ? Hogged(t) : Calm(t));
  // Window A has one saturated second of 6; window B two of 21 (under a quarter).
  const FidelityReport r = EvaluateFidelity(samples, {{"a", 10, 15}, {"b", 15, 35}}, {}, {});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.intervals[0].saturated, 1);
  EXPECT_EQ(r.intervals[1].saturated, 2);
  EXPECT_EQ(ToJson(r)["status"], "ok");
}

TEST(Fidelity, RoutingDownsWithoutAFaultAreCountedNotJudged) {
  std::vector<FidelitySample> samples;
  for (int t = 1; t <= 60; ++t) samples.push_back(Calm(t));
  // Fault 10..20: downs at 5 (before), 12 (during), 30 (settling), 40 (after settling).
  const FidelityReport r = EvaluateFidelity(samples, {}, {{10, 20}}, {5, 12, 30, 40});
  EXPECT_EQ(r.unexplained_routing_downs, 2);
  EXPECT_TRUE(r.ok());
  // A fault until the end explains everything after it.
  EXPECT_EQ(EvaluateFidelity(samples, {}, {{10, 0}}, {5, 12, 30, 40}).unexplained_routing_downs, 1);
}

TEST(Fidelity, SimulatedTimeIsNotMeasured) {
  EXPECT_EQ(ToJson(FidelityReport{})["status"], "not measured");
}

}  // namespace
}  // namespace mrclab::harness
