// Emulation fidelity: was the machine itself the bottleneck while a drill measured the fabric?
// (After Mininet-HiFi, CoNEXT 2012: watch the emulator's own invariants and say when a result
// cannot be trusted.) Pure: the samples come from FidelityMonitor (fidelity_monitor.h) in a
// real-time lab; the rules are unit-tested without one.
//
// A second is saturated when this machine could not run the lab as fast as it asked to:
//   busy    the CPUs were busy AND the drill's own threads felt it (they waited on a run queue
//           for a large share of the time they wanted a CPU, or a timer woke up late); busy
//           CPUs alone are fine (forwarding is CPU work), a late timer alone may be one
//           preemption;
//   steal   the hypervisor took a large share of the CPUs (a VM on a busy host);
//   late    timers woke up so late that the transport's own timers (ms) cannot work.
//
// A fault window (applied .. reverted + kSettleSeconds), a transport's baseline, or the whole
// job of a transport that was interrupted is emulator-bound when at least min_saturated_seconds
// of it, and at least min_saturated_share of its seconds, were saturated. Then the drill's
// verdict is `inconclusive`: its step times measured the machine, not the fabric. Routing
// sessions that went down with no fault to explain it (none applied, none reverted in the last
// kRoutingSettleSeconds) are counted and reported; they do not change the verdict.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace mrclab::harness {

struct FidelitySample {
  double t = 0;             // end of the one-second interval (the drill's clock)
  double cpu_busy = 0;      // share of all CPUs not idle (steal counts as busy)
  double steal = 0;         // share taken by the hypervisor
  double run_wait = 0;      // the drill's threads: run-queue wait / (wait + run)
  double late_p99_ms = 0;   // a periodic timer's wake-up delay, p99 and max in the interval
  double late_max_ms = 0;
};

struct FidelityThresholds {
  double cpu_busy = 0.90;       // busy: CPUs at least this busy, and
  double run_wait = 0.40;       //   the threads waited at least this share, or
  double late_p99_ms = 5;       //   the timer's p99 lateness reached this
  double steal = 0.25;          // steal: the hypervisor took at least this share
  double very_late_p99_ms = 20; // late: the timer's p99 lateness reached this, however idle
  int min_saturated_seconds = 2;
  double min_saturated_share = 0.25;
};
inline constexpr double kSettleSeconds = 2;
inline constexpr double kRoutingSettleSeconds = 15;  // BGP's connect-retry and BFD's slow start

enum class Saturation { kNone, kBusy, kSteal, kLate };
Saturation Classify(const FidelitySample& s, const FidelityThresholds& th = {});
inline bool Saturated(const FidelitySample& s, const FidelityThresholds& th = {}) {
  return Classify(s, th) != Saturation::kNone;
}
std::string_view Describe(Saturation s);  // "CPUs busy and the drill's threads waiting for them", ...

struct Interval {
  std::string what;  // "baseline", "fault 2 link_flap (window 1)"
  double from = 0, to = 0;
};

struct IntervalFidelity {
  Interval interval;
  int seconds = 0, saturated = 0;  // samples inside it, and how many were saturated
  bool emulator_bound = false;
};

struct FidelityReport {
  bool measured = false;  // false: simulated time (the emulator cannot be the bottleneck)
  FidelityThresholds thresholds;
  std::vector<IntervalFidelity> intervals;
  int samples = 0, saturated = 0;
  double cpu_busy_max = 0, steal_max = 0, run_wait_max = 0, late_p99_ms_max = 0, late_max_ms = 0;
  int unexplained_routing_downs = 0;
  std::vector<std::string> reasons;  // why the verdict is inconclusive; empty: fidelity ok
  bool ok() const { return reasons.empty(); }
};

// `routing_downs`: times a BGP or BFD session left Established / up; `faults`: every fault window (applied,
// reverted; reverted 0 = until the end) on the same clock.
FidelityReport EvaluateFidelity(const std::vector<FidelitySample>& samples, const std::vector<Interval>& intervals,
                                const std::vector<std::pair<double, double>>& faults,
                                const std::vector<double>& routing_downs, const FidelityThresholds& th = {});

nlohmann::json ToJson(const FidelityReport& r);

}  // namespace mrclab::harness
