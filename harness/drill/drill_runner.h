// `mrclab drill`: prepares the scenario's lab in its backend (netns: boots or reuses it; ns3:
// builds the simulation), and for each transport runs the synthetic training job through
// baseline steps, the fault schedule and tail steps, while the backend's observer and live
// metrics run; then reverts every fault, evaluates the SLOs, writes the run directory
// (run_recorder.h) and releases what it prepared. It talks to the world only through
// DrillBackend (drill_backend.h) and Job.
//
// Every fault it applies is reverted on every path out: normal end, job interruption, an error,
// Ctrl-C (emulator::netns::Interrupted is rethrown after the cleanup). Faults left by a drill
// that was killed outright are reverted by the next drill on the same lab, by
// `mrclab fault revert LAB --all`, or by destroying the lab.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/errors.h"
#include "harness/drill/drill_backend.h"
#include "harness/drill/scenario.h"

namespace mrclab::harness {

struct DrillOptions {
  std::string out_root = "runs";
  std::string lab;  // instead of the scenario's lab: a lab file, or a deployed lab's name
  std::string metrics_bind = "127.0.0.1:9464";  // "" = no metrics endpoint
  bool metrics_free_port_if_taken = false;       // MetricsOptions::free_port_if_taken
  bool keep_lab = false;  // leave a lab the drill deployed in place
  bool progress = true;   // progress lines on stderr
  bool summary = true;    // the human summary on stdout
  std::vector<std::string> transports;  // only these transports (names); empty = all
  std::optional<emulator::BackendKind> backend;  // overrides the scenario's `backend:` (default netns)
  // What errors call `lab` and `transports`: the CLI's flags, or the Python module's keywords.
  std::string lab_option = "--lab", transport_option = "--transport";
};

struct DrillOutcome {
  // kExitOk every SLO passed, kExitFailed an SLO failed, kExitInconclusive: the machine was the
  // bottleneck during a fault window or the baseline (fidelity.h), or a planned fault window was
  // not reached (verdict.h), so the SLO results cannot judge the fabric (emulator/errors.h).
  int exit_status = emulator::kExitOk;
  std::string run_dir;
  nlohmann::json result;
};

// The backend the drill runs in: options.backend, else the scenario's, else netns.
emulator::BackendKind ChosenBackend(const Scenario& scenario, const DrillOptions& options);

// Throws ScenarioError naming the field when the scenario asks for what the backend cannot do
// (a fault kind it does not model, a lab it cannot hold, a reused lab in simulation, ...).
void CheckBackendSupport(const Scenario& scenario, const DrillOptions& options);

// The scenario's transports that options.transports names (all when it names none), in the
// scenario's order. Throws ScenarioError (field --transport) for a name the scenario lacks.
std::vector<TransportSpec> SelectedTransports(const Scenario& scenario, const DrillOptions& options);

// The backend for the scenario (drill_backends.cc): the netns lab or the ns-3 simulation.
std::unique_ptr<DrillBackend> MakeDrillBackend(const Scenario& scenario, const DrillOptions& options);

// The plan of the lab the drill would run on, making nothing (--check); the same errors.
emulator::ResolvedLab DrillLabPlan(const Scenario& scenario, const DrillOptions& options);

// Throws ScenarioError / std::runtime_error for errors (nothing is left applied) and
// emulator::netns::Interrupted on Ctrl-C (after reverting and cleaning up).
DrillOutcome RunDrill(const Scenario& scenario, const DrillOptions& options);

}  // namespace mrclab::harness
