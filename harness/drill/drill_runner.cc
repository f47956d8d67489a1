#include "harness/drill/drill_runner.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>

#include "harness/drill/fault_plan.h"
#include "harness/drill/fidelity_monitor.h"
#include "harness/drill/job_resources.h"
#include "harness/drill/netns_backend.h"
#include "harness/drill/run_recorder.h"
#include "harness/drill/transport_run.h"
#include "harness/telemetry/metrics_exporter.h"

namespace mrclab::harness {
namespace {

using nlohmann::json;

json RunJson(const TransportRun& run, const Scenario& s) {
  const StepStats st = ComputeStepStats(run.steps);
  const double bound = StepTimeBound(s.slos, run.transport.name, st);
  const bool kernel = run.transport.stack == TransportStack::kKernel;
  json faults = json::array();
  for (const auto& f : run.faults) {
    json windows = json::array();
    for (auto [a, r] : f.windows) windows.push_back({a, r == 0 ? json(nullptr) : json(r)});
    faults.push_back({{"index", f.index}, {"kind", f.kind}, {"description", f.description}, {"windows", windows},
                      {"recovery_seconds", f.recovery_seconds ? json(*f.recovery_seconds) : json(nullptr)}});
    if (f.kind == emulator::ToString(emulator::FaultKind::kEvDeny))
      faults.back().update({{"ev_denies", f.ev_denies}, {"ev_denies_refused", f.ev_denies_refused}});
  }
  return {{"name", run.transport.name},
          {"transport", mrc::ToString(run.transport.transport)},
          {"stack", ToString(run.transport.stack)},
          {"ev_mode", kernel ? json(nullptr) : json(mrc::ToString(run.transport.ev_mode))},
          {"evs", kernel ? json(nullptr) : json(run.transport.evs)},
          {"qps_per_peer", run.transport.qps_per_peer},
          {"min_active", run.transport.min_active ? json(*run.transport.min_active) : json(nullptr)},
          {"ack_timeout_seconds", run.transport.ack_timeout_seconds ? json(*run.transport.ack_timeout_seconds)
                                                                    : json(nullptr)},
          {"retry_count", run.transport.retry_count ? json(*run.transport.retry_count) : json(nullptr)},
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

void PrintSummary(const std::vector<TransportRun>& runs, const std::vector<SloResult>& slos,
                  const FidelityReport& fidelity, const std::vector<std::string>& not_tested,
                  const MachineCheck& machine, const Scenario& s, const std::string& dir, const std::string& verdict) {
  std::string upper = verdict;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::printf("drill %s: %s\n", s.name.c_str(), upper.c_str());
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
  if (fidelity.measured)
    std::printf("  emulation fidelity %s: CPUs busy up to %.0f%% (steal %.0f%%), threads waiting up to %.0f%%, timer "
                "late p99 up to %.1f ms; %d of %d s saturated; %d routing session(s) down with no fault\n",
                fidelity.ok() ? "ok" : "INCONCLUSIVE", 100 * fidelity.cpu_busy_max, 100 * fidelity.steal_max,
                100 * fidelity.run_wait_max, fidelity.late_p99_ms_max, fidelity.saturated, fidelity.samples,
                fidelity.unexplained_routing_downs);
  for (const auto& reason : fidelity.reasons) std::printf("    %s\n", reason.c_str());
  if (!not_tested.empty()) std::printf("  NOT TESTED (the drill did not do what its scenario says):\n");
  for (const auto& line : not_tested) std::printf("    %s\n", line.c_str());
  for (const auto& line : machine.lines) std::printf("  %s\n", line.c_str());
  std::printf("results: %s\n", dir.c_str());
}

// What the fidelity guard judges: each transport's baseline and every fault window (until its
// revert plus the settle time; a fault left until the end, until the transport's last step),
// and the whole job of a transport that was interrupted (was it the fabric or this machine?).
std::vector<Interval> JudgedIntervals(const std::vector<TransportRun>& runs) {
  std::vector<Interval> out;
  for (const auto& run : runs) {
    if (run.job.state == JobState::kInterrupted && run.ended > run.started)
      out.push_back({run.transport.name + " job until it was interrupted", run.started, run.ended});
    double from = 0, to = 0, last = 0;
    for (const auto& st : run.steps) {
      last = std::max(last, st.record.end);
      if (st.phase != StepPhase::kBaseline) continue;
      from = from == 0 ? st.record.start : std::min(from, st.record.start);
      to = std::max(to, st.record.end);
    }
    if (to > from) out.push_back({run.transport.name + " baseline", from, to});
    for (const auto& f : run.faults)
      for (size_t w = 0; w < f.windows.size(); ++w) {
        const auto [applied, reverted] = f.windows[w];
        out.push_back({run.transport.name + " fault " + std::to_string(f.index) + " " + f.kind + " (window " +
                           std::to_string(w) + ")",
                       applied, reverted == 0 ? std::max(last, applied) : reverted + kSettleSeconds});
      }
  }
  return out;
}

std::vector<std::pair<double, double>> FaultWindows(const std::vector<TransportRun>& runs) {
  std::vector<std::pair<double, double>> out;
  for (const auto& run : runs)
    for (const auto& f : run.faults) out.insert(out.end(), f.windows.begin(), f.windows.end());
  return out;
}

}  // namespace

std::vector<TransportSpec> SelectedTransports(const Scenario& s, const DrillOptions& o) {
  std::string names;  // the scenario's, for the error
  for (const auto& t : s.transports) names += (names.empty() ? "" : ", ") + t.name;
  for (const std::string& wanted : o.transports)
    if (std::none_of(s.transports.begin(), s.transports.end(), [&](const TransportSpec& t) { return t.name == wanted; }))
      throw ScenarioError(s.file, o.transport_option, "no transport named '" + wanted + "' (the scenario's: " + names + ")");
  std::vector<TransportSpec> out;
  for (const auto& t : s.transports)
    if (o.transports.empty() || std::find(o.transports.begin(), o.transports.end(), t.name) != o.transports.end())
      out.push_back(t);
  return out;
}

DrillOutcome RunDrill(const Scenario& s, const DrillOptions& o) {
  CheckBackendSupport(s, o);
  CheckRunRoot(o.out_root);
  std::unique_ptr<DrillBackend> backend = MakeDrillBackend(s, o);
  const emulator::ResolvedLab& lab = backend->lab();
  const FaultPlan plan = PlanFaults(s, lab);  // every target checked before anything changes
  CheckJobResources(s, lab, backend->kind());   // and every transport's job fits the machine
  if (backend->kind() == emulator::BackendKind::kNetns) CheckNetnsFaultTools(s);  // and its tools are here
  const bool real_time = backend->TimeBase() == "unix";
  const MachineCheck machine = real_time ? CheckMachineCapacity(s, lab, o.progress) : MachineCheck{};
  const std::vector<TransportSpec> transports = SelectedTransports(s, o);

  const double started_unix = UnixNow();
  std::unique_ptr<DrillMetrics> metrics;
  if (!o.metrics_bind.empty())
    metrics = std::make_unique<DrillMetrics>(MetricsOptions{o.metrics_bind, o.metrics_free_port_if_taken});
  RunRecorder recorder(o.out_root, s.name, s.text, [&backend] { return backend->Now(); });
  const std::string backend_name(ToString(backend->kind()));
  if (o.progress) {
    std::fprintf(stderr, "drill %s: lab %s (%s, %s), %zu fault(s), run directory %s\n", s.name.c_str(),
                 lab.name.c_str(), backend_name.c_str(), backend->reused() ? "reused" : "preparing",
                 plan.faults.size(), recorder.dir().c_str());
    if (metrics && metrics->taken_port())
      std::fprintf(stderr, "metrics: %s (port %u is taken, by another drill?)\n", metrics->url().c_str(),
                   metrics->taken_port());
    else if (metrics)
      std::fprintf(stderr, "metrics: %s\n", metrics->url().c_str());
  }
  const std::string lab_digest = recorder.WriteLab(lab);
  // Real time: the machine itself is watched (fidelity.h); routing sessions going down are
  // noted so that those no fault explains can be counted.
  std::unique_ptr<FidelityMonitor> monitor;
  if (real_time) monitor = std::make_unique<FidelityMonitor>([&backend] { return backend->Now(); });
  std::mutex downs_mu;
  std::vector<double> routing_downs;
  auto event = [&](const json& e) {
    recorder.Event(e);
    const std::string type = e.value("type", ""), from = e.value("from", "");
    if ((type == "bgp" && from == "Established") || (type == "bfd" && from == "up")) {
      std::lock_guard lock(downs_mu);
      routing_downs.push_back(e.value("t", backend->Now()));
    }
  };

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
    if (monitor) monitor->Start();
    TransportRunContext ctx{s, *backend, plan, recorder, metrics.get(), o.progress};
    for (const auto& t : transports) {
      backend->WaitUntilConverged(event, o.progress);  // every transport starts alike
      runs.push_back(RunTransport(ctx, t));
    }
    if (monitor) monitor->Stop();
    backend->StopObserving();
    backend->CollectLogs(recorder);
  } catch (...) {
    // The observer's thread writes to `recorder` and `metrics`, which unwinding destroys
    // before the backend: stop it first (a Ctrl-C during a drill crashed here).
    backend->StopObserving();
    recorder.Event({{"type", "drill"}, {"phase", "aborted"}});
    // What went wrong is in the daemons' logs, which releasing the lab deletes.
    try {
      backend->CollectLogs(recorder);
    } catch (const std::exception&) {
    }
    std::fprintf(stderr, "mrclab: drill: aborted; its events%s are in %s\n",
                 backend->kind() == emulator::BackendKind::kNetns ? " and FRR logs" : "", recorder.dir().c_str());
    // Releasing must not hide why the drill aborted: its own failure is a second line.
    if (prepare && !o.keep_lab) try {
        backend->Release();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "mrclab: drill: and releasing the lab failed: %s\n", e.what());
      }
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
  FidelityReport fidelity;
  if (monitor) {
    const std::vector<FidelitySample> samples = monitor->Samples();
    recorder.WriteFidelity(samples);
    std::lock_guard lock(downs_mu);
    fidelity = EvaluateFidelity(samples, JudgedIntervals(runs), FaultWindows(runs), routing_downs);
  }
  std::vector<size_t> planned_windows;
  for (const auto& pf : plan.faults) planned_windows.push_back(pf.windows.size());
  const std::vector<std::string> not_tested = NotTested(runs, planned_windows);
  // Untested faults leave a passing drill inconclusive; a failing one still failed.
  const bool inconclusive = !fidelity.ok() || (pass && !not_tested.empty());
  const std::string verdict = inconclusive ? "inconclusive" : pass ? "pass" : "fail";

  DrillOutcome out;
  out.exit_status = inconclusive ? emulator::kExitInconclusive : pass ? emulator::kExitOk : emulator::kExitFailed;
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
                {"key_seed", s.job.key_seed ? json(*s.job.key_seed) : json("random")},
                {"lab", {{"name", lab.name}, {"digest", lab_digest},
                         {"deployed_by_drill", prepare}}},
                {"backend", backend_name},
                {"metrics_url", metrics ? json(metrics->url()) : json(nullptr)},
                {"time_base", backend->TimeBase()},
                {"payload", ToString(s.job.payload)},
                {"mtu", JobMtu(s, lab)},
                {"versions", backend->Versions()},
                {"started", started},
                {"finished", finished},
                {"seconds", finished - started},
                {"wall_seconds", UnixNow() - started_unix},
                {"faults", plan.ToJson()},
                {"transports", runs_json},
                {"slos", slo_json},
                {"emulation_fidelity", ToJson(fidelity)},
                {"not_tested", not_tested},
                {"capacity", machine.json},
                {"verdict", verdict},
                {"run_dir", recorder.dir()}};
  recorder.WriteResult(out.result);
  recorder.WriteJunit(s.name, slos, fidelity, not_tested, finished - started);
  recorder.Event({{"type", "drill"}, {"phase", "end"}, {"verdict", verdict}});
  if (o.summary) PrintSummary(runs, slos, fidelity, not_tested, machine, s, recorder.dir(), verdict);
  return out;
}

}  // namespace mrclab::harness
