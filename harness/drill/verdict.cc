#include "harness/drill/verdict.h"

#include <algorithm>
#include <cmath>

namespace mrclab::harness {

std::string_view ToString(StepPhase p) {
  switch (p) {
    case StepPhase::kWarmup: return "warmup";
    case StepPhase::kBaseline: return "baseline";
    case StepPhase::kFaults: return "faults";
    case StepPhase::kTail: return "tail";
  }
  return "?";
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);  // linear interpolation between closest ranks
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

StepStats ComputeStepStats(const std::vector<RecordedStep>& steps) {
  std::vector<double> baseline, rest;
  for (const auto& s : steps)
    if (s.phase != StepPhase::kWarmup) (s.phase == StepPhase::kBaseline ? baseline : rest).push_back(s.record.seconds);
  StepStats st;
  st.baseline_p50 = Percentile(baseline, 0.5);
  st.p50 = Percentile(rest, 0.5);
  st.p99 = Percentile(rest, 0.99);
  st.max = rest.empty() ? 0 : *std::max_element(rest.begin(), rest.end());
  st.steps = steps.size();
  return st;
}

double StepTimeBound(const std::vector<SloSpec>& slos, const std::string& transport, const StepStats& stats) {
  double ratio = 1.5;
  for (const auto& s : slos)
    if (s.slo == "step_time_p99_ratio" && (s.transport.empty() || s.transport == transport)) ratio = s.max;
  return ratio * stats.baseline_p50;
}

void ComputeRecovery(TransportRun& run, double bound) {
  for (FaultRecord& f : run.faults) {
    f.recovery_seconds.reset();
    bool all_recovered = !f.windows.empty();
    double worst = 0;
    for (auto [applied, reverted] : f.windows) {
      std::optional<double> rec;
      for (const auto& s : run.steps)
        if (s.record.end > applied && s.record.seconds <= bound) {
          rec = s.record.end - applied;
          break;
        }
      if (!rec) all_recovered = false;
      else worst = std::max(worst, *rec);
    }
    if (all_recovered) f.recovery_seconds = worst;
  }
}

std::vector<std::string> NotTested(const std::vector<TransportRun>& runs, const std::vector<size_t>& planned_windows) {
  std::vector<std::string> out;
  for (const TransportRun& run : runs) {
    if (run.job.state == JobState::kInterrupted) continue;
    for (size_t i = 0; i < run.faults.size() && i < planned_windows.size(); ++i) {
      const FaultRecord& f = run.faults[i];
      const size_t planned = planned_windows[i], applied = f.windows.size();
      if (f.windows_cut_short > 0)
        out.push_back(run.transport.name + ": fault " + std::to_string(f.index) + " (" + f.description + ") held " +
                      std::to_string(f.windows_cut_short) + " of its windows for less than planned (max_duration reached)");
      if (f.ev_denies_refused > 0)
        out.push_back(run.transport.name + ": fault " + std::to_string(f.index) + " (" + f.description + ") was not applied in full: QPs kept " +
                      std::to_string(f.ev_denies_refused) + " of " + std::to_string(f.ev_denies) +
                      " denied EVs (per QP and EV) GOOD so as not to fall below min_active " +
                      std::to_string(run.transport.min_active.value_or(static_cast<int>(mrc::EvPolicyConfig{}.min_active))) +
                      " (min_active: 0 on the transport lets a controller deny every EV)");
      if (applied >= planned) continue;
      out.push_back(run.transport.name + ": fault " + std::to_string(f.index) + " (" + f.description + ") applied in " +
                    std::to_string(applied) + " of " + std::to_string(planned) + " windows" +
                    (f.error.empty() ? " (the schedule did not fit in max_duration or the job's steps)"
                                     : " (" + f.error + ")"));
    }
  }
  return out;
}

bool RodeThrough(const TransportRun& run) {
  return run.job.state == JobState::kCompleted && run.job.bytes_bad == 0;
}

std::vector<SloResult> EvaluateSlos(const std::vector<SloSpec>& slos, const std::vector<TransportRun>& runs) {
  std::vector<SloResult> out;
  for (const SloSpec& slo : slos)
    for (const TransportRun& run : runs) {
      if (!slo.transport.empty() && slo.transport != run.transport.name) continue;
      const StepStats st = ComputeStepStats(run.steps);
      SloResult r{slo.slo, run.transport.name, slo.field, slo.max, 0, false, ""};
      if (slo.slo == "no_interruption") {
        r.value = run.job.state == JobState::kInterrupted ? 1 : 0;
        r.pass = r.value == 0;
        r.detail = r.pass ? "completed " + std::to_string(run.job.steps) + " steps" : run.job.reason;
      } else if (slo.slo == "step_time_p99_ratio") {
        r.value = st.baseline_p50 > 0 ? st.p99 / st.baseline_p50 : INFINITY;
        r.pass = run.job.state == JobState::kCompleted && r.value <= slo.max;
        r.detail = "p99 " + std::to_string(st.p99) + " s over baseline p50 " + std::to_string(st.baseline_p50) + " s";
        if (run.job.state != JobState::kCompleted) r.detail += "; job interrupted";
      } else if (slo.slo == "step_time_max") {
        r.value = st.max;
        r.pass = run.job.state == JobState::kCompleted && r.value <= slo.max;
      } else if (slo.slo == "bytes_lost") {
        r.value = static_cast<double>(run.job.bytes_bad);
        r.pass = r.value <= slo.max;
        r.detail = std::to_string(run.job.bytes_verified) +
                   (run.job.payload == PayloadMode::kVirtual ? " bytes delivered (virtual payload: content not checked)"
                                                             : " bytes verified");
      } else if (slo.slo == "recovery_time_max") {
        bool all = true;
        for (const auto& f : run.faults) {
          if (!f.recovery_seconds) all = false;
          else r.value = std::max(r.value, *f.recovery_seconds);
        }
        if (!all) r.value = INFINITY;
        r.pass = all && r.value <= slo.max;
        if (!all) r.detail = "a fault was never recovered from";
      }
      out.push_back(r);
    }
  return out;
}

}  // namespace mrclab::harness
