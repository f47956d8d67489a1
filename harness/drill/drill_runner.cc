#include "harness/drill/drill_runner.h"

#include <sys/utsname.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "emulator/netns/deploy.h"
#include "emulator/netns/faults.h"
#include "emulator/netns/interrupt.h"
#include "emulator/netns/frr_daemons.h"
#include "emulator/netns/lab_state.h"
#include "emulator/netns/processes.h"
#include "harness/drill/fault_plan.h"
#include "harness/drill/lab_convergence.h"
#include "harness/drill/run_recorder.h"
#include "harness/drill/transport_run.h"
#include "harness/telemetry/lab_observer.h"
#include "harness/telemetry/metrics_exporter.h"

namespace mrclab::harness {
namespace {

namespace fs = std::filesystem;
namespace nx = emulator::netns;
using nlohmann::json;

struct LabChoice {
  emulator::ResolvedLab plan;
  std::string text;     // lab file text when the drill may deploy it
  bool deployed = false;  // already deployed: reuse, never destroy
};

bool IsDeployed(const std::string& name) { return fs::exists(nx::LabPaths(name).lab_json); }

LabChoice ChooseLab(const Scenario& s, const DrillOptions& o) {
  const std::string lab = o.lab.empty() ? s.lab : o.lab;
  const std::string field = o.lab.empty() ? "lab" : "--lab";
  LabChoice c;
  if (fs::exists(lab) && fs::is_regular_file(lab)) {
    std::ifstream in(lab);
    std::stringstream text;
    text << in.rdbuf();
    c.text = text.str();
    c.plan = emulator::Resolve(emulator::ParseLabText(c.text, lab));
    if (IsDeployed(c.plan.name)) {
      const emulator::ResolvedLab running = nx::LoadDeployedLab(c.plan.name);
      auto plan_of = [](const emulator::ResolvedLab& l) {  // the plan, not where it was read from
        json j = l.ToJson();
        j.erase("source");
        return j;
      };
      if (plan_of(running) != plan_of(c.plan))
        throw ScenarioError(s.file, field, "lab '" + c.plan.name + "' is deployed with a different plan than " + lab +
                                               "; destroy it (mrclab destroy " + c.plan.name + ") or name the deployed lab");
      c.plan = running;
      c.deployed = true;
    }
    return c;
  }
  if (lab.find('/') != std::string::npos || lab.ends_with(".yaml"))
    throw ScenarioError(s.file, field, "lab file '" + lab + "' does not exist");
  if (!IsDeployed(lab))
    throw ScenarioError(s.file, field, "'" + lab + "' is neither a lab file nor a deployed lab (mrclab list)");
  c.plan = nx::LoadDeployedLab(lab);
  if (nx::ReadLabJson(lab).value("state", "") != "ready")
    throw ScenarioError(s.file, field, "lab '" + lab + "' is not ready (mrclab list)");
  c.deployed = true;
  return c;
}

std::string FirstLine(const std::vector<std::string>& argv) {
  std::string out;
  if (nx::RunAndWait(argv, &out) != 0) return "unknown";
  return out.substr(0, out.find('\n'));
}

json Versions() {
  utsname u{};
  uname(&u);
  return {{"mrclab", MRCLAB_VERSION}, {"kernel", u.release}, {"frr", FirstLine({nx::FrrDir() + "/zebra", "--version"})}};
}

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
          {"ev_mode", run.transport.ev_mode == mrc::EvMode::kSrv6 ? "srv6" : "udp"},
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

// Polls until every switch has the BGP routes it had in `baseline` (see lab_convergence.h), for
// at most a minute.
void WaitUntilConverged(const emulator::ResolvedLab& lab, const RoutingSnapshot& baseline, RunRecorder& recorder,
                        bool progress) {
  const auto start = std::chrono::steady_clock::now();
  std::set<std::string> differing = DifferingSwitches(baseline, SnapshotBgpRoutes(lab));
  while (!differing.empty() && std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    nx::ThrowIfInterrupted();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    differing = DifferingSwitches(baseline, SnapshotBgpRoutes(lab));
  }
  std::string names;
  for (const auto& n : differing) names += (names.empty() ? "" : ", ") + n;
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  recorder.Event({{"type", "drill"}, {"phase", differing.empty() ? "lab converged" : "lab not converged"},
                  {"waited_seconds", waited}, {"differing", names}});
  if (!differing.empty() && progress)
    std::fprintf(stderr, "drill: warning: routes of %s still differ from the start after 60 s; going on\n", names.c_str());
}

}  // namespace

DrillOutcome RunDrill(const Scenario& s, const DrillOptions& o) {
  LabChoice lab = ChooseLab(s, o);
  const FaultPlan plan = PlanFaults(s, lab.plan);  // every target checked before anything changes
  std::vector<TransportSpec> transports;
  for (const auto& t : s.transports)
    if (o.transports.empty() || std::find(o.transports.begin(), o.transports.end(), t.name) != o.transports.end())
      transports.push_back(t);
  if (transports.empty()) throw ScenarioError(s.file, "--transport", "selects none of the scenario's transports");

  const double started = UnixNow();
  std::unique_ptr<DrillMetrics> metrics;
  if (!o.metrics_bind.empty()) metrics = std::make_unique<DrillMetrics>(MetricsOptions{o.metrics_bind});
  RunRecorder recorder(o.out_root, s.name, s.text);
  if (o.progress) {
    std::fprintf(stderr, "drill %s: lab %s (%s), %zu fault(s), run directory %s\n", s.name.c_str(),
                 lab.plan.name.c_str(), lab.deployed ? "reused" : "deploying", plan.faults.size(), recorder.dir().c_str());
    if (metrics) std::fprintf(stderr, "metrics: %s\n", metrics->url().c_str());
  }
  recorder.WriteLab(lab.plan.ToJson());
  recorder.Event({{"type", "drill"}, {"phase", "start"}, {"scenario", s.name}, {"lab", lab.plan.name},
                  {"plan", plan.ToJson()}});

  const bool deploy = !lab.deployed;
  if (deploy) {
    nx::DeployOptions d;
    d.progress = o.progress;
    d.lab_text = lab.text;
    nx::Deploy(lab.plan, d);
    recorder.Event({{"type", "drill"}, {"phase", "lab deployed"}, {"lab", lab.plan.name}});
  }
  std::vector<TransportRun> runs;
  try {
    if (int left = nx::RevertLeftoverFaults(lab.plan))
      recorder.Event({{"type", "drill"}, {"phase", "reverted " + std::to_string(left) + " leftover fault(s)"}});
    LabObserver observer(lab.plan, {}, [&](const json& e) { recorder.Event(e); }, metrics.get());
    observer.Start();
    TransportRunContext ctx{s, lab.plan, plan, recorder, metrics.get(), &observer, o.progress};
    const RoutingSnapshot baseline = SnapshotBgpRoutes(lab.plan);  // the lab as verified
    for (const auto& t : transports) {
      WaitUntilConverged(lab.plan, baseline, recorder, o.progress);  // every transport starts alike
      runs.push_back(RunTransport(ctx, t));
    }
    observer.Stop();
    recorder.CopyFrrLogs(nx::LabPaths(lab.plan.name).root);
  } catch (...) {
    recorder.Event({{"type", "drill"}, {"phase", "aborted"}});
    if (deploy && !o.keep_lab) nx::Destroy(lab.plan.name);
    throw;
  }
  if (deploy && !o.keep_lab) {
    nx::Destroy(lab.plan.name);
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
                {"lab", {{"name", lab.plan.name}, {"digest", Sha256Hex(lab.plan.ToJson().dump())},
                         {"deployed_by_drill", deploy}}},
                {"versions", Versions()},
                {"started", started},
                {"finished", UnixNow()},
                {"seconds", UnixNow() - started},
                {"faults", plan.ToJson()},
                {"transports", runs_json},
                {"slos", slo_json},
                {"verdict", pass ? "pass" : "fail"},
                {"run_dir", recorder.dir()}};
  recorder.WriteResult(out.result);
  recorder.WriteJunit(s.name, slos, UnixNow() - started);
  recorder.Event({{"type", "drill"}, {"phase", "end"}, {"verdict", pass ? "pass" : "fail"}});
  if (o.summary) PrintSummary(runs, slos, s, recorder.dir(), pass);
  return out;
}

}  // namespace mrclab::harness
