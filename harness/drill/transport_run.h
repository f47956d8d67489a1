// One transport's part of a drill: the training job over that transport, its baseline steps,
// the fault schedule executed on time (kernel faults through the FaultInjector, controller
// faults through the job), the tail steps, and the revert of everything it applied — on every
// path out, including exceptions and Ctrl-C.
#pragma once

#include "emulator/resolved_lab.h"
#include "harness/drill/fault_plan.h"
#include "harness/drill/run_recorder.h"
#include "harness/drill/scenario.h"
#include "harness/drill/verdict.h"

namespace mrclab::harness {

class DrillMetrics;
class LabObserver;

struct TransportRunContext {
  const Scenario& scenario;
  const emulator::ResolvedLab& lab;
  const FaultPlan& plan;
  RunRecorder& recorder;
  DrillMetrics* metrics;  // may be null
  LabObserver* observer;  // may be null: link counters are sampled from it
  bool progress;
};

// Throws emulator::netns::Interrupted on Ctrl-C and FaultError when a fault cannot be applied,
// both after reverting what was applied.
TransportRun RunTransport(const TransportRunContext& ctx, const TransportSpec& transport);

}  // namespace mrclab::harness
