#include "harness/drill/fault_plan.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "harness/job/ev_plan.h"

namespace mrclab::harness {
namespace {

using emulator::ResolvedLab;
using emulator::ResolvedNode;
using emulator::FaultAction;
using emulator::FaultKind;

class Planner {
 public:
  // `job_hosts`: the job's hosts, shared by every fault of the plan; computed by the first
  // fault that needs them.
  Planner(const Scenario& s, const ResolvedLab& lab, const FaultSpec& f,
          std::optional<std::vector<std::string>>& job_hosts)
      : s_(s), lab_(lab), f_(f), job_hosts_(job_hosts),
        rng_(s.seed * 1000003 + f.field.size() * 7919 + f.at * 1000) {}

  [[noreturn]] void Fail(const std::string& reason, const std::string& sub = "target") const {
    throw ScenarioError(s_.file, f_.field + "." + sub, reason);
  }

  template <typename T>
  std::vector<T> Pick(std::vector<T> candidates, const std::string& what) {
    const TargetSpec& t = f_.target;
    if (candidates.empty()) Fail("no " + what + " matches the selector in lab '" + lab_.name + "'");
    if (t.count > static_cast<int>(candidates.size()))
      Fail("count " + std::to_string(t.count) + " but only " + std::to_string(candidates.size()) + " " + what +
           "s match");
    std::shuffle(candidates.begin(), candidates.end(), rng_);
    candidates.resize(t.count);
    std::sort(candidates.begin(), candidates.end());
    return candidates;
  }

  // "'spine'", or what to write when the selector map has no select: key.
  static std::string Selected(const TargetSpec& t) {
    return t.select.empty() ? "nothing (the target map has no select: key)" : "'" + t.select + "'";
  }

  std::vector<int> Links() {
    const TargetSpec& t = f_.target;
    if (!t.name.empty()) {
      try {
        return {emulator::ResolveLinkTarget(lab_, t.name)};
      } catch (const std::exception& e) {
        Fail(e.what());
      }
    }
    if (t.select != "leaf_spine_link" && t.select != "host_link")
      Fail("a link fault selects leaf_spine_link or host_link, not " + Selected(t), "target.select");
    std::vector<int> out;
    for (const auto& link : lab_.links)
      if (link.fabric == (t.select == "leaf_spine_link") && (!t.plane || link.plane == *t.plane))
        out.push_back(link.index);
    return Pick(out, "link");
  }

  std::vector<std::string> Switches() {
    const TargetSpec& t = f_.target;
    if (!t.name.empty()) {
      const ResolvedNode* node = lab_.FindNode(t.name);
      if (!node) Fail("unknown node '" + t.name + "' in lab '" + lab_.name + "'");
      if (node->kind != emulator::NodeKind::kSwitch) Fail("'" + t.name + "' is a host; " + std::string(ToString(f_.kind)) + " needs a switch");
      return {t.name};
    }
    if (t.select != "spine" && t.select != "leaf" && t.select != "switch")
      Fail(std::string(ToString(f_.kind)) + " selects spine, leaf or switch, not " + Selected(t), "target.select");
    std::vector<std::string> out;
    for (const ResolvedNode* sw : lab_.Switches()) {
      const bool role_ok = t.select == "switch" || (t.select == "spine") == (sw->role == emulator::SwitchRole::kSpine);
      if (role_ok && (!t.plane || sw->plane == *t.plane)) out.push_back(sw->name);
    }
    return Pick(out, t.select);
  }

  [[noreturn]] void NotAPlane(const std::string& plane, const std::string& sub) const {
    Fail(plane + " is not a plane of lab '" + lab_.name + "' (0.." + std::to_string(lab_.planes - 1) + ")", sub);
  }

  std::vector<int> Planes() {
    const TargetSpec& t = f_.target;
    if (!t.name.empty()) {
      try {
        size_t used = 0;
        const int p = std::stoi(t.name, &used);
        if (used != t.name.size() || p < 0 || p >= lab_.planes) throw std::out_of_range("");
        return {p};
      } catch (const std::exception&) {
        NotAPlane("'" + t.name + "'", "target");
      }
    }
    // {select: plane, count: K}: K planes drawn with the seed; {plane: N} (select: plane optional): plane N.
    if (t.select != "plane" && !(t.select.empty() && t.plane))
      Fail("plane_down selects plane, not " + Selected(t) + " (or name one: target: \"N\" or {plane: N})",
           "target.select");
    if (t.plane && *t.plane >= lab_.planes) NotAPlane("plane " + std::to_string(*t.plane), "target.plane");
    std::vector<int> out;
    for (int p = 0; p < lab_.planes; ++p)
      if (!t.plane || p == *t.plane) out.push_back(p);
    return Pick(out, "plane");
  }

  // A host of the lab that the job runs on: ev_deny and port_disable act on the job's QPs
  // there, and on any other host would touch nothing.
  void JobHost(const std::string& name, const std::string& sub) {
    try {
      LabHost(lab_, name);
    } catch (const std::exception& e) {
      Fail(e.what(), sub);
    }
    if (!job_hosts_) job_hosts_ = JobHosts(s_, lab_);
    const std::vector<std::string>& job = *job_hosts_;
    if (std::find(job.begin(), job.end(), name) != job.end()) return;
    std::string listed;  // the job's hosts, when they are few enough to read
    for (const std::string& h : job) listed += ", " + h;
    Fail(name + " is not one of the job's " + std::to_string(job.size()) + " hosts (job.hosts" +
             (job.size() <= 8 ? ": " + listed.substr(2) : std::string()) + "): the fault would touch no queue pair",
         sub);
  }

  // ev_deny's EVs must be ones a transport of the job sprays over (EVs 0 .. evs-1), and its two
  // hosts must have a queue pair between them.
  void CheckEvDeny(const PlannedFault::EvDeny& d) {
    if (d.evs.empty()) Fail("ev_deny needs evs: [..]", "target.evs");
    int most = 0;
    for (const TransportSpec& t : s_.transports)
      if (t.stack == TransportStack::kModel) most = std::max(most, t.evs);
    for (int e : d.evs)
      if (e >= most)
        Fail("EV " + std::to_string(e) + " is not one the job uses (its transports spray over EVs 0-" +
                 std::to_string(most - 1) + ": transports[].evs)",
             "target.evs");
    if (d.from == d.to && s_.job.ranks_per_host == 1)
      Fail("the same host as from, where one rank runs (job.ranks_per_host: 1): no queue pair joins them",
           "target.to");
  }

  PlannedFault Plan(int index) {
    PlannedFault p;
    p.index = index;
    p.field = f_.field;
    p.kind = f_.kind;
    if (!emulator::Info(f_.kind).controller) {
      FaultAction base;
      base.kind = f_.kind == FaultKind::kFlap ? FaultKind::kLinkDown : f_.kind;
      base.direction = f_.direction;
      base.loss_rate = f_.loss_rate;
      base.rate_bps = f_.rate_bps;
      if (f_.kind == FaultKind::kRate)
        if (const std::string problem = emulator::RateFaultProblem(lab_, f_.rate_bps); !problem.empty())
          Fail(problem, "rate");
      base.bgp_mode = f_.bgp_mode;
      base.config_lines = f_.config;
      base.revert_lines = f_.revert_config;
      switch (base.kind) {
        case FaultKind::kLinkDown: case FaultKind::kBlackhole: case FaultKind::kLoss: case FaultKind::kRate:
          for (int link : Links()) p.actions.push_back(base), p.actions.back().link = link;
          break;
        case FaultKind::kSwitchDown: case FaultKind::kBgpReset: case FaultKind::kConfigChange:
          for (const auto& node : Switches()) p.actions.push_back(base), p.actions.back().node = node;
          break;
        case FaultKind::kPlaneDown:
          for (int plane : Planes()) p.actions.push_back(base), p.actions.back().plane = plane;
          break;
        default:  // flap is planned as link_down; controller kinds are not fabric actions
          break;
      }
      for (const FaultAction& a : p.actions) {
        try {
          emulator::ValidateFault(lab_, a);
        } catch (const std::exception& e) {
          Fail(e.what(), "kind");
        }
        p.description += (p.description.empty() ? "" : "; ") + a.Describe(lab_);
      }
      if (f_.kind == FaultKind::kFlap) p.description = "flap x" + std::to_string(f_.count) + ": " + p.description;
    } else if (f_.kind == FaultKind::kEvDeny) {
      JobHost(f_.target.from, "target.from");
      JobHost(f_.target.to, "target.to");
      p.ev_deny = PlannedFault::EvDeny{f_.target.from, f_.target.to, f_.target.evs};
      CheckEvDeny(*p.ev_deny);
      std::string evs;
      for (int e : p.ev_deny->evs) evs += (evs.empty() ? "" : ",") + std::to_string(e);
      p.description = "ev_deny " + f_.target.from + "->" + f_.target.to + " EVs " + evs;
    } else {  // port_disable
      JobHost(f_.target.host, "target.host");
      if (*f_.target.plane >= lab_.planes) Fail("plane " + std::to_string(*f_.target.plane) + " is not in the lab", "target.plane");
      p.port_disable = PlannedFault::PortDisable{f_.target.host, *f_.target.plane};
      p.description = "port_disable " + f_.target.host + " plane " + std::to_string(*f_.target.plane);
    }
    Windows(p);
    return p;
  }

  void Windows(PlannedFault& p) {
    if (f_.kind != FaultKind::kFlap) {
      p.windows.push_back({f_.at, f_.duration ? f_.at + *f_.duration : kUntilEnd});
      return;
    }
    std::uniform_real_distribution<double> jitter(0.5, 1.5);
    double t = f_.at;
    for (int i = 0; i < f_.count; ++i) {
      const double down = f_.down_seconds * (f_.random ? jitter(rng_) : 1);
      const double up = f_.up_seconds * (f_.random ? jitter(rng_) : 1);
      p.windows.push_back({t, t + down});
      t += down + up;
    }
  }

 private:
  const Scenario& s_;
  const ResolvedLab& lab_;
  const FaultSpec& f_;
  std::optional<std::vector<std::string>>& job_hosts_;
  std::mt19937_64 rng_;
};

}  // namespace

FaultPlan PlanFaults(const Scenario& scenario, const ResolvedLab& lab) {
  FaultPlan plan;
  std::optional<std::vector<std::string>> job_hosts;
  for (size_t i = 0; i < scenario.faults.size(); ++i) {
    plan.faults.push_back(Planner(scenario, lab, scenario.faults[i], job_hosts).Plan(static_cast<int>(i)));
    for (const Window& w : plan.faults.back().windows)
      plan.end_seconds = std::max(plan.end_seconds, w.revert == kUntilEnd ? w.apply : w.revert);
  }
  return plan;
}

nlohmann::json FaultPlan::ToJson() const {
  // Whole nanoseconds: a window's end is its start plus a duration, which in binary floating
  // point would print as 0.034999999999999996 s.
  auto seconds = [](double s) { return std::round(s * 1e9) / 1e9; };
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : faults) {
    nlohmann::json windows = nlohmann::json::array();
    for (const auto& w : f.windows)
      windows.push_back({{"apply", seconds(w.apply)},
                         {"revert", w.revert == kUntilEnd ? nlohmann::json(nullptr) : nlohmann::json(seconds(w.revert))}});
    out.push_back({{"index", f.index}, {"kind", ToString(f.kind)}, {"description", f.description}, {"windows", windows}});
  }
  return out;
}

}  // namespace mrclab::harness
