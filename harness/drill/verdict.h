// What a drill measured for one transport, and the verdict: step-time statistics (baseline =
// the fault-free steps before the schedule), per-fault recovery (time from the fault to the
// first step that ends within the step-time bound), and the scenario's SLOs evaluated on them.
// Pure, so the SLO rules are unit-tested without a lab.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "harness/drill/scenario.h"
#include "harness/job/job_types.h"

namespace mrclab::harness {

enum class StepPhase { kWarmup, kBaseline, kFaults, kTail };  // warmup steps are not measured
std::string_view ToString(StepPhase p);

struct RecordedStep {
  StepRecord record;
  StepPhase phase = StepPhase::kBaseline;
  int faults_active = 0;
};

struct FaultRecord {
  int index = 0;
  std::string kind, description;
  std::vector<std::pair<double, double>> windows;  // applied, reverted (unix s; 0 = never)
  std::optional<double> recovery_seconds;           // worst window; none if no step recovered
  std::string error;                                // when applying failed
  int windows_cut_short = 0;  // applied windows that max_duration ended before their revert
  // ev_deny, over its windows: EV denies asked of the QPs (one per QP and listed EV), and those a
  // QP refused because it would have had fewer GOOD EVs than min_active.
  int ev_denies = 0, ev_denies_refused = 0;
};

struct TransportRun {
  TransportSpec transport;
  JobResult job;
  std::vector<RecordedStep> steps;
  std::vector<FaultRecord> faults;
  double cpu_seconds = 0;
  double started = 0, ended = 0;  // the job's start and end on the backend's clock
};

struct StepStats {
  double baseline_p50 = 0, p50 = 0, p99 = 0, max = 0;  // p50/p99/max: steps after the baseline
  size_t steps = 0;
};
StepStats ComputeStepStats(const std::vector<RecordedStep>& steps);

// Bound for "a step within the SLO": step_time_p99_ratio's max for this transport (else 1.5)
// times the baseline p50.
double StepTimeBound(const std::vector<SloSpec>& slos, const std::string& transport, const StepStats& stats);

// Fills FaultRecord::recovery_seconds from the steps.
void ComputeRecovery(TransportRun& run, double bound_seconds);

struct SloResult {
  std::string slo, transport, field;
  double max = 0, value = 0;
  bool pass = false;
  std::string detail;
};
std::vector<SloResult> EvaluateSlos(const std::vector<SloSpec>& slos, const std::vector<TransportRun>& runs);

// What a drill said it would test and did not: every window of every planned fault
// (planned_windows[i] for TransportRun::faults[i]) must have been applied while each transport's job ran, unless the job
// was interrupted before it (the interruption is the finding then). One line per gap, e.g.
// "mrc: fault 1 (blackhole ...) applied in 0 of 1 windows (max_duration reached)"; a window
// that max_duration ended before its planned revert is a gap too. A drill with a gap cannot pass.
std::vector<std::string> NotTested(const std::vector<TransportRun>& runs, const std::vector<size_t>& planned_windows);

// "Rode through", independent of the scenario's SLOs: the job was never interrupted and lost
// no bytes, as a training job sees it. Reported for every transport so MRC and RC compare.
bool RodeThrough(const TransportRun& run);

double Percentile(std::vector<double> values, double q);

}  // namespace mrclab::harness
