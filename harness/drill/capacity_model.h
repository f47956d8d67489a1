// The capacity model: what this machine can forward, against what a drill's job asks of it.
//
// Capacity is measured (capacity_probe.h) as MRC goodput through a lab path of this machine:
// packet-hops per second at a given MTU (packets delivered end to end x the path's links).
// A job's demand per step is pure arithmetic on its JobConfig and the lab:
//   packets      data packets every rank sends in one step (chunks / MTU, all collectives;
//                acknowledgements not counted)
//   fabric time  the step's transfers at the lab's link_rate: a rank's bytes over its host
//                links (every rank sends alike), 0 when the lab does not shape its links
//   machine time packets x path links / measured packet-hops per second
// The larger of the two sets the transfer time. Machine time is a lower bound: it counts the
// packets' forwarding, not what each message, QP and EV costs the endpoints (the clos4
// job: 0.20 s estimated, 1.08 s measured per step; the default drill: 0.10 s, about 0.14 s), so
// a refusal is certain and a pass is not: the fidelity guard watches the run. Machine time over fabric time is the factor by
// which this machine, not link_rate, stretches every step (reported as the scale factor); a
// step whose compute + machine time exceeds the watchdog's step_timeout cannot run at all, and
// the drill is refused with what would fit. Above a scale factor of 1, link_rate / scale factor
// is the link_rate at which the lab's links would set the step time again (faithful_link_rate).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "emulator/resolved_lab.h"
#include "harness/job/job_types.h"

namespace mrclab::harness {

struct MachineCapacity {
  uint32_t mtu = 0;
  double packet_hops_per_second = 0;
  int path_links = 4;    // of the path it was measured on
  double gbps = 0;       // goodput it measured
  double measured_at = 0;  // unix seconds
  std::string machine;   // what the cache is keyed by (kernel, CPU model, CPU count)
};
nlohmann::json ToJson(const MachineCapacity& c);
MachineCapacity CapacityFromJson(const nlohmann::json& j);

struct JobDemand {
  uint64_t packets_per_step = 0;
  int path_links = 0;              // longest host-to-host path of the lab (links)
  double fabric_seconds = 0;       // per step at link_rate; 0: links not shaped
  double machine_seconds = 0;      // per step at the measured capacity
  double step_seconds = 0;         // compute + the larger of the two
  double scale_factor = 0;         // machine / fabric seconds; 0 when the links are not shaped
  // Above a scale factor of 1: the highest link_rate (rounded down to a whole Mbit/s, or kbit/s
  // below 1 Mbit/s) at which the links, not this machine, would set the transfer time; 0 otherwise.
  uint64_t faithful_link_rate_bps = 0;
};

JobDemand EstimateDemand(const JobConfig& job, const emulator::ResolvedLab& lab, const MachineCapacity& capacity);

// Why the job cannot run on this machine (the watchdog would end every step), with what would
// fit; nullopt when it can.
std::optional<std::string> DoesNotFit(const JobConfig& job, const JobDemand& demand, const MachineCapacity& capacity);

nlohmann::json ToJson(const JobDemand& d);

}  // namespace mrclab::harness
