// One transport's part of a drill: the training job over that transport, its baseline steps,
// the fault schedule executed on time (fabric faults through the backend, controller faults
// through the job), the tail steps, and the revert of everything it applied — on every path
// out, including exceptions and Ctrl-C. Time is the backend's (real or simulated).
#pragma once

#include "harness/drill/drill_backend.h"
#include "harness/drill/fault_plan.h"
#include "harness/drill/run_recorder.h"
#include "harness/drill/scenario.h"
#include "harness/drill/verdict.h"

namespace mrclab::harness {

class DrillMetrics;

struct TransportRunContext {
  const Scenario& scenario;
  DrillBackend& backend;
  const FaultPlan& plan;
  RunRecorder& recorder;
  DrillMetrics* metrics;  // may be null
  bool progress;
};

// Throws emulator::netns::Interrupted on Ctrl-C (netns) and FaultError when a fault cannot be
// applied, both after reverting what was applied.
TransportRun RunTransport(const TransportRunContext& ctx, const TransportSpec& transport);

}  // namespace mrclab::harness
