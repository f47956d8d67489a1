// The real-time driver of the training workload (workload.h) on a deployed netns lab: one
// endpoint per host (AsioEndpoint: UDP sockets in the host's namespace; a VM host's
// RelayEndpoint: its sockets in the guest, vm_endpoint.h; spread over `io_threads` io_contexts), one timer per host for the workload's compute phases, and a
// coordinator thread that runs the step barrier (step_barrier.h): all ranks released into a
// step together, the step recorded once every rank is done, the job interrupted by a QP error
// (RC's retry exhaustion) or a step over `step_timeout_seconds`. Times are unix seconds.
#pragma once

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
  JobState state() const override;
  uint64_t steps_done() const override;
  int ranks() const override;
  EvControlResult SetEvDenied(const std::string& host_a, const std::string& host_b, int ev, bool denied) override;
  int SetPortEnabled(const std::string& host, int plane, bool enabled) override;
  void VisitEvs(const std::function<void(const EvSnapshot&)>& visit) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mrclab::harness
