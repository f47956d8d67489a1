// The real-time driver of a training job over the kernel's RC on VM hosts: each VM host runs
// its ranks in /opt/mrclab-rc-ranks (emulator/netns/guest/mrclab_rc_ranks.cc, libibverbs on
// rdma_rxe), attached through the guest agent, with the plan of kernel_rc_plan.h; this side is
// the coordinator, with TrainingJob's step barrier (step_barrier.h): every rank released into a
// step, the step recorded once every rank reported, the job interrupted on a QP error (retry
// exceeded) or when a step exceeds `step_timeout_seconds` (the watchdog).
//
//   Start: attach one mrclab-rc-ranks per VM host ─► open (plan) ─► all listen ─► connect
//          ─► all connected
//   step:  {"op":"step"} to every host ─► rank_done per rank ─► StepRecord
//          qp_error from any host ─► "qp_state" event, job interrupted
//
// The kernel's RC has no EVs: controller faults touch no QP (the drill refuses them), and
// VisitEvs visits nothing. Retransmissions are rxe's retries (completer_retry_err) per VM.
#pragma once

#include <memory>

#include "emulator/resolved_lab.h"
#include "harness/job/job.h"

namespace mrclab::harness {

class KernelRcJob : public Job {
 public:
  // Throws std::invalid_argument for a config the VM hosts cannot run (a host that is not a VM
  // host, a transport other than RC, fewer than 2 ranks).
  KernelRcJob(const emulator::ResolvedLab& lab, JobConfig config, EventFn on_event, StepFn on_step);
  ~KernelRcJob() override;
  KernelRcJob(const KernelRcJob&) = delete;
  KernelRcJob& operator=(const KernelRcJob&) = delete;

  // Connects every QP before it returns; throws std::runtime_error naming the host whose
  // mrclab-rc-ranks could not start, listen or connect.
  void Start() override;
  bool WaitForSteps(uint64_t steps, double timeout_seconds) override;
  void RequestStop() override;
  JobResult Wait() override;
  JobState state() const override;
  uint64_t steps_done() const override;
  int ranks() const override;
  EvControlResult SetEvDenied(const std::string&, const std::string&, int, bool) override { return {}; }
  int SetPortEnabled(const std::string&, int, bool) override { return 0; }
  void VisitEvs(const std::function<void(const EvSnapshot&)>&) override {}

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mrclab::harness
