// FaultInjector: applies and reverts faults on a deployed lab through the fault journal, with
// the kernel means of fault_kernel.h / link_shaping.h and the daemon control of frr_daemons.h.
//
// Faults may overlap: a link (daemon) that another active fault holds down (stopped) is not
// brought up (started) by a revert, and the BGP sessions a revert waits for exclude those
// another active fault keeps down.
#include "emulator/netns/faults.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "emulator/netns/fault_journal.h"
#include "emulator/netns/fault_kernel.h"
#include "emulator/netns/frr_daemons.h"
#include "emulator/netns/frr_reload.h"
#include "emulator/netns/interrupt.h"
#include "emulator/netns/lab_state.h"
#include "emulator/netns/link_shaping.h"
#include "emulator/netns/vty_client.h"
#include "emulator/wall_clock.h"

namespace mrclab::emulator::netns {
namespace {

using Clock = std::chrono::steady_clock;
// How long a revert that restarts daemons waits for their BGP sessions.
constexpr std::chrono::seconds kRecoveryTimeout{60};

std::string Table(int id) { return "mrclab_fault_" + std::to_string(id); }

std::string Trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  size_t first = text.find_first_not_of(" \n");
  return first == std::string::npos ? "" : text.substr(first);
}

// The links a fault takes administratively down (both ends).
std::set<int> DownLinks(const ResolvedLab& lab, const FaultAction& a) {
  std::set<int> links;
  for (const ResolvedLink& l : lab.links) {
    if ((a.kind == FaultKind::kLinkDown && l.index == a.link) ||
        (a.kind == FaultKind::kSwitchDown && (l.a.node == a.node || l.b.node == a.node)) ||
        (a.kind == FaultKind::kPlaneDown && !l.fabric && l.plane == a.plane))
      links.insert(l.index);
  }
  return links;
}

// The daemons a fault stops, as (switch, daemon).
std::set<std::pair<std::string, std::string>> StoppedDaemons(const ResolvedLab& lab,
                                                             const FaultAction& a) {
  std::set<std::pair<std::string, std::string>> out;
  if (a.kind == FaultKind::kSwitchDown)
    for (const std::string& d : DaemonsFor(lab)) out.insert({a.node, d});
  if (a.kind == FaultKind::kBgpReset && a.bgp_mode == "restart") out.insert({a.node, "bgpd"});
  return out;
}

struct DropPoint {
  const ResolvedNode* node;
  std::string interface;
  DropHook hook;
};

// Where a blackhole or loss fault drops, per direction it covers: at the receiving end's
// ingress, or, when that end is a VM host's (its interface is in the guest), at the egress of
// the leaf's tap toward it.
std::vector<DropPoint> DropPoints(const ResolvedLab& lab, const FaultAction& a) {
  const ResolvedLink& l = lab.links.at(a.link);
  std::vector<DropPoint> points;
  const auto receiving = [&](const EndpointSpec& to, const EndpointSpec& from) {
    const ResolvedNode* node = lab.FindNode(to.node);
    if (node->vm)
      points.push_back({lab.FindNode(from.node), from.interface, DropHook::kEgress});
    else
      points.push_back({node, to.interface, DropHook::kIngress});
  };
  if (a.direction != Direction::kAToB) receiving(l.a, l.b);
  if (a.direction != Direction::kBToA) receiving(l.b, l.a);
  return points;
}

// What the other active faults hold.
struct Holds {
  std::set<int> down_links, dropping_links;
  std::set<std::pair<std::string, std::string>> stopped;
  std::set<std::string> reconfigured;  // switches with an active config_change
  std::map<int, uint64_t> rate;        // link -> rate of the newest rate fault on it

  Holds(const ResolvedLab& lab, const std::vector<FaultRecord>& others) {
    for (const FaultRecord& r : others) {  // by id: a later fault overrides an earlier rate
      const FaultAction& a = r.action;
      for (int l : DownLinks(lab, a)) down_links.insert(l);
      for (const auto& s : StoppedDaemons(lab, a)) stopped.insert(s);
      if (a.kind == FaultKind::kBlackhole || a.kind == FaultKind::kLoss) dropping_links.insert(a.link);
      if (a.kind == FaultKind::kConfigChange) reconfigured.insert(a.node);
      if (a.kind == FaultKind::kRate) rate[a.link] = a.rate_bps;
    }
  }
  bool Stopped(const std::string& node, const std::string& daemon) const {
    return stopped.count({node, daemon}) > 0;
  }
};

class FaultMeans {
 public:
  FaultMeans(const ResolvedLab& lab, int id, const FaultAction& a,
             const std::vector<FaultRecord>& others)
      : lab_(lab), paths_(lab.name), id_(id), a_(a), holds_(lab, others) {}

  // Atomic: when a step fails, the steps before it are undone before this throws.
  void Apply() {
    if (a_.kind == FaultKind::kConfigChange) return ApplyConfig();  // undoes by itself
    try {
      Make();
    } catch (const std::exception& e) {
      std::string undo;
      try {
        Revert();
      } catch (const std::exception& u) {
        undone_ = false;
        undo = std::string("; undoing it failed too (") + u.what() + "); it stays active: " +
               "mrclab fault revert " + lab_.name + " " + std::to_string(id_);
      }
      throw FaultError(a_.Describe(lab_) + ": " + e.what() +
                       (undo.empty() ? "; nothing was changed" : undo));
    }
  }

  // False after Apply threw and could not undo everything it made.
  bool undone() const { return undone_; }

  // Idempotent: undoing what is not there is fine.
  void Revert() {
    switch (a_.kind) {
      case FaultKind::kLinkDown:
      case FaultKind::kPlaneDown:
        SetLinksUp(lab_, Unheld(DownLinks(lab_, a_)), true);
        break;
      case FaultKind::kBlackhole:
      case FaultKind::kLoss: {
        const ResolvedLink& l = lab_.links.at(a_.link);
        DeleteNftTable(lab_.FindNode(l.a.node)->netns, Table(id_));
        DeleteNftTable(lab_.FindNode(l.b.node)->netns, Table(id_));
        break;
      }
      case FaultKind::kRate: {
        auto it = holds_.rate.find(a_.link);
        std::optional<uint64_t> rate = lab_.link_rate_bps;
        if (it != holds_.rate.end()) rate = it->second;
        const ResolvedLink& l = lab_.links.at(a_.link);
        ShapeInterface(lab_.FindNode(l.a.node)->netns, l.a.interface, rate);
        ShapeInterface(lab_.FindNode(l.b.node)->netns, l.b.interface, rate);
        break;
      }
      case FaultKind::kSwitchDown:
        SetLinksUp(lab_, Unheld(DownLinks(lab_, a_)), true);
        StartUnheld(DaemonsOf(lab_, paths_, Switch()));
        break;
      case FaultKind::kBgpReset:
        if (a_.bgp_mode == "restart") StartUnheld({"bgpd"});
        break;
      case FaultKind::kConfigChange:
        RestoreConfig();
        break;
      default:  // not fabric actions: ValidateFault refuses them
        break;
    }
  }

 private:
  const ResolvedNode& Switch() const { return *lab_.FindNode(a_.node); }

  std::set<int> Unheld(const std::set<int>& links) const {
    std::set<int> out;
    for (int l : links)
      if (!holds_.down_links.count(l)) out.insert(l);
    return out;
  }

  std::vector<std::string> Unheld(const std::vector<std::string>& daemons) const {
    std::vector<std::string> out;
    for (const std::string& d : daemons)
      if (!holds_.Stopped(a_.node, d)) out.push_back(d);
    return out;
  }

  void Make() {
    switch (a_.kind) {
      case FaultKind::kLinkDown:
      case FaultKind::kPlaneDown:
        SetLinksUp(lab_, DownLinks(lab_, a_), false);
        break;
      case FaultKind::kBlackhole:
      case FaultKind::kLoss: {
        const int per_10000 = a_.kind == FaultKind::kBlackhole
                                  ? 10000
                                  : static_cast<int>(std::lround(a_.loss_rate * 10000));
        for (const DropPoint& p : DropPoints(lab_, a_)) AddDrop(p.node->netns, Table(id_), p.interface, p.hook, per_10000);
        break;
      }
      case FaultKind::kRate: {
        const ResolvedLink& l = lab_.links.at(a_.link);
        ShapeInterface(lab_.FindNode(l.a.node)->netns, l.a.interface, a_.rate_bps);
        ShapeInterface(lab_.FindNode(l.b.node)->netns, l.b.interface, a_.rate_bps);
        break;
      }
      case FaultKind::kSwitchDown:
        SetLinksUp(lab_, DownLinks(lab_, a_), false);
        StopDaemons(paths_, Switch(), DaemonsOf(lab_, paths_, Switch()));
        break;
      case FaultKind::kBgpReset:
        if (a_.bgp_mode == "restart") {
          StopDaemons(paths_, Switch(), {"bgpd"});
        } else {
          Vty("bgpd", {"enable", "clear bgp *"});
        }
        break;
      case FaultKind::kConfigChange:
        break;
      default:  // not fabric actions: ValidateFault refuses them
        break;
    }
  }

  // Sends commands to a daemon of the switch over one connection; a refused one throws.
  void Vty(const std::string& daemon, const std::vector<std::string>& commands) {
    const std::string socket = paths_.NodeDir(a_.node) + "/" + daemon + ".vty";
    std::vector<VtyReply> replies;
    try {
      replies = VtyCommands(socket, commands, true);
    } catch (const VtyError& e) {
      throw FaultError(a_.node + ": cannot talk to " + daemon + ": " + e.what());
    }
    if (!replies.empty() && replies.back().status != 0)
      throw FaultError(a_.node + ": " + daemon + " refused '" + commands[replies.size() - 1] +
                       "': " + Trim(replies.back().output));
  }

  // Starts those of `daemons` that no other fault holds stopped, then waits for the switch's
  // BGP sessions (those no other fault keeps down).
  void StartUnheld(const std::vector<std::string>& daemons) {
    const ResolvedNode& sw = Switch();
    const auto deadline = Clock::now() + kRecoveryTimeout;
    const std::vector<std::string> started = StartMissingDaemons(lab_, paths_, sw, Unheld(daemons), deadline);
    if (lab_.routing != Routing::kBgp || holds_.Stopped(sw.name, "bgpd")) return;
    WaitForSwitchBgp(paths_, sw, SessionsToWaitFor(sw), started, deadline);
  }

  std::set<std::string> SessionsToWaitFor(const ResolvedNode& sw) const {
    std::set<std::string> sessions;
    if (holds_.reconfigured.count(sw.name)) return sessions;  // its sessions may be changed
    for (const ResolvedInterface& itf : sw.interfaces) {
      if (!lab_.IsFabric(itf)) continue;
      const ResolvedNode* peer = lab_.FindNode(itf.peer_node);
      if (holds_.down_links.count(itf.link) || holds_.dropping_links.count(itf.link) ||
          holds_.Stopped(peer->name, "bgpd") || holds_.reconfigured.count(peer->name))
        continue;
      sessions.insert(itf.name);
    }
    return sessions;
  }

  std::vector<std::string> ConfigCommands(const std::vector<std::string>& lines) const {
    std::vector<std::string> commands = {"enable", "configure terminal"};
    commands.insert(commands.end(), lines.begin(), lines.end());
    return commands;
  }

  // Where the daemon's configuration is saved before the lines are entered.
  std::string SavedConfigDir() const { return paths_.root + "/faults/" + std::to_string(id_); }
  std::string ConfigDaemonName() const { return ConfigDaemon(a_.config_lines.at(0)); }
  // With FRR 9 and later (a router image), mgmtd holds interfaces and static routes for zebra
  // and staticd: lines for them are entered on its vty socket, and the whole configuration is
  // saved and reloaded (frr-reload.py knows no mgmtd daemon).
  bool ThroughMgmtd() const {
    const std::string daemon = ConfigDaemonName();
    const std::vector<std::string> runs = DaemonsOf(lab_, paths_, Switch());
    return (daemon == "zebra" || daemon == "staticd") && std::find(runs.begin(), runs.end(), "mgmtd") != runs.end();
  }
  std::string VtyDaemonName() const { return ThroughMgmtd() ? "mgmtd" : ConfigDaemonName(); }
  std::string SavedDaemonName() const { return ThroughMgmtd() ? "" : ConfigDaemonName(); }

  // Saves the owning daemon's running configuration, then enters the lines; a line refused
  // part-way restores the saved configuration.
  void ApplyConfig() {
    const std::string daemon = ConfigDaemonName();
    if (std::string problem = FrrReloadProblem(); !problem.empty())
      throw FaultError(a_.node + ": config_change: " + problem + "; nothing was changed", ErrorKind::kInput);
    try {
      std::vector<std::string> interfaces;
      for (const ResolvedInterface& itf : Switch().interfaces) interfaces.push_back(itf.name);
      SaveRunningConfig(ToolsOf(lab_.name, Switch()), paths_.NodeDir(a_.node), SavedDaemonName(), SavedConfigDir(),
                        interfaces);
    } catch (const std::exception& e) {
      std::filesystem::remove_all(SavedConfigDir());
      throw FaultError(a_.node + ": " + e.what() + "; nothing was changed");
    }
    const std::vector<std::string> commands = ConfigCommands(a_.config_lines);
    std::vector<VtyReply> replies;
    try {
      replies = VtyCommands(paths_.NodeDir(a_.node) + "/" + VtyDaemonName() + ".vty", commands, true);
    } catch (const VtyError& e) {
      // Which lines were entered before the connection failed is unknown: restore.
      throw FaultError(a_.node + ": cannot configure " + daemon + ": " + e.what() + UndoPartialConfig());
    }
    if (replies.size() == commands.size() && replies.back().status == 0) return;
    const size_t failed = replies.size() - 1;
    const std::string refused = failed < 2 ? "'" + commands[failed] + "'"
                                           : "config_lines[" + std::to_string(failed - 2) + "] '" +
                                                 a_.config_lines[failed - 2] + "'";
    std::string undo = "; nothing was changed";
    if (failed > 2) {
      undo = UndoPartialConfig();
    } else {
      std::filesystem::remove_all(SavedConfigDir());
    }
    throw FaultError(a_.node + ": " + daemon + " refused " + refused + ": " + Trim(replies.back().output) + undo,
                     failed < 2 ? ErrorKind::kOperation : ErrorKind::kInput);
  }

  // After part of the lines were entered (or an unknown part): the saved configuration back.
  std::string UndoPartialConfig() {
    try {
      RestoreConfig();
      return "; the lines entered before it were undone (the configuration saved before them is back)";
    } catch (const Interrupted&) {
      undone_ = false;  // the restore stopped part-way: the fault stays active for a revert
      throw;
    } catch (const std::exception& e) {
      undone_ = false;
      return std::string("; restoring the configuration failed too (") + e.what() +
             "); it stays active: mrclab fault revert " + lab_.name + " " + std::to_string(id_);
    }
  }

  // Enters the revert lines if any (their result does not matter: the reload that follows puts
  // back whatever they missed).
  void EnterRevertLines() {
    if (a_.revert_lines.empty()) return;
    try {
      VtyCommands(paths_.NodeDir(a_.node) + "/" + VtyDaemonName() + ".vty", ConfigCommands(a_.revert_lines),
                  true);
    } catch (const VtyError&) {
    }
  }

  // Puts back the configuration saved at apply with frr-reload.py, then checks that nothing
  // differs from it, that the switch's links are administratively up (those no other fault
  // holds down) and that its BGP sessions are Established again.
  void RestoreConfig() {
    const std::string daemon = ConfigDaemonName();
    const std::string dir = SavedConfigDir();
    const ResolvedNode& sw = Switch();
    // The configuration is saved before any line is entered: without it none was. A daemon that
    // another fault keeps stopped starts again from its deployed file when that fault ends.
    const std::string saved = SavedDaemonName();
    if (!HasSavedConfig(saved, dir) || holds_.Stopped(sw.name, daemon)) {
      std::filesystem::remove_all(dir);
      return;
    }
    const auto deadline = Clock::now() + kRecoveryTimeout;
    // A daemon that a line made exit starts again from its deployed file first.
    const std::vector<std::string> started = StartMissingDaemons(lab_, paths_, sw, Unheld(DaemonsOf(lab_, paths_, sw)), deadline);
    EnterRevertLines();
    const std::string node_dir = paths_.NodeDir(sw.name);
    const FrrTools tools = ToolsOf(lab_.name, sw);
    ReloadConfig(tools, node_dir, saved, dir);
    const std::vector<std::string> delta = ConfigDelta(tools, node_dir, saved, dir);
    if (!delta.empty()) {
      std::string lines;
      for (const std::string& l : delta) lines += (lines.empty() ? "" : "; ") + l;
      throw FaultError(sw.name + ": " + daemon + " still differs from the configuration saved at apply (" + dir +
                       "/" + (saved.empty() ? "frr" : saved) + ".conf); still needed: " + lines);
    }
    WaitForLinksUp(sw, deadline);
    if (lab_.routing == Routing::kBgp && !holds_.Stopped(sw.name, "bgpd"))
      WaitForSwitchBgp(paths_, sw, SessionsToWaitFor(sw), started, deadline);
    std::filesystem::remove_all(dir);
  }

  // Polls until the switch's interfaces are administratively up, except those whose link
  // another fault holds down; skipped while another config_change on the switch is active.
  void WaitForLinksUp(const ResolvedNode& sw, Clock::time_point deadline) {
    if (holds_.reconfigured.count(sw.name)) return;
    std::set<std::string> wanted;
    for (const ResolvedInterface& itf : sw.interfaces)
      if (!holds_.down_links.count(itf.link)) wanted.insert(itf.name);
    std::set<std::string> down;
    WaitUntil(deadline, [&] {
      down = AdminDownInterfaces(sw.netns, wanted);
      return down.empty();
    }, [&] {
      std::string names;
      for (const std::string& d : down) names += (names.empty() ? "" : ", ") + d;
      return sw.name + ": interface(s) " + names + " still administratively down after restoring the configuration";
    });
  }

  const ResolvedLab& lab_;
  LabPaths paths_;
  int id_;
  const FaultAction& a_;
  Holds holds_;
  bool undone_ = true;
};

std::vector<FaultRecord> OthersActive(const std::vector<FaultRecord>& records, int id) {
  std::vector<FaultRecord> out;
  for (const FaultRecord& r : records)
    if (!r.reverted && r.id != id) out.push_back(r);
  return out;
}

}  // namespace

FaultInjector::FaultInjector(const ResolvedLab& lab) : lab_(lab) {
  const LabPaths paths(lab.name);
  if (!std::filesystem::is_directory(paths.root))
    throw FaultError("lab '" + lab.name + "' is not deployed (no " + paths.root + ")", ErrorKind::kInput);
}

int FaultInjector::Apply(const FaultAction& action) {
  ValidateFault(lab_, action);
  FaultJournal journal(lab_.name);
  const std::vector<FaultRecord> records = FaultJournal::Read(lab_.name);
  const int id = journal.RecordApply(action, UnixNow());
  FaultMeans means(lab_, id, action, OthersActive(records, id));
  try {
    means.Apply();
  } catch (const std::exception& e) {
    // Apply undid what it made: the fault is not active. If it could not, the fault stays
    // active in the journal so that a revert (or destroy) cleans up.
    if (means.undone()) journal.RecordRevert(id, UnixNow());
    if (dynamic_cast<const FaultError*>(&e)) throw;
    throw FaultError(action.Describe(lab_) + ": " + e.what());
  }
  applied_.push_back(id);
  return id;
}

void FaultInjector::Revert(int id) {
  FaultJournal journal(lab_.name);
  const std::vector<FaultRecord> records = FaultJournal::Read(lab_.name);
  auto it = std::find_if(records.begin(), records.end(), [&](const FaultRecord& r) { return r.id == id; });
  if (it == records.end())
    throw FaultError("fault " + std::to_string(id) + " is not in the journal of lab '" + lab_.name +
                         "' (see: mrclab fault list " + lab_.name + ")",
                     ErrorKind::kInput);
  applied_.erase(std::remove(applied_.begin(), applied_.end(), id), applied_.end());
  if (it->reverted) return;
  try {
    ValidateFault(lab_, it->action);
    FaultMeans(lab_, id, it->action, OthersActive(records, id)).Revert();
  } catch (const Interrupted&) {
    applied_.push_back(id);
    throw;  // Ctrl-C: the fault stays active; reverting it again finishes the job
  } catch (const std::exception& e) {
    applied_.push_back(id);  // still active: a later RevertAll tries it again
    throw FaultError("reverting fault " + std::to_string(id) + " (" + it->action.Describe(lab_) +
                     "): " + e.what() + "; it stays active");
  }
  journal.RecordRevert(id, UnixNow());
}

void FaultInjector::RevertAll() {
  std::vector<int> ids = applied_;
  std::sort(ids.rbegin(), ids.rend());  // newest first
  std::string problems;
  int failed = 0;
  for (int id : ids) {
    try {
      Revert(id);
    } catch (const Interrupted&) {
      throw;
    } catch (const std::exception& e) {
      ++failed;
      problems += std::string("\n  ") + e.what();
    }
  }
  if (failed) throw FaultError(std::to_string(failed) + " fault(s) could not be reverted:" + problems);
}

std::vector<ActiveFault> FaultInjector::Active() const {
  std::vector<ActiveFault> active;
  for (const FaultRecord& r : FaultJournal::Read(lab_.name))
    if (!r.reverted) active.push_back({r.id, r.action, r.applied_at});
  return active;
}

int RevertLeftoverFaults(const ResolvedLab& lab) {
  FaultInjector injector(lab);
  std::vector<ActiveFault> active = injector.Active();
  std::string problems;
  int reverted = 0, failed = 0;
  for (auto it = active.rbegin(); it != active.rend(); ++it) {
    try {
      injector.Revert(it->id);
      ++reverted;
    } catch (const Interrupted&) {
      throw;
    } catch (const std::exception& e) {
      ++failed;
      problems += std::string("\n  ") + e.what();
    }
  }
  if (failed)
    throw FaultError(std::to_string(failed) + " of " + std::to_string(active.size()) +
                     " fault(s) could not be reverted:" + problems);
  return reverted;
}

}  // namespace mrclab::emulator::netns
