// The world a drill runs in, as the drill sees it: a lab (deployed or simulated), its clock,
// its faults, its counters, and jobs on its hosts. Two implementations:
//
//   NetnsBackend  harness/drill/netns_backend.*     namespaces, FRR, kernel SRv6 (emulator/netns);
//                                                   real time; jobs are TrainingJob (Asio)
//   Ns3Backend    emulator/ns3/helper/ns3_backend.*  the same lab as ns-3 models; virtual time;
//                                                   jobs are the same Workload on ns-3 endpoints
//
// The drill (drill_runner.cc, transport_run.cc) talks only to this interface and to Job.
// Times are seconds on the backend's clock: unix time (netns) or simulated time (ns3).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/fault.h"
#include "emulator/resolved_lab.h"
#include "harness/drill/link_sample.h"
#include "harness/job/job.h"

namespace mrclab::harness {

class DrillMetrics;
class RunRecorder;

class DrillBackend {
 public:
  using EventFn = std::function<void(const nlohmann::json&)>;
  virtual ~DrillBackend() = default;

  virtual emulator::BackendKind kind() const = 0;
  virtual const emulator::ResolvedLab& lab() const = 0;
  // True when the lab was deployed before the drill (it is reused and never destroyed).
  virtual bool reused() const = 0;

  // Makes the lab ready (deploys or builds it; a reused lab is checked) / removes what Prepare
  // made (nothing for a reused lab). Release is safe to call after a failed Prepare.
  virtual void Prepare(bool progress) = 0;
  virtual void Release() = 0;

  virtual double Now() = 0;
  // Lets time pass until done() is true (returns true) or the clock reaches `deadline` (false).
  // netns: polls every 20 ms and throws emulator::netns::Interrupted on Ctrl-C; ns3: runs the
  // simulation.
  virtual bool RunUntil(double deadline, const std::function<bool()>& done) = 0;
  // Waits until routing is back to how the lab was prepared (every transport starts alike);
  // records what it saw through on_event.
  virtual void WaitUntilConverged(const EventFn& on_event, bool progress) = 0;

  // Faults on the fabric (emulator/fault.h); ids are the backend's. RevertFault is idempotent.
  virtual int ApplyFault(const emulator::FaultAction& action) = 0;
  virtual void RevertFault(int id) = 0;
  // Faults left applied by an earlier drill that was killed; returns how many were reverted.
  virtual int RevertLeftoverFaults() = 0;

  // Starts watching routing and link counters (events through on_event, link counters into
  // metrics, which may be null) until StopObserving.
  virtual void StartObserving(const EventFn& on_event, DrillMetrics* metrics) = 0;
  virtual void StopObserving() = 0;
  virtual std::vector<LinkSample> SampleLinks() = 0;

  // A job on the lab's hosts (not started yet).
  virtual std::unique_ptr<Job> CreateJob(const JobConfig& config, Job::EventFn on_event, Job::StepFn on_step) = 0;

  // Software versions for result.json; the lab's logs into the run directory.
  virtual nlohmann::json Versions() = 0;
  virtual void CollectLogs(RunRecorder& recorder) = 0;
  // How the run directory states time: "unix" or "simulated".
  virtual std::string TimeBase() const = 0;
};

}  // namespace mrclab::harness
