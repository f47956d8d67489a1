// The step barrier of the real-time drivers (TrainingJob: ranks on Asio endpoints; KernelRcJob:
// ranks in VM hosts), as synchronous data-parallel training runs: every rank is released into a
// step together and the step is recorded once every rank is done. Like NCCL's watchdog, a step
// over `step_timeout_seconds` interrupts the job; so does a failure (a QP error).
//
//   Run (the coordinator thread)                     the driver's threads
//   ----------------------------                     --------------------
//   begin(step): release every rank  ───────────►   ranks work; each finished rank:
//   wait: every rank done | a failure | timeout ◄───  report stored under mutex(), RankDone()
//   assemble(step) ─► start/end/seconds ─► on_step    a QP error: Fail(reason)
//   timeout: unfinished(step, done) ─► the watchdog's reason
//
// Times in records are unix seconds (start, end) and steady-clock seconds (seconds).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "harness/job/job_types.h"

namespace mrclab::harness {

class StepBarrier {
 public:
  struct Hooks {
    // Releases every rank into the step; the driver resets its reports first, under mutex().
    std::function<void(uint64_t step)> begin;
    // The ranks' reports as a record (collectives, bytes), under mutex(); Run sets its times.
    std::function<StepRecord(uint64_t step)> assemble;
    // The watchdog's evidence (its events) and its summary for the reason; without the lock.
    std::function<std::string(uint64_t step, int ranks_done)> unfinished;
  };

  StepBarrier(int ranks, double step_timeout_seconds, uint64_t max_steps)
      : ranks_(ranks), step_timeout_seconds_(step_timeout_seconds), max_steps_(max_steps) {}

  std::mutex& mutex() { return mu_; }
  void RankDone();                 // one more rank finished the current step
  void Fail(const std::string& reason);  // the first failure ends the job
  void RequestStop();              // finish the current step, then stop
  void Destroy();                  // stop now: the job is being destroyed

  void MarkRunning() { state_.store(JobState::kRunning); }
  // Steps until stopped, failed or max_steps; returns the result (seconds since it began).
  JobResult Run(const Hooks& hooks, const std::function<void(const StepRecord&)>& on_step);
  bool WaitForSteps(uint64_t steps, double timeout_seconds);
  JobState state() const { return state_.load(); }
  uint64_t steps_done() const { return steps_done_.load(); }

 private:
  const int ranks_;
  const double step_timeout_seconds_;
  const uint64_t max_steps_;
  std::mutex mu_;
  std::condition_variable cv_;
  int done_ranks_ = 0;
  std::string failure_;
  bool stop_requested_ = false;
  std::atomic<JobState> state_{JobState::kIdle};
  std::atomic<uint64_t> steps_done_{0};
};

}  // namespace mrclab::harness
