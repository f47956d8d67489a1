// The real-time drivers' step barrier with ranks played by a thread: steps recorded once every
// rank is done, a failure or the watchdog interrupts with the step named, a stop finishes the
// current step.
#include "harness/job/step_barrier.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace mrclab::harness {
namespace {

// Ranks that finish each step `ranks_finishing` of `ranks` on another thread, `fail_at` fails.
struct FakeRanks {
  FakeRanks(StepBarrier& b, int finishing, int64_t fail = -1) : barrier(b), ranks_finishing(finishing), fail_at(fail) {}
  StepBarrier& barrier;
  int ranks_finishing;
  int64_t fail_at;
  std::vector<std::thread> threads;

  StepBarrier::Hooks Hooks() {
    StepBarrier::Hooks h;
    h.begin = [this](uint64_t step) {
      threads.emplace_back([this, step] {
        if (static_cast<int64_t>(step) == fail_at) return barrier.Fail("QP x entered the error state");
        for (int r = 0; r < ranks_finishing; ++r) barrier.RankDone();
      });
    };
    h.assemble = [](uint64_t step) {
      StepRecord rec;
      rec.step = step;
      rec.bytes_verified = 100;
      return rec;
    };
    h.unfinished = [](uint64_t, int) { return std::string("; rank 2 waits"); };
    return h;
  }
  ~FakeRanks() {
    for (auto& t : threads) t.join();
  }
};

TEST(StepBarrier, RecordsEveryStepUntilMaxSteps) {
  StepBarrier barrier(3, 5, 4);
  FakeRanks ranks(barrier, 3);
  std::vector<StepRecord> steps;
  barrier.MarkRunning();
  const JobResult r = barrier.Run(ranks.Hooks(), [&](const StepRecord& s) { steps.push_back(s); });
  EXPECT_EQ(r.state, JobState::kCompleted);
  EXPECT_EQ(r.steps, 4u);
  EXPECT_EQ(r.bytes_verified, 400u);
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[3].step, 3u);
  EXPECT_GE(steps[3].end, steps[3].start);
  EXPECT_EQ(barrier.steps_done(), 4u);
  EXPECT_EQ(barrier.state(), JobState::kCompleted);
}

TEST(StepBarrier, AFailureInterruptsAtItsStep) {
  StepBarrier barrier(2, 5, 10);
  FakeRanks ranks(barrier, 2, 2);
  const JobResult r = barrier.Run(ranks.Hooks(), nullptr);
  EXPECT_EQ(r.state, JobState::kInterrupted);
  EXPECT_EQ(r.steps, 2u);
  EXPECT_EQ(r.reason, "step 2: QP x entered the error state");
}

TEST(StepBarrier, TheWatchdogNamesHowManyRanksWereDone) {
  StepBarrier barrier(3, 0.05, 10);
  FakeRanks ranks(barrier, 2);
  const JobResult r = barrier.Run(ranks.Hooks(), nullptr);
  EXPECT_EQ(r.state, JobState::kInterrupted);
  EXPECT_EQ(r.steps, 0u);
  EXPECT_EQ(r.reason.rfind("watchdog: step 0 did not finish within 0.05", 0), 0u) << r.reason;
  EXPECT_NE(r.reason.find("(2 of 3 ranks done); rank 2 waits"), std::string::npos) << r.reason;
}

TEST(StepBarrier, AStopFinishesTheCurrentStep) {
  StepBarrier barrier(1, 5, 0);
  FakeRanks ranks(barrier, 1);
  barrier.MarkRunning();
  std::thread stopper([&] {
    EXPECT_TRUE(barrier.WaitForSteps(3, 10));
    barrier.RequestStop();
  });
  const JobResult r = barrier.Run(ranks.Hooks(), nullptr);
  stopper.join();
  EXPECT_EQ(r.state, JobState::kCompleted);
  EXPECT_GE(r.steps, 3u);
}

}  // namespace
}  // namespace mrclab::harness
