// A scenario's fault schedule resolved against a lab: every target named or selected (with
// the scenario's seed), every action validated, and every fault turned into time windows
// (seconds after the baseline steps) during which it is active. Pure: no kernel state, so a
// bad target is reported before anything is deployed or injected.
//
//   link_down, blackhole, loss, rate, switch_down, plane_down, bgp_reset, config_change
//                 kernel/FRR actions (emulator/netns/faults.h), applied together per window
//   flap          link_down windows: count x (down, up), optionally jittered 0.5x..1.5x
//   ev_deny, port_disable
//                 controller actions on the job's MRC endpoints
// A fault without a duration stays until the end of the drill (after the tail steps).
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "emulator/fault.h"
#include "emulator/resolved_lab.h"
#include "harness/drill/scenario.h"

namespace mrclab::harness {

inline constexpr double kUntilEnd = std::numeric_limits<double>::infinity();

struct Window {
  double apply = 0, revert = kUntilEnd;
};

struct PlannedFault {
  int index = 0;
  std::string field, description;
  emulator::FaultKind kind = emulator::FaultKind::kLinkDown;
  std::vector<emulator::FaultAction> actions;  // kernel faults
  struct EvDeny {
    std::string from, to;
    std::vector<int> evs;
  };
  std::optional<EvDeny> ev_deny;
  struct PortDisable {
    std::string host;
    int plane = 0;
  };
  std::optional<PortDisable> port_disable;
  std::vector<Window> windows;
};

struct FaultPlan {
  std::vector<PlannedFault> faults;
  double end_seconds = 0;  // when the last timed window closes (or the last fault starts)
  nlohmann::json ToJson() const;
};

// Throws ScenarioError naming "faults[i].target" (or the field) and the reason.
FaultPlan PlanFaults(const Scenario& scenario, const emulator::ResolvedLab& lab);

}  // namespace mrclab::harness
