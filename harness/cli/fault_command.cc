#include "harness/cli/fault_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "emulator/lab_spec.h"
#include "emulator/netns/fault_journal.h"
#include "emulator/netns/faults.h"
#include "emulator/netns/interrupt.h"
#include "emulator/netns/lab_state.h"
#include "emulator/wall_clock.h"

namespace mrclab::harness {
namespace {

namespace nx = emulator::netns;
using emulator::ResolvedLab;
using nlohmann::json;
using emulator::FaultKind;

struct FaultArgs {
  std::string lab, kind, target, id;
  std::string direction, loss, rate, mode;
  std::vector<std::string> config, revert_config;
  bool all = false;
  bool json = false;
};

// Bad input: exit status 2 with one line naming the argument.
[[noreturn]] void Bad(const std::string& what) { throw std::invalid_argument(what); }

bool OnLink(FaultKind k) { return emulator::Info(k).target == emulator::FaultTarget::kLink; }

emulator::FaultAction BuildAction(const ResolvedLab& lab, const FaultArgs& a) {
  emulator::FaultAction action;
  auto kind = emulator::ParseFaultKind(a.kind);
  if (!kind || emulator::Info(*kind).controller || *kind == FaultKind::kFlap)
    Bad("KIND '" + a.kind + "' is not one of link_down, blackhole, loss, rate, switch_down, "
        "plane_down, bgp_reset, config_change");
  action.kind = *kind;
  const std::string name(emulator::ToString(action.kind));
  auto only_for = [&](bool given, const char* option, bool allowed, const char* kinds) {
    if (given && !allowed) Bad(std::string(option) + " applies to " + kinds + " only, not " + name);
  };
  only_for(!a.direction.empty(), "--direction",
           action.kind == FaultKind::kBlackhole || action.kind == FaultKind::kLoss, "blackhole and loss");
  only_for(!a.loss.empty(), "--rate-loss", action.kind == FaultKind::kLoss, "loss");
  only_for(!a.rate.empty(), "--rate", action.kind == FaultKind::kRate, "rate");
  only_for(!a.mode.empty(), "--mode", action.kind == FaultKind::kBgpReset, "bgp_reset");
  only_for(!a.config.empty(), "--config", action.kind == FaultKind::kConfigChange, "config_change");
  only_for(!a.revert_config.empty(), "--revert-config", action.kind == FaultKind::kConfigChange,
           "config_change");

  if (OnLink(action.kind)) {
    try {
      action.link = emulator::ResolveLinkTarget(lab, a.target);
    } catch (const emulator::FaultError& e) {
      Bad(e.what());
    }
  } else if (action.kind == FaultKind::kPlaneDown) {
    if (a.target.empty() || a.target.size() > 3 ||
        a.target.find_first_not_of("0123456789") != std::string::npos)
      Bad("TARGET '" + a.target + "' is not a plane number (lab '" + lab.name + "' has planes 0.." +
          std::to_string(lab.planes - 1) + ")");
    action.plane = std::stoi(a.target);
  } else {
    action.node = a.target;
  }
  if (!a.direction.empty()) {
    auto d = emulator::ParseDirection(a.direction);
    if (!d) Bad("--direction '" + a.direction + "' is not both, a-b or b-a");
    action.direction = *d;
  }
  if (action.kind == FaultKind::kLoss) {
    if (a.loss.empty()) Bad("loss needs --rate-loss P (a probability, e.g. 0.02)");
    size_t used = 0;
    try {
      action.loss_rate = std::stod(a.loss, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != a.loss.size()) Bad("--rate-loss '" + a.loss + "' is not a number");
  }
  if (action.kind == FaultKind::kRate) {
    if (a.rate.empty()) Bad("rate needs --rate R (e.g. 100Mbit)");
    try {
      action.rate_bps = emulator::ParseRate(a.rate);
    } catch (const std::invalid_argument& e) {
      Bad(std::string("--rate: ") + e.what());
    }
    if (const std::string problem = emulator::RateFaultProblem(lab, action.rate_bps); !problem.empty())
      Bad("--rate: " + problem);
  }
  if (action.kind == FaultKind::kBgpReset && !a.mode.empty()) action.bgp_mode = a.mode;
  if (action.kind == FaultKind::kConfigChange) {
    if (a.config.empty()) Bad("config_change needs at least one --config LINE");
    action.config_lines = a.config;
    action.revert_lines = a.revert_config;
  }
  try {
    emulator::ValidateFault(lab, action);
  } catch (const emulator::FaultError& e) {
    Bad(e.what());
  }
  return action;
}

int Apply(const FaultArgs& a) {
  ResolvedLab lab = nx::LoadDeployedLab(a.lab);
  emulator::FaultAction action = BuildAction(lab, a);
  nx::FaultInjector injector(lab);
  int id = 0;
  try {
    id = injector.Apply(action);
  } catch (const emulator::FaultError& e) {
    std::fprintf(stderr, "mrclab: error: %s\n", e.what());
    return emulator::ExitStatusOf(e);  // a line FRR refuses is bad input; else a failed operation
  }
  if (a.json) {
    std::cout << json{{"lab", lab.name}, {"id", id}, {"description", action.Describe(lab)},
                      {"action", action.ToJson()}}.dump(2)
              << "\n";
  } else {
    std::printf("fault %d applied: %s\n", id, action.Describe(lab).c_str());
    std::printf("revert with: mrclab fault revert %s %d\n", lab.name.c_str(), id);
  }
  return 0;
}

int List(const FaultArgs& a) {
  ResolvedLab lab = nx::LoadDeployedLab(a.lab);
  nx::FaultInjector injector(lab);
  const std::vector<nx::ActiveFault> active = injector.Active();
  if (a.json) {
    json out = json::array();
    for (const auto& f : active)
      out.push_back({{"id", f.id}, {"applied_at", f.applied_at},
                     {"description", f.action.Describe(lab)}, {"action", f.action.ToJson()}});
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  if (active.empty()) std::printf("no active faults in lab %s\n", lab.name.c_str());
  const double now = emulator::UnixNow();
  for (const auto& f : active)
    std::printf("%4d  %7.1f s ago  %s\n", f.id, now - f.applied_at, f.action.Describe(lab).c_str());
  return 0;
}

int Revert(const FaultArgs& a) {
  ResolvedLab lab = nx::LoadDeployedLab(a.lab);
  if (a.all == !a.id.empty()) Bad("give a fault ID or --all (see: mrclab fault list " + a.lab + ")");
  nx::FaultInjector injector(lab);
  std::vector<nx::ActiveFault> before = injector.Active();
  json reverted = json::array();
  std::vector<std::string> lines;
  int status = 0;
  if (a.all) {
    int count = 0;
    try {
      count = nx::RevertLeftoverFaults(lab);
    } catch (const emulator::FaultError& e) {
      std::fprintf(stderr, "mrclab: error: %s\n", e.what());
      status = emulator::ExitStatusOf(e);
    }
    std::vector<nx::ActiveFault> after = injector.Active();
    for (const auto& f : before) {
      bool still = false;
      for (const auto& g : after) still = still || g.id == f.id;
      if (!still) reverted.push_back({{"id", f.id}, {"description", f.action.Describe(lab)}});
    }
    lines.push_back(std::to_string(count) + " fault(s) reverted in lab " + lab.name);
  } else {
    if (a.id.find_first_not_of("0123456789") != std::string::npos || a.id.size() > 9)
      Bad("ID '" + a.id + "' is not a fault id (see: mrclab fault list " + a.lab + ")");
    const int id = std::stoi(a.id);
    bool known = false, active = false;
    for (const auto& r : nx::FaultJournal::Read(lab.name))
      if (r.id == id) {
        known = true;
        active = !r.reverted;
      }
    if (!known)
      Bad("fault " + a.id + " is not in the journal of lab '" + lab.name +
          "' (see: mrclab fault list " + lab.name + ")");
    std::string description;
    for (const auto& f : before)
      if (f.id == id) description = f.action.Describe(lab);
    try {
      injector.Revert(id);
      if (active) reverted.push_back({{"id", id}, {"description", description}});
      lines.push_back(active ? "fault " + a.id + " reverted: " + description
                             : "fault " + a.id + " was already reverted");
    } catch (const emulator::FaultError& e) {
      std::fprintf(stderr, "mrclab: error: %s\n", e.what());
      status = emulator::ExitStatusOf(e);
    }
  }
  if (a.json) {
    std::cout << json{{"lab", lab.name}, {"reverted", reverted}, {"ok", status == 0}}.dump(2) << "\n";
  } else if (status == 0) {
    for (const auto& l : lines) std::printf("%s\n", l.c_str());
  }
  return status;
}

// Ctrl-C during a revert's wait leaves the fault active (its journal line says so).
int Guard(const std::function<int()>& fn) {
  try {
    return fn();
  } catch (const nx::Interrupted&) {
    std::fprintf(stderr, "mrclab: interrupted; faults not reverted yet stay active (see: mrclab "
                         "fault list LAB)\n");
    return emulator::kExitInterrupted;
  }
}

}  // namespace

void AddFaultCommand(CLI::App& app, int& exit_status) {
  static FaultArgs a;
  auto* fault = app.add_subcommand("fault", "Inject faults into a deployed lab, list and revert them");
  fault->require_subcommand(1);
  const std::string help =
      "Kinds and their TARGET:\n"
      "  link_down     LINK    both ends of the link administratively down\n"
      "  blackhole     LINK    link keeps its carrier, drops everything (--direction)\n"
      "  loss          LINK    drops a random fraction (--rate-loss P, --direction)\n"
      "  rate          LINK    both ends shaped to --rate R instead of the lab's link_rate\n"
      "  switch_down   SWITCH  its links down, its FRR daemons stopped\n"
      "  plane_down    PLANE   every host port of the plane down\n"
      "  bgp_reset     SWITCH  clear bgp * (--mode clear) or bgpd restarted (--mode restart)\n"
      "  config_change SWITCH  --config LINE... entered into one FRR daemon; its running\n"
      "                        configuration is saved first, and revert puts it back\n"
      "                        (frr-reload.py), after the --revert-config LINE... if any\n"
      "LINK is NODE:INTERFACE (either end, e.g. p0-leaf0:spine0), NODE--NODE or a link index.\n"
      "Faults stay active after the command exits, until reverted or the lab is destroyed.\n"
      "Examples:\n"
      "  mrclab fault apply clos2 link_down p0-leaf0:spine0\n"
      "  mrclab fault apply clos2 blackhole p0-leaf0--p0-spine0 --direction a-b\n"
      "  mrclab fault apply clos2 loss p1-leaf2:spine1 --rate-loss 0.02\n"
      "  mrclab fault apply clos2 rate host0:eth0 --rate 100Mbit\n"
      "  mrclab fault apply clos2 switch_down p0-spine1\n"
      "  mrclab fault apply clos2 plane_down 1\n"
      "  mrclab fault apply clos2 bgp_reset p0-leaf0 --mode restart\n"
      "  mrclab fault apply clos2 config_change p0-leaf0 --config 'interface spine0' --config shutdown\n"
      "  mrclab fault list clos2\n"
      "  mrclab fault revert clos2 3        # or --all: every active fault, also a crashed drill's\n"
      "Exit status: 0 done, 1 the operation failed (a revert that could not restore: the fault\n"
      "  stays active, and says what differs), 2 bad input (also a line FRR refuses).";
  fault->footer(help);
  auto run = [&exit_status](std::function<int()> fn) {
    return [&exit_status, fn] { exit_status = Guard(fn); };
  };

  auto* apply = fault->add_subcommand("apply", "Apply a fault; prints its id and description");
  apply->add_option("lab", a.lab, "Deployed lab name")->required();
  apply->add_option("kind", a.kind, "link_down, blackhole, loss, rate, switch_down, plane_down, "
                                    "bgp_reset, config_change")->required();
  apply->add_option("target", a.target, "A link, a switch or a plane, depending on KIND")->required();
  apply->add_option("--direction", a.direction, "blackhole, loss: both (default), a-b or b-a "
                                                "(a, b: the link's ends as in mrclab inspect)");
  apply->add_option("--rate-loss,--loss", a.loss, "loss: drop probability 0..1 (resolution 1e-4)");
  apply->add_option("--rate", a.rate, "rate: new rate of both ends, e.g. 100Mbit");
  apply->add_option("--mode", a.mode, "bgp_reset: clear (default) or restart");
  apply->add_option("--config", a.config, "config_change: a configuration line (repeat)");
  apply->add_option("--revert-config", a.revert_config,
                    "config_change: a line that undoes it (repeat), entered before the saved "
                    "configuration is reloaded (optional)");
  apply->add_flag("--json", a.json, "Machine-readable");
  apply->footer(help);
  apply->callback(run([] { return Apply(a); }));

  auto* list = fault->add_subcommand("list", "List the active faults of a lab");
  list->add_option("lab", a.lab, "Deployed lab name")->required();
  list->add_flag("--json", a.json, "Machine-readable");
  list->callback(run([] { return List(a); }));

  auto* revert = fault->add_subcommand("revert", "Revert a fault, or every active one (--all)");
  revert->add_option("lab", a.lab, "Deployed lab name")->required();
  revert->add_option("id", a.id, "Fault id (from apply or list)");
  revert->add_flag("--all", a.all, "Every active fault of the lab, whoever applied it");
  revert->add_flag("--json", a.json, "Machine-readable");
  revert->callback(run([] { return Revert(a); }));
}

}  // namespace mrclab::harness
