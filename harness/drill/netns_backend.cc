#include "harness/drill/netns_backend.h"

#include <sys/utsname.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

#include "emulator/netns/deploy.h"
#include "emulator/netns/drill_lock.h"
#include "emulator/netns/faults.h"
#include "emulator/netns/frr_daemons.h"
#include "emulator/netns/frr_reload.h"
#include "emulator/netns/interrupt.h"
#include "emulator/netns/lab_state.h"
#include "emulator/netns/processes.h"
#include "emulator/strict_yaml.h"
#include "emulator/wall_clock.h"
#include "harness/drill/lab_convergence.h"
#include "harness/drill/run_recorder.h"
#include "harness/drill/scenario.h"
#include "harness/job/realtime_job.h"
#include "harness/telemetry/lab_observer.h"

namespace mrclab::harness {
namespace {

namespace fs = std::filesystem;
namespace nx = emulator::netns;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

bool IsDeployed(const std::string& name) { return emulator::PathExists(nx::LabPaths(name).lab_json); }

std::string UtcClockTime() {  // "00:17:15 UTC"
  const std::time_t now = std::time(nullptr);
  char text[16];
  std::strftime(text, sizeof text, "%H:%M:%S", std::gmtime(&now));
  return std::string(text) + " UTC";
}

std::string FirstLine(const std::vector<std::string>& argv) {
  std::string out;
  if (nx::RunAndWait(argv, &out) != 0) return "unknown";
  return out.substr(0, out.find('\n'));
}

class NetnsBackend : public DrillBackend {
 public:
  NetnsBackend(std::unique_ptr<nx::DrillLock> lock, emulator::ResolvedLab plan, std::string text, bool deployed)
      : lock_(std::move(lock)), plan_(std::move(plan)), text_(std::move(text)), reused_(deployed) {}
  ~NetnsBackend() override { StopObserving(); }

  emulator::BackendKind kind() const override { return emulator::BackendKind::kNetns; }
  const emulator::ResolvedLab& lab() const override { return plan_; }
  bool reused() const override { return reused_; }
  std::string TimeBase() const override { return "unix"; }

  void Prepare(bool progress) override {
    if (!reused_) {
      nx::DeployOptions d;
      d.progress = progress;
      d.lab_text = text_;
      nx::Deploy(plan_, d);
      deployed_ = true;
    }
    // Read now: a lab the drill deployed is destroyed before result.json is written.
    switch_software_ = nx::ReadLabJson(plan_.name).value("switch_software", json::object());
    injector_.emplace(plan_);
  }

  void Release() override {
    StopObserving();
    injector_.reset();
    if (deployed_) nx::Destroy(plan_.name);
    deployed_ = false;
  }

  double Now() override { return emulator::UnixNow(); }

  bool RunUntil(double deadline, const std::function<bool()>& done) override {
    const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(std::max(0.0, deadline - Now())));
    for (;;) {
      nx::ThrowIfInterrupted();
      if (done()) return true;
      if (Clock::now() >= end) return false;
      std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(20), end - Clock::now()));
    }
  }

  // The routes to come back to: the first snapshot that stays the same for a second (BGP may
  // still be installing paths when deploy has verified reachability), within half a minute.
  RoutingSnapshot SettledRoutes(const EventFn& on_event) {
    const auto start = Clock::now();
    RoutingSnapshot last = SnapshotBgpRoutes(plan_);
    while (Clock::now() - start < std::chrono::seconds(30)) {
      nx::ThrowIfInterrupted();
      std::this_thread::sleep_for(std::chrono::seconds(1));
      RoutingSnapshot now = SnapshotBgpRoutes(plan_);
      if (now == last) break;
      last = std::move(now);
    }
    on_event({{"type", "drill"}, {"phase", "routing baseline"},
              {"waited_seconds", std::chrono::duration<double>(Clock::now() - start).count()}});
    return last;
  }

  // Polls until every switch has the BGP routes of the settled baseline (or a more complete
  // fabric: Completes), for at most a minute.
  void WaitUntilConverged(const EventFn& on_event, bool progress) override {
    if (!baseline_) baseline_ = SettledRoutes(on_event);
    const auto start = Clock::now();
    RoutingSnapshot now = SnapshotBgpRoutes(plan_);
    std::set<std::string> differing = DifferingSwitches(*baseline_, now);
    while (!differing.empty() && Clock::now() - start < std::chrono::seconds(60)) {
      nx::ThrowIfInterrupted();
      if (Completes(*baseline_, now)) {
        on_event({{"type", "drill"}, {"phase", "routing baseline completed"}, {"switches", differing.size()},
                  {"additions", RouteDifferences(*baseline_, now, 20)}});
        baseline_ = now;
        differing.clear();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      now = SnapshotBgpRoutes(plan_);
      differing = DifferingSwitches(*baseline_, now);
    }
    std::string names;
    for (const auto& n : differing) names += (names.empty() ? "" : ", ") + n;
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    on_event({{"type", "drill"}, {"phase", differing.empty() ? "lab converged" : "lab not converged"},
              {"waited_seconds", waited}, {"differing", names},
              {"differences", RouteDifferences(*baseline_, now, 20)}});
    if (!differing.empty() && progress)
      std::fprintf(stderr, "drill: warning: routes of %s still differ from the start after 60 s; going on\n",
                   names.c_str());
  }

  int ApplyFault(const emulator::FaultAction& action) override { return injector_->Apply(action); }
  void RevertFault(int id) override { injector_->Revert(id); }
  int RevertLeftoverFaults() override { return nx::RevertLeftoverFaults(plan_); }

  void StartObserving(const EventFn& on_event, DrillMetrics* metrics) override {
    observer_ = std::make_unique<LabObserver>(plan_, ObserverOptions{.interval = PollInterval(plan_)}, on_event,
                                              metrics);
    observer_->Start();
  }
  void StopObserving() override {
    if (observer_) observer_->Stop();
    observer_.reset();
  }
  std::vector<LinkSample> SampleLinks() override {
    std::vector<LinkSample> out;
    if (!observer_) return out;
    for (const auto& l : observer_->LastLinkSamples())
      out.push_back({l.link, l.end, l.counters.rx_packets, l.counters.tx_packets, l.counters.rx_dropped,
                     l.counters.tx_dropped, std::nullopt});
    return out;
  }

  std::unique_ptr<Job> CreateJob(const JobConfig& config, Job::EventFn on_event, Job::StepFn on_step) override {
    return MakeRealtimeJob(plan_, config, std::move(on_event), std::move(on_step));
  }

  // "frr": what the switches run, e.g. "8.4.4 on 8 switches (this machine); 10.3 on 4 switches
  // (mrclab/frr:trixie)"; "frr_daemons": each switch's, as deploy recorded them.
  json Versions() override {
    utsname u{};
    uname(&u);
    json out = {{"mrclab", MRCLAB_VERSION}, {"kernel", u.release}};
    const json& software = switch_software_;
    if (software.empty()) {  // not prepared, or deployed by an mrclab that did not record it
      out["frr"] = FirstLine({nx::FrrDir() + "/zebra", "--version"});
      return out;
    }
    std::map<std::string, int> groups;  // "10.3 ... (image)" -> switches
    for (const auto& [node, sw] : software.items()) {
      const json daemons = sw.value("daemons", json::object());
      const std::string version = daemons.contains("zebra") ? daemons["zebra"].get<std::string>() : "?";
      ++groups[version + "\t" + sw.value("image", std::string("this machine"))];
    }
    std::string summary;
    for (const auto& [key, n] : groups) {
      const size_t tab = key.find('\t');
      summary += (summary.empty() ? "" : "; ") + key.substr(0, tab) + " on " + std::to_string(n) + " switch" +
                 (n == 1 ? "" : "es") + " (" + key.substr(tab + 1) + ")";
    }
    out["frr"] = summary;
    out["frr_daemons"] = software;
    return out;
  }

  void CollectLogs(RunRecorder& recorder) override { recorder.CopyFrrLogs(nx::LabPaths(plan_.name).root); }

 private:
  std::unique_ptr<nx::DrillLock> lock_;  // held while the drill lives: one drill per lab
  emulator::ResolvedLab plan_;
  std::string text_;      // lab file text, when the drill may deploy it
  bool reused_ = false;   // deployed before the drill: reuse, never destroy
  bool deployed_ = false; // deployed by Prepare
  std::optional<nx::FaultInjector> injector_;
  std::unique_ptr<LabObserver> observer_;
  std::optional<RoutingSnapshot> baseline_;
  json switch_software_ = json::object();  // what deploy recorded (lab.json), read by Prepare
};

// Where a netns drill's lab comes from: a lab file (its text, read strictly) or a deployed lab.
struct NetnsLab {
  std::string reference, field;  // as given, and where ("lab" or "--lab")
  std::optional<std::string> file_text;
};

NetnsLab FindNetnsLab(const Scenario& s, const std::string& lab_override, const std::string& override_option) {
  NetnsLab out{lab_override.empty() ? s.lab : lab_override, lab_override.empty() ? "lab" : override_option, {}};
  const std::string& lab = out.reference;
  const bool path_like = emulator::IsLabFilePath(lab);
  if (emulator::PathExists(lab) && (path_like || emulator::IsRegularFile(lab))) {
    try {
      out.file_text = emulator::ReadInputFile(lab);  // refuses FIFOs, devices, huge files
    } catch (const emulator::LabError& e) {
      throw ScenarioError(s.file, out.field, "'" + lab + "' " + e.reason());
    }
    return out;
  }
  if (path_like) throw ScenarioError(s.file, out.field, "lab file '" + lab + "' does not exist");
  if (!IsDeployed(lab))
    throw ScenarioError(s.file, out.field,
                        "'" + lab + "' is neither a lab file nor a deployed lab (mrclab list)" +
                            LabLookupNote(s, lab_override.empty()));
  return out;
}

// A lab file's plan; one not deployed yet must fit this machine (it is refused before its
// routes are planned: deploy.h). A deployed one's memory is already taken.
emulator::ResolvedLab PlanOf(const emulator::LabSpec& spec) {
  return IsDeployed(spec.name) ? emulator::Resolve(spec) : nx::ResolveForEmulation(spec);
}

}  // namespace

emulator::ResolvedLab NetnsLabPlan(const Scenario& s, const std::string& lab_override,
                                   const std::string& override_option) {
  const NetnsLab found = FindNetnsLab(s, lab_override, override_option);
  emulator::ResolvedLab plan = found.file_text
                                   ? PlanOf(emulator::ParseLabText(*found.file_text, found.reference))
                                   : nx::LoadDeployedLab(found.reference);
  return plan;
}

void CheckNetnsFaultTools(const Scenario& s) {
  for (size_t i = 0; i < s.faults.size(); ++i) {
    if (s.faults[i].kind != emulator::FaultKind::kConfigChange) continue;
    if (const std::string problem = nx::FrrReloadProblem(); !problem.empty())
      throw ScenarioError(s.file, "faults[" + std::to_string(i) + "].kind", "config_change: " + problem);
  }
}

std::unique_ptr<DrillBackend> MakeNetnsBackend(const Scenario& s, const std::string& lab_override,
                                               const std::string& override_option) {
  const NetnsLab found = FindNetnsLab(s, lab_override, override_option);
  const std::string& lab = found.reference;
  const std::string& field = found.field;
  // One drill per lab, from before it is deployed or reused until the drill ends.
  auto lock = [&](const std::string& name) {
    try {
      return std::make_unique<nx::DrillLock>(name, "mrclab drill " + s.file + " since " + UtcClockTime());
    } catch (const emulator::InputError& e) {
      throw ScenarioError(s.file, field, e.what());
    }
  };
  if (found.file_text) {
    const std::string& text = *found.file_text;
    emulator::ResolvedLab plan = PlanOf(emulator::ParseLabText(text, lab));
    auto held = lock(plan.name);
    if (!IsDeployed(plan.name)) return std::make_unique<NetnsBackend>(std::move(held), std::move(plan), text, false);
    emulator::ResolvedLab running = nx::LoadDeployedLab(plan.name);
    auto plan_of = [](const emulator::ResolvedLab& l) {  // the plan, not where it was read from
      json j = l.ToJson();
      j.erase("source");
      return j;
    };
    if (plan_of(running) != plan_of(plan))
      throw ScenarioError(s.file, field, "lab '" + plan.name + "' is deployed with a different plan than " + lab +
                                             "; destroy it (mrclab destroy " + plan.name + ") or name the deployed lab");
    return std::make_unique<NetnsBackend>(std::move(held), std::move(running), "", true);
  }
  auto held = lock(lab);
  if (nx::ReadLabJson(lab).value("state", "") != "ready")
    throw ScenarioError(s.file, field, "lab '" + lab + "' is not ready (mrclab list)");
  return std::make_unique<NetnsBackend>(std::move(held), nx::LoadDeployedLab(lab), "", true);
}

}  // namespace mrclab::harness
