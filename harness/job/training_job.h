// The real-time driver of the training workload (workload.h) on a deployed netns lab: one
// AsioEndpoint per host (UDP sockets in the host's namespace; endpoints spread over
// `io_threads` io_contexts), one timer per host for the workload's compute phases, and a
// coordinator thread that releases all ranks into a step together (as the synchronous
// collectives of data-parallel training do), waits for every rank, and records the step.
//
// Like NCCL's watchdog, a step that exceeds `step_timeout_seconds` interrupts the job; so does a
// QP error (RC's retry exhaustion), as it would abort a real job. Times are unix seconds.
#pragma once

#include <atomic>
#include <memory>

#include "emulator/resolved_lab.h"
#include "harness/job/job.h"

namespace mrclab::harness {

class TrainingJob : public Job {
 public:
  // Throws std::invalid_argument for a config the lab cannot run (unknown host, < 2 ranks...).
  TrainingJob(const emulator::ResolvedLab& lab, JobConfig config, EventFn on_event, StepFn on_step);
  ~TrainingJob() override;
  TrainingJob(const TrainingJob&) = delete;
  TrainingJob& operator=(const TrainingJob&) = delete;

  void Start() override;
  bool WaitForSteps(uint64_t steps, double timeout_seconds) override;
  void RequestStop() override;
  JobResult Wait() override;
  JobState state() const override { return state_.load(); }
  uint64_t steps_done() const override { return steps_done_.load(); }
  int ranks() const override;
  int SetEvDenied(const std::string& host_a, const std::string& host_b, int ev, bool denied) override;
  int SetPortEnabled(const std::string& host, int plane, bool enabled) override;
  std::vector<EvSnapshot> SnapshotEvs() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<JobState> state_{JobState::kIdle};
  std::atomic<uint64_t> steps_done_{0};
};

}  // namespace mrclab::harness
