// SimJob: the training workload (harness/job/workload.h) driven in ns-3's virtual time: one
// SimEndpoint per host on a SimFabric, compute phases and the step barrier as simulator
// events, and the same watchdog as the real-time TrainingJob (a step over step_timeout, or a
// QP error, interrupts the job). Everything runs on the simulation's thread; the Job calls
// that wait (WaitForSteps, Wait) let simulated time pass through `run_until`.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "emulator/ns3/helper/sim_endpoint.h"
#include "emulator/resolved_lab.h"
#include "harness/job/job.h"
#include "harness/job/workload.h"

namespace mrclab::emulator::sim {

// Runs the simulation until done() (true) or simulated second `deadline` (false).
using RunUntilFn = std::function<bool(double deadline, const std::function<bool()>& done)>;

class SimJob : public harness::Job {
 public:
  // Throws std::invalid_argument for a config the lab cannot run (as Workload does).
  SimJob(const ResolvedLab& lab, ns3::Ptr<SimFabric> fabric, const harness::JobConfig& config,
         const harness::QpConfigFn& qp_config, RunUntilFn run_until, EventFn on_event, StepFn on_step);
  ~SimJob() override;

  void Start() override;
  bool WaitForSteps(uint64_t steps, double timeout_seconds) override;
  void RequestStop() override { stop_requested_ = true; }
  harness::JobResult Wait() override;
  harness::JobState state() const override { return result_.state; }
  uint64_t steps_done() const override { return result_.steps; }
  int ranks() const override { return workload_->ranks(); }
  harness::EvControlResult SetEvDenied(const std::string& host_a, const std::string& host_b, int ev, bool denied) override;
  int SetPortEnabled(const std::string& host, int plane, bool enabled) override;
  void VisitEvs(const std::function<void(const harness::EvSnapshot&)>& visit) override;

 private:
  void BeginStep();
  void Drain(int host);
  void Progress(int host);
  void ArmCompute(int host);
  void Watchdog(uint64_t step);
  void EndStep();
  void Interrupt(const std::string& reason);
  void Finish(harness::JobState state);

  harness::JobConfig config_;
  RunUntilFn run_until_;
  EventFn on_event_;
  StepFn on_step_;
  std::vector<std::unique_ptr<SimEndpoint>> endpoints_;
  std::vector<ns3::EventId> compute_timers_;
  std::vector<mrc::Timestamp> compute_armed_at_;  // per host: the deadline compute_timers_ holds (Infinite: none)
  // Virtual payload lands here for every host: one thread runs them all (HostBinding).
  std::vector<uint8_t> virtual_landing_;
  std::unique_ptr<harness::Workload> workload_;
  // Per host, what its endpoint's ProgressPrefetch points at (Workload::Prefetch of the host).
  struct HostPrefetch {
    const harness::Workload* workload;
    int host;
    static void Run(const void* self, int stage);
  };
  std::vector<HostPrefetch> host_prefetch_;
  // Step state.
  uint64_t step_ = 0;
  mrc::Timestamp step_start_;
  std::vector<harness::RankReport> reports_;
  int done_ranks_ = 0;
  ns3::EventId watchdog_;
  bool stop_requested_ = false;
  double started_ = 0;
  harness::JobResult result_;
};

}  // namespace mrclab::emulator::sim
