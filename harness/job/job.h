// A running synthetic training job, as drills, the CLI and the Python module see it, whichever
// world drives it: TrainingJob (real time, Asio endpoints in a netns lab) or the ns-3 job
// (virtual time; emulator/ns3/helper/sim_job.h). Both run the same Workload (workload.h).
//
// Callbacks: on_event gets job events (EV and QP state changes, checksum and verify failures)
// as JSON with "t" (seconds on the drill's clock) and "job"; on_step gets every finished step.
// In real time they are called from the job's threads; in ns-3 from the simulation.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/job/job_types.h"

namespace mrclab::harness {

class Job {
 public:
  using EventFn = std::function<void(const nlohmann::json&)>;
  using StepFn = std::function<void(const StepRecord&)>;

  virtual ~Job() = default;
  virtual void Start() = 0;  // opens the endpoints and starts stepping
  // True once `steps` steps are done; false if the job ended first or the timeout passed
  // (seconds on the job's clock: wall time in real time, virtual time in a simulation).
  virtual bool WaitForSteps(uint64_t steps, double timeout_seconds) = 0;
  virtual void RequestStop() = 0;  // finish the current step, then stop
  virtual JobResult Wait() = 0;    // until the job has ended
  virtual JobState state() const = 0;
  virtual uint64_t steps_done() const = 0;
  virtual int ranks() const = 0;

  // Controller actions. The EV is denied (or allowed again) on every QP from a rank of host_a
  // to a rank of host_b; returns the QPs reached and those that refused (min_active).
  virtual EvControlResult SetEvDenied(const std::string& host_a, const std::string& host_b, int ev, bool denied) = 0;
  // Every QP of the host's ranks stops (or resumes) using the host's port on `plane`; returns
  // how many QPs it touched.
  virtual int SetPortEnabled(const std::string& host, int plane, bool enabled) = 0;
  // Every EV of every QP, one at a time: a million-QP job's 16 million EVs are sampled without
  // being gathered (the snapshot passed is only valid during the call).
  virtual void VisitEvs(const std::function<void(const EvSnapshot&)>& visit) = 0;
  // The same, gathered (small jobs; Python's Job.evs()).
  std::vector<EvSnapshot> SnapshotEvs() {
    std::vector<EvSnapshot> out;
    VisitEvs([&out](const EvSnapshot& e) { out.push_back(e); });
    return out;
  }
};

}  // namespace mrclab::harness
