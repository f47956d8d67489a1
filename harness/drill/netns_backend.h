// The drill backend of emulated labs (drill_backend.h): network namespaces, FRR and kernel SRv6
// (emulator/netns), real time, jobs driven by TrainingJob (Asio endpoints in the hosts'
// namespaces), BGP/BFD and link counters watched by the LabObserver.
#pragma once

#include <memory>
#include <string>

#include "emulator/resolved_lab.h"
#include "harness/drill/drill_backend.h"

namespace mrclab::harness {

struct Scenario;

// The scenario's lab, or `lab_override` (a lab file, or a deployed lab's name; errors about it
// name `override_option`, the front end's name for it): a deployed lab is reused (and must have
// the file's plan), otherwise it is deployed by Prepare. Throws ScenarioError naming the field.
std::unique_ptr<DrillBackend> MakeNetnsBackend(const Scenario& scenario, const std::string& lab_override,
                                               const std::string& override_option);

// The plan of that lab, for --check: nothing is deployed. Same errors as MakeNetnsBackend.
emulator::ResolvedLab NetnsLabPlan(const Scenario& scenario, const std::string& lab_override,
                                   const std::string& override_option);

// The tools this machine needs for the scenario's faults in a lab (frr-reload.py for a
// config_change); throws ScenarioError naming faults[i].kind and the package to install.
void CheckNetnsFaultTools(const Scenario& scenario);

}  // namespace mrclab::harness
