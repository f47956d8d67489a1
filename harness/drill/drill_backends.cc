// Which backend a drill runs in, what it can do, and making it (drill_runner.h).
#include "emulator/netns/interrupt.h"
#include "emulator/ns3/helper/ns3_backend.h"
#include "emulator/strict_yaml.h"
#include "harness/drill/drill_runner.h"
#include "harness/drill/netns_backend.h"
#include "mrc/core/qp_presets.h"

namespace mrclab::harness {
namespace {

using emulator::BackendKind;

// The lab file a simulation builds: the scenario's (or --lab), which must be a file.
std::string SimulationLabFile(const Scenario& s, const DrillOptions& o) {
  const std::string lab = o.lab.empty() ? s.lab : o.lab;
  const std::string field = o.lab.empty() ? "lab" : o.lab_option;
  if (!emulator::IsRegularFile(lab))
    throw ScenarioError(s.file, field,
                        "'" + lab + "' is not a lab file" + LabLookupNote(s, o.lab.empty()) +
                            "; a simulation builds its lab from a file (deployed labs are netns labs)");
  return lab;
}

}  // namespace

BackendKind ChosenBackend(const Scenario& s, const DrillOptions& o) {
  return o.backend.value_or(s.backend.value_or(BackendKind::kNetns));
}

void CheckBackendSupport(const Scenario& s, const DrillOptions& o) {
  const BackendKind backend = ChosenBackend(s, o);
  const std::string name(ToString(backend));
  for (const FaultSpec& f : s.faults)
    if (!emulator::Supports(backend, f.kind))
      throw ScenarioError(s.file, f.field + ".kind",
                          std::string(ToString(f.kind)) + " is not modelled by the " + name +
                              " backend (it needs the emulated lab's FRR: --backend netns)");
  if (backend == BackendKind::kNetns && s.job.timers == TimerScale::kFabric)
    throw ScenarioError(s.file, "job.timers",
                        "fabric (µs) timers need virtual time: use --backend ns3, or timers: realtime");
  if (backend != BackendKind::kNs3) return;
  for (size_t i = 0; i < s.transports.size(); ++i)
    if (s.transports[i].stack == TransportStack::kKernel)
      throw ScenarioError(s.file, "transports[" + std::to_string(i) + "].stack",
                          "kernel: the kernel's RC runs on the VM hosts of an emulated lab, not in the ns3 "
                          "backend's simulated hosts (--backend netns)");
  const emulator::LabSpec lab = emulator::ParseLabFile(SimulationLabFile(s, o));
  if (!lab.sysctls.empty())
    throw emulator::LabError(lab.source, "sysctls",
                             "kernel settings are not modelled by the ns3 backend (they need the emulated lab: "
                             "--backend netns)");
  if (!lab.images.empty())
    throw emulator::LabError(lab.source, lab.images[0].field,
                             "router images are not modelled by the ns3 backend (it routes without FRR; they need "
                             "the emulated lab: --backend netns)");
  for (const emulator::RuntimeSpec& r : lab.runtimes)
    if (r.vm)
      throw emulator::LabError(lab.source, r.field + ".runtime",
                               "VM hosts are not modelled by the ns3 backend (its hosts are simulated nodes; they "
                               "need the emulated lab: --backend netns)");
  if (!lab.frr_configs.empty())
    throw emulator::LabError(lab.source, "frr_config",
                             "the switches' own FRR configuration is not modelled by the ns3 backend (it routes "
                             "without FRR; it needs the emulated lab: --backend netns)");
}

emulator::ResolvedLab DrillLabPlan(const Scenario& s, const DrillOptions& o) {
  if (ChosenBackend(s, o) == BackendKind::kNetns) return NetnsLabPlan(s, o.lab, o.lab_option);
  return emulator::Resolve(emulator::ParseLabFile(SimulationLabFile(s, o)), {.routes = false});
}

std::unique_ptr<DrillBackend> MakeDrillBackend(const Scenario& s, const DrillOptions& o) {
  if (ChosenBackend(s, o) == BackendKind::kNetns) return MakeNetnsBackend(s, o.lab, o.lab_option);
  emulator::sim::Ns3BackendOptions options;
  options.seed = s.seed;
  options.stop_requested = &emulator::netns::InterruptRequested;
  options.qp_config = s.job.timers == TimerScale::kFabric ? mrc::FabricQpConfig : mrc::RealtimeQpConfig;
  return emulator::sim::MakeNs3Backend(
      emulator::Resolve(emulator::ParseLabFile(SimulationLabFile(s, o)), {.routes = false}), options);
}

}  // namespace mrclab::harness
