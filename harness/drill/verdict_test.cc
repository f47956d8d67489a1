// SLO evaluation and recovery times on synthetic step series: a drill that must fail does.
#include <gtest/gtest.h>

#include "harness/drill/verdict.h"

namespace mrclab::harness {
namespace {

TransportRun MakeRun(std::vector<double> step_seconds, int baseline, JobState state = JobState::kCompleted) {
  TransportRun run;
  run.transport.name = "mrc";
  run.job.state = state;
  run.job.steps = step_seconds.size();
  double t = 1000;
  for (size_t i = 0; i < step_seconds.size(); ++i) {
    RecordedStep s;
    s.record.step = i;
    s.record.start = t;
    t += step_seconds[i];
    s.record.end = t;
    s.record.seconds = step_seconds[i];
    s.phase = static_cast<int>(i) < baseline ? StepPhase::kBaseline : StepPhase::kFaults;
    run.steps.push_back(s);
  }
  return run;
}

SloSpec Slo(const std::string& name, double max = 0) { return {"slos[0]", name, max, ""}; }

TEST(Verdict, StepStatsSeparateBaselineAndIgnoreWarmup) {
  TransportRun run = MakeRun({9, 1, 1, 1, 2, 2, 3}, 4);
  run.steps[0].phase = StepPhase::kWarmup;
  StepStats st = ComputeStepStats(run.steps);
  EXPECT_DOUBLE_EQ(st.baseline_p50, 1);
  EXPECT_DOUBLE_EQ(st.p50, 2);
  EXPECT_DOUBLE_EQ(st.max, 3);
}

TEST(Verdict, RatioSloPassesAndFails) {
  TransportRun run = MakeRun({1, 1, 1, 1, 1.1, 1.1, 1.9}, 4);
  auto pass = EvaluateSlos({Slo("step_time_p99_ratio", 2.0)}, {run});
  ASSERT_EQ(pass.size(), 1u);
  EXPECT_TRUE(pass[0].pass);
  auto fail = EvaluateSlos({Slo("step_time_p99_ratio", 1.5)}, {run});
  EXPECT_FALSE(fail[0].pass);
  EXPECT_GT(fail[0].value, 1.5);
}

TEST(Verdict, InterruptionAndLostBytesFail) {
  TransportRun run = MakeRun({1, 1, 1, 1}, 2, JobState::kInterrupted);
  run.job.reason = "watchdog";
  run.job.bytes_bad = 4096;
  auto r = EvaluateSlos({Slo("no_interruption"), Slo("bytes_lost", 0), Slo("step_time_p99_ratio", 10)}, {run});
  EXPECT_FALSE(r[0].pass);
  EXPECT_EQ(r[0].detail, "watchdog");
  EXPECT_FALSE(r[1].pass);
  EXPECT_FALSE(r[2].pass);  // an interrupted job never meets a step-time SLO
  EXPECT_FALSE(RodeThrough(run));
}

TEST(Verdict, SloLimitedToOneTransport) {
  TransportRun mrc = MakeRun({1, 1, 1}, 2), rc = MakeRun({1, 1, 1}, 2, JobState::kInterrupted);
  rc.transport.name = "rc";
  SloSpec only_mrc = Slo("no_interruption");
  only_mrc.transport = "mrc";
  auto r = EvaluateSlos({only_mrc}, {mrc, rc});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].pass);
}

TEST(Verdict, RecoveryIsTimeToFirstStepWithinTheBound) {
  TransportRun run = MakeRun({1, 1, 1, 5, 3, 1, 1}, 3);  // steps end at 1001..1013
  run.faults.push_back({0, "blackhole", "", {{1003.5, 1010}}, {}, {}});
  run.faults.push_back({1, "loss", "", {{1012.5, 0}}, {}, {}});
  run.faults.push_back({2, "flap", "", {{1020, 1021}}, {}, {}});  // after the last step
  ComputeRecovery(run, 1.2);
  ASSERT_TRUE(run.faults[0].recovery_seconds);
  EXPECT_DOUBLE_EQ(*run.faults[0].recovery_seconds, 1012 - 1003.5);
  EXPECT_DOUBLE_EQ(*run.faults[1].recovery_seconds, 0.5);
  EXPECT_FALSE(run.faults[2].recovery_seconds);
  auto r = EvaluateSlos({Slo("recovery_time_max", 10)}, {run});
  EXPECT_FALSE(r[0].pass);
}

TEST(Verdict, NotTestedNamesEveryPlannedWindowThatWasNotApplied) {
  TransportRun mrc = MakeRun({1, 1, 1}, 2), rc = MakeRun({1, 1}, 1, JobState::kInterrupted);
  rc.transport.name = "rc";
  for (TransportRun* run : {&mrc, &rc}) {
    run->faults.push_back({0, "flap", "flap a:b", {{1001, 1002}, {1003, 1004}}, {}, ""});
    run->faults.push_back({1, "blackhole", "blackhole c:d", {}, {}, ""});
  }
  mrc.faults[0].windows.pop_back();  // one of two flap windows never came
  const auto gaps = NotTested({mrc, rc}, {2, 1});
  // The interrupted rc job never reached them: that is its finding, not a gap.
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].rfind("mrc: fault 0 (flap a:b) applied in 1 of 2 windows", 0), 0u) << gaps[0];
  EXPECT_EQ(gaps[1].rfind("mrc: fault 1 (blackhole c:d) applied in 0 of 1 windows", 0), 0u) << gaps[1];
  mrc.faults[0].windows.push_back({1003, 1004});
  mrc.faults[1].windows.push_back({1005, 0});  // applied until the end
  EXPECT_TRUE(NotTested({mrc, rc}, {2, 1}).empty());
}

TEST(Verdict, AWindowThatMaxDurationCutShortIsNotTested) {
  TransportRun mrc = MakeRun({1, 1, 1}, 2);
  mrc.faults.push_back({0, "blackhole", "blackhole c:d", {{1001, 1001.5}}, {}, ""});
  EXPECT_TRUE(NotTested({mrc}, {1}).empty());
  mrc.faults[0].windows_cut_short = 1;  // planned for 2 s, ended by max_duration after 0.5 s
  const auto gaps = NotTested({mrc}, {1});
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0], "mrc: fault 0 (blackhole c:d) held 1 of its windows for less than planned (max_duration reached)");
}

TEST(Verdict, AnEvDenyThatQpsRefusedIsNotTested) {
  TransportRun mrc = MakeRun({1, 1, 1}, 2);
  mrc.faults.push_back({0, "ev_deny", "ev_deny a->b EVs 0,1", {{1001, 1002}}, {}, ""});
  mrc.faults[0].ev_denies = 4;
  EXPECT_TRUE(NotTested({mrc}, {1}).empty());
  mrc.faults[0].ev_denies_refused = 2;  // two QPs kept EV 1: it was their last GOOD one
  mrc.transport.min_active = 1;
  const auto gaps = NotTested({mrc}, {1});
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].rfind("mrc: fault 0 (ev_deny a->b EVs 0,1) was not applied in full: QPs kept 2 of 4 denied EVs", 0),
            0u)
      << gaps[0];
}

}  // namespace
}  // namespace mrclab::harness
