#include "harness/drill/drill_runner.h"

#include <cmath>
#include <cstdio>
#include <memory>

#include "harness/drill/fault_plan.h"
#include "harness/drill/run_recorder.h"
#include "harness/drill/transport_run.h"
#include "harness/telemetry/metrics_exporter.h"

namespace mrclab::harness {
namespace {

using nlohmann::json;

json RunJson(const TransportRun& run, const Scenario& s) {
  const StepStats st = ComputeStepStats(run.steps);
  const double bound = StepTimeBound(s.slos, run.transport.name, st);
  json faults = json::array();
  for (const auto& f : run.faults) {
    json windows = json::array();
    for (auto [a, r] : f.windows) windows.push_back({a, r == 0 ? json(nullptr) : json(r)});
    faults.push_back({{"index", f.index}, {"kind", f.kind}, {"description", f.description}, {"windows", windows},
                      {"recovery_seconds", f.recovery_seconds ? json(*f.recovery_seconds) : json(nullptr)}});
  }
  return {{"name", run.transport.name},
          {"transport", mrc::ToString(run.transport.transport)},
          {"ev_mode", mrc::ToString(run.transport.ev_mode)},
          {"evs", run.transport.evs},
          {"job", {{"state", ToString(run.job.state)}, {"reason", run.job.reason}, {"steps", run.job.steps},
                   {"bytes_verified", run.job.bytes_verified}, {"bytes_lost", run.job.bytes_bad},
                   {"retransmissions", run.job.retransmissions}, {"seconds", run.job.seconds}}},
          {"steps_per_minute", run.job.seconds > 0 ? run.job.steps * 60.0 / run.job.seconds : 0},
          {"cpu_seconds", run.cpu_seconds},
          {"step_time", {{"baseline_p50", st.baseline_p50}, {"p50", st.p50}, {"p99", st.p99}, {"max", st.max}}},
          {"step_time_bound", bound},
          {"rode_through", RodeThrough(run)},
          {"faults", faults}};
}

void PrintSummary(const std::vector<TransportRun>& runs, const std::vector<SloResult>& slos, const Scenario& s,
                  const std::string& dir, bool pass) {
  std::printf("drill %s: %s\n", s.name.c_str(), pass ? "PASS" : "FAIL");
  for (const auto& run : runs) {
    const StepStats st = ComputeStepStats(run.steps);
    const double bound = StepTimeBound(s.slos, run.transport.name, st);
    std::printf("  %-6s %-11s %4llu steps (%.0f/min)  step p50 %.3f s  p99 %.3f s  baseline %.3f s  "
                "lost %llu B  CPU %.1f s  %s\n",
                run.transport.name.c_str(), std::string(ToString(run.job.state)).c_str(),
                static_cast<unsigned long long>(run.job.steps),
                run.job.seconds > 0 ? run.job.steps * 60.0 / run.job.seconds : 0, st.p50, st.p99, st.baseline_p50,
                static_cast<unsigned long long>(run.job.bytes_bad), run.cpu_seconds,
                RodeThrough(run) ? "rode through" : "did NOT ride through");
    if (run.job.state == JobState::kInterrupted) std::printf("         %s\n", run.job.reason.c_str());
    for (const auto& f : run.faults) {
      if (f.windows.empty()) continue;
      if (f.recovery_seconds)
        std::printf("         fault %d %-13s back within %.3f s step time after %.3f s\n", f.index, f.kind.c_str(),
                    bound, *f.recovery_seconds);
      else
        std::printf("         fault %d %-13s never back within %.3f s step time\n", f.index, f.kind.c_str(), bound);
    }
  }
  for (const auto& r : slos)
    std::printf("  SLO %-20s %-6s %s  value %.4g  max %.4g%s\n", r.slo.c_str(), r.transport.c_str(),
                r.pass ? "pass" : "FAIL", r.value, r.max, r.detail.empty() ? "" : ("  (" + r.detail + ")").c_str());
  std::printf("results: %s\n", dir.c_str());
}

}  // namespace

DrillOutcome RunDrill(const Scenario& s, const DrillOptions& o) {
  CheckBackendSupport(s, o);
  std::unique_ptr<DrillBackend> backend = MakeDrillBackend(s, o);
  const emulator::ResolvedLab& lab = backend->lab();
  const FaultPlan plan = PlanFaults(s, lab);  // every target checked before anything changes
  std::vector<TransportSpec> transports;
  for (const auto& t : s.transports)
    if (o.transports.empty() || std::find(o.transports.begin(), o.transports.end(), t.name) != o.transports.end())
      transports.push_back(t);
  if (transports.empty()) throw ScenarioError(s.file, "--transport", "selects none of the scenario's transports");

  const double started_unix = UnixNow();
  std::unique_ptr<DrillMetrics> metrics;
  if (!o.metrics_bind.empty()) metrics = std::make_unique<DrillMetrics>(MetricsOptions{o.metrics_bind});
  RunRecorder recorder(o.out_root, s.name, s.text, [&backend] { return backend->Now(); });
  const std::string backend_name(ToString(backend->kind()));
  if (o.progress) {
    std::fprintf(stderr, "drill %s: lab %s (%s, %s), %zu fault(s), run directory %s\n", s.name.c_str(),
                 lab.name.c_str(), backend_name.c_str(), backend->reused() ? "reused" : "preparing",
                 plan.faults.size(), recorder.dir().c_str());
    if (metrics) std::fprintf(stderr, "metrics: %s\n", metrics->url().c_str());
  }
  recorder.WriteLab(lab.ToJson());
  auto event = [&recorder](const json& e) { recorder.Event(e); };

  const bool prepare = !backend->reused();
  std::vector<TransportRun> runs;
  const double started = backend->Now();
  recorder.Event({{"type", "drill"}, {"phase", "start"}, {"scenario", s.name}, {"lab", lab.name},
                  {"backend", backend_name}, {"plan", plan.ToJson()}});
  try {
    backend->Prepare(o.progress);
    if (prepare) recorder.Event({{"type", "drill"}, {"phase", "lab deployed"}, {"lab", lab.name}});
    if (int left = backend->RevertLeftoverFaults())
      recorder.Event({{"type", "drill"}, {"phase", "reverted " + std::to_string(left) + " leftover fault(s)"}});
    backend->StartObserving(event, metrics.get());
    TransportRunContext ctx{s, *backend, plan, recorder, metrics.get(), o.progress};
    for (const auto& t : transports) {
      backend->WaitUntilConverged(event, o.progress);  // every transport starts alike
      runs.push_back(RunTransport(ctx, t));
    }
    backend->StopObserving();
    backend->CollectLogs(recorder);
  } catch (...) {
    // The observer's thread writes to `recorder` and `metrics`, which unwinding destroys
    // before the backend: stop it first (a Ctrl-C during a drill crashed here).
    backend->StopObserving();
    recorder.Event({{"type", "drill"}, {"phase", "aborted"}});
    if (prepare && !o.keep_lab) backend->Release();
    throw;
  }
  const double finished = backend->Now();
  if (prepare && !o.keep_lab) {
    backend->Release();
    recorder.Event({{"type", "drill"}, {"phase", "lab destroyed"}});
  }

  for (auto& run : runs) ComputeRecovery(run, StepTimeBound(s.slos, run.transport.name, ComputeStepStats(run.steps)));
  const std::vector<SloResult> slos = EvaluateSlos(s.slos, runs);
  bool pass = true;
  for (const auto& r : slos) pass = pass && r.pass;

  DrillOutcome out;
  out.exit_status = pass ? 0 : 1;
  out.run_dir = recorder.dir();
  json slo_json = json::array();
  for (const auto& r : slos)
    slo_json.push_back({{"slo", r.slo}, {"transport", r.transport}, {"field", r.field}, {"max", r.max},
                        {"value", std::isfinite(r.value) ? json(r.value) : json(nullptr)}, {"pass", r.pass},
                        {"detail", r.detail}});
  json runs_json = json::array();
  for (const auto& run : runs) runs_json.push_back(RunJson(run, s));
  out.result = {{"scenario", s.name},
                {"scenario_file", s.file},
                {"scenario_sha256", Sha256Hex(s.text)},
                {"seed", s.seed},
                {"lab", {{"name", lab.name}, {"digest", Sha256Hex(lab.ToJson().dump())},
                         {"deployed_by_drill", prepare}}},
                {"backend", backend_name},
                {"time_base", backend->TimeBase()},
                {"payload", ToString(s.job.payload)},
                {"versions", backend->Versions()},
                {"started", started},
                {"finished", finished},
                {"seconds", finished - started},
                {"wall_seconds", UnixNow() - started_unix},
                {"faults", plan.ToJson()},
                {"transports", runs_json},
                {"slos", slo_json},
                {"verdict", pass ? "pass" : "fail"},
                {"run_dir", recorder.dir()}};
  recorder.WriteResult(out.result);
  recorder.WriteJunit(s.name, slos, finished - started);
  recorder.Event({{"type", "drill"}, {"phase", "end"}, {"verdict", pass ? "pass" : "fail"}});
  if (o.summary) PrintSummary(runs, slos, s, recorder.dir(), pass);
  return out;
}

}  // namespace mrclab::harness
