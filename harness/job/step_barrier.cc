#include "harness/job/step_barrier.h"

#include <chrono>

#include "emulator/wall_clock.h"

namespace mrclab::harness {

using Clock = std::chrono::steady_clock;

void StepBarrier::RankDone() {
  std::lock_guard lock(mu_);
  ++done_ranks_;
  cv_.notify_all();
}

void StepBarrier::Fail(const std::string& reason) {
  std::lock_guard lock(mu_);
  if (failure_.empty()) failure_ = reason;
  cv_.notify_all();
}

void StepBarrier::RequestStop() {
  std::lock_guard lock(mu_);
  stop_requested_ = true;
}

void StepBarrier::Destroy() {
  std::lock_guard lock(mu_);
  stop_requested_ = true;
  if (failure_.empty()) failure_ = "job destroyed";
  cv_.notify_all();
}

JobResult StepBarrier::Run(const Hooks& hooks, const std::function<void(const StepRecord&)>& on_step) {
  JobResult result;
  const auto t0 = Clock::now();
  for (uint64_t step = 0;; ++step) {
    std::unique_lock lock(mu_);
    if (stop_requested_ || (max_steps_ && step >= max_steps_)) {
      result.state = JobState::kCompleted;
      break;
    }
    done_ranks_ = 0;
    lock.unlock();
    const double start = emulator::UnixNow();
    const auto began = Clock::now();
    hooks.begin(step);
    lock.lock();
    const auto deadline =
        began + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(step_timeout_seconds_));
    const bool finished = cv_.wait_until(lock, deadline, [&] { return done_ranks_ == ranks_ || !failure_.empty(); });
    if (!failure_.empty()) {
      result.state = JobState::kInterrupted;
      result.reason = "step " + std::to_string(step) + ": " + failure_;
      break;
    }
    if (!finished) {
      const int done = done_ranks_;
      lock.unlock();
      const std::string where = hooks.unfinished(step, done);
      lock.lock();
      result.state = JobState::kInterrupted;
      result.reason = "watchdog: step " + std::to_string(step) + " did not finish within " +
                      std::to_string(step_timeout_seconds_) + " s (" + std::to_string(done) + " of " +
                      std::to_string(ranks_) + " ranks done)" + where;
      break;
    }
    StepRecord rec = hooks.assemble(step);
    rec.seconds = std::chrono::duration<double>(Clock::now() - began).count();
    rec.start = start;
    rec.end = start + rec.seconds;
    result.steps = step + 1;
    result.bytes_verified += rec.bytes_verified;
    result.bytes_bad += rec.bytes_bad;
    result.retransmissions += rec.retransmissions;
    lock.unlock();
    if (on_step) on_step(rec);
    lock.lock();
    steps_done_.store(step + 1);
    cv_.notify_all();
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  {
    std::lock_guard lock(mu_);
    state_.store(result.state);
  }
  cv_.notify_all();
  return result;
}

bool StepBarrier::WaitForSteps(uint64_t steps, double timeout_seconds) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, std::chrono::duration<double>(timeout_seconds), [&] {
    return steps_done_.load() >= steps || state_.load() != JobState::kRunning;
  });
  return steps_done_.load() >= steps;
}

}  // namespace mrclab::harness
