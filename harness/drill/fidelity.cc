#include "harness/drill/fidelity.h"

#include <algorithm>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

namespace mrclab::harness {
namespace {

constexpr double kForever = std::numeric_limits<double>::infinity();

// A sample stamped t covers the second (t - 1, t].
bool Overlaps(const FidelitySample& s, double from, double to) { return s.t > from && s.t - 1 < to; }

}  // namespace

Saturation Classify(const FidelitySample& s, const FidelityThresholds& th) {
  if (s.steal >= th.steal) return Saturation::kSteal;
  if (s.cpu_busy >= th.cpu_busy && (s.run_wait >= th.run_wait || s.late_p99_ms >= th.late_p99_ms))
    return Saturation::kBusy;
  if (s.late_p99_ms >= th.very_late_p99_ms) return Saturation::kLate;
  return Saturation::kNone;
}

std::string_view Describe(Saturation s) {
  switch (s) {
    case Saturation::kBusy: return "CPUs busy and the drill's threads waiting for them";
    case Saturation::kSteal: return "the hypervisor taking the CPUs (steal)";
    case Saturation::kLate: return "timers waking up tens of ms late";
    case Saturation::kNone: break;
  }
  return "not saturated";
}

FidelityReport EvaluateFidelity(const std::vector<FidelitySample>& samples, const std::vector<Interval>& intervals,
                                const std::vector<std::pair<double, double>>& faults,
                                const std::vector<double>& routing_downs, const FidelityThresholds& th) {
  FidelityReport r;
  r.measured = true;
  r.thresholds = th;
  r.samples = static_cast<int>(samples.size());
  for (const FidelitySample& s : samples) {
    r.saturated += Saturated(s, th);
    r.cpu_busy_max = std::max(r.cpu_busy_max, s.cpu_busy);
    r.steal_max = std::max(r.steal_max, s.steal);
    r.run_wait_max = std::max(r.run_wait_max, s.run_wait);
    r.late_p99_ms_max = std::max(r.late_p99_ms_max, s.late_p99_ms);
    r.late_max_ms = std::max(r.late_max_ms, s.late_max_ms);
  }
  for (const Interval& in : intervals) {
    IntervalFidelity f{in};
    std::map<Saturation, int> causes;
    for (const FidelitySample& s : samples)
      if (Overlaps(s, in.from, in.to)) {
        ++f.seconds;
        const Saturation c = Classify(s, th);
        if (c != Saturation::kNone) ++f.saturated, ++causes[c];
      }
    f.emulator_bound = f.saturated >= th.min_saturated_seconds &&
                       f.saturated >= th.min_saturated_share * f.seconds;
    if (f.emulator_bound) {
      std::string why;
      for (const auto& [cause, n] : causes)
        why += (why.empty() ? "" : ", ") + std::string(Describe(cause)) + " " + std::to_string(n) + " s";
      r.reasons.push_back("the machine was saturated during " + in.what + " (" + std::to_string(f.saturated) +
                          " of " + std::to_string(f.seconds) + " s: " + why +
                          "), so its step times measured this machine, not the fabric");
    }
    r.intervals.push_back(f);
  }
  for (double t : routing_downs) {
    bool explained = false;
    for (auto [applied, reverted] : faults)
      explained = explained || (t >= applied && t <= (reverted == 0 ? kForever : reverted + kRoutingSettleSeconds));
    r.unexplained_routing_downs += !explained;
  }
  return r;
}

nlohmann::json ToJson(const FidelityReport& r) {
  using nlohmann::json;
  if (!r.measured)
    return {{"status", "not measured"}, {"why", "simulated time: the machine's speed cannot change the results"}};
  json intervals = json::array();
  for (const auto& f : r.intervals)
    intervals.push_back({{"what", f.interval.what}, {"from", f.interval.from}, {"to", f.interval.to},
                         {"seconds", f.seconds}, {"saturated_seconds", f.saturated},
                         {"emulator_bound", f.emulator_bound}});
  return {{"status", r.ok() ? "ok" : "inconclusive"},
          {"reasons", r.reasons},
          {"samples", r.samples},
          {"saturated_seconds", r.saturated},
          {"cpu_busy_max", r.cpu_busy_max},
          {"steal_max", r.steal_max},
          {"run_wait_max", r.run_wait_max},
          {"timer_late_p99_ms_max", r.late_p99_ms_max},
          {"timer_late_max_ms", r.late_max_ms},
          {"unexplained_routing_downs", r.unexplained_routing_downs},
          {"thresholds", {{"cpu_busy", r.thresholds.cpu_busy}, {"run_wait", r.thresholds.run_wait},
                          {"timer_late_p99_ms", r.thresholds.late_p99_ms}, {"steal", r.thresholds.steal},
                          {"very_late_p99_ms", r.thresholds.very_late_p99_ms},
                          {"min_saturated_seconds", r.thresholds.min_saturated_seconds},
                          {"min_saturated_share", r.thresholds.min_saturated_share}}},
          {"intervals", intervals}};
}

}  // namespace mrclab::harness
