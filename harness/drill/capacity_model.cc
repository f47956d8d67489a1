#include "harness/drill/capacity_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "harness/job/collective_plan.h"

namespace mrclab::harness {
namespace {

// The longest host-to-host path: through a spine when the lab has one.
int PathLinks(const emulator::ResolvedLab& lab) {
  for (const auto* sw : lab.Switches())
    if (sw->role == emulator::SwitchRole::kSpine) return 4;
  return 2;
}

std::string Fixed(double v, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

}  // namespace

nlohmann::json ToJson(const MachineCapacity& c) {
  return {{"mtu", c.mtu}, {"packet_hops_per_second", c.packet_hops_per_second}, {"path_links", c.path_links},
          {"gbps", c.gbps}, {"measured_at", c.measured_at}, {"machine", c.machine}};
}

MachineCapacity CapacityFromJson(const nlohmann::json& j) {
  MachineCapacity c;
  c.mtu = j.at("mtu").get<uint32_t>();
  c.packet_hops_per_second = j.at("packet_hops_per_second").get<double>();
  c.path_links = j.at("path_links").get<int>();
  c.gbps = j.at("gbps").get<double>();
  c.measured_at = j.at("measured_at").get<double>();
  c.machine = j.at("machine").get<std::string>();
  return c;
}

JobDemand EstimateDemand(const JobConfig& job, const emulator::ResolvedLab& lab, const MachineCapacity& capacity) {
  JobDemand d;
  const uint64_t n = job.hosts.size() * static_cast<uint64_t>(job.ranks_per_host);
  const uint64_t mtu = std::max<uint32_t>(job.mtu, 1);
  std::vector<CollectiveKind> kinds;
  for (const auto& c : job.collectives) kinds.push_back(c.kind);
  const StepPlan plan(kinds, static_cast<int>(n));
  uint64_t rank_bytes = 0, rank_packets = 0;
  for (size_t c = 0; c < kinds.size(); ++c) {
    const uint64_t chunk = ChunkBytes(job.collectives[c].bytes, n);
    uint64_t sends = 0;  // every rank sends alike
    for (size_t k = 0; k < plan.phases(c); ++k) sends += plan.At(0, c, k).sends.size();
    rank_bytes += sends * chunk;
    rank_packets += sends * ((chunk + mtu - 1) / mtu);
  }
  d.packets_per_step = n * rank_packets;
  d.path_links = PathLinks(lab);
  if (lab.link_rate_bps && !lab.Hosts().empty()) {
    // A host's ranks share its ports, one per plane.
    const double host_bps = static_cast<double>(*lab.link_rate_bps) * static_cast<double>(lab.Hosts().front()->ports.size());
    d.fabric_seconds = 8.0 * static_cast<double>(rank_bytes * job.ranks_per_host) / host_bps;
  }
  if (capacity.packet_hops_per_second > 0)
    d.machine_seconds = static_cast<double>(d.packets_per_step) * d.path_links / capacity.packet_hops_per_second;
  d.step_seconds = job.compute_seconds + std::max(d.fabric_seconds, d.machine_seconds);
  d.scale_factor = d.fabric_seconds > 0 ? d.machine_seconds / d.fabric_seconds : 0;
  if (d.scale_factor > 1) {
    const double rate = static_cast<double>(*lab.link_rate_bps) / d.scale_factor;
    const double unit = rate >= 1e6 ? 1e6 : 1e3;
    d.faithful_link_rate_bps = static_cast<uint64_t>(std::floor(rate / unit) * unit);
  }
  return d;
}

std::optional<std::string> DoesNotFit(const JobConfig& job, const JobDemand& d, const MachineCapacity& capacity) {
  if (capacity.packet_hops_per_second <= 0) return std::nullopt;
  const double needed = job.compute_seconds + d.machine_seconds;
  if (needed <= job.step_timeout_seconds) return std::nullopt;
  // Transfers scale with the collective sizes; what would leave the step within the timeout.
  const double share = std::max(0.0, (job.step_timeout_seconds - job.compute_seconds) / d.machine_seconds);
  return "a step sends " + std::to_string(d.packets_per_step) + " packets over " + std::to_string(d.path_links) +
         "-link paths: at least " + Fixed(needed, 1) + " s on this machine (it forwards " +
         Fixed(capacity.packet_hops_per_second / 1e6, 2) + "M packet-hops/s at mtu " + std::to_string(capacity.mtu) +
         ", `mrclab capacity`), over job.step_timeout (" + Fixed(job.step_timeout_seconds, 1) +
         " s); collective sizes of at most " + Fixed(100 * share, 1) +
         "% of these would fit, or fewer hosts, or a larger job.mtu";
}

nlohmann::json ToJson(const JobDemand& d) {
  return {{"packets_per_step", d.packets_per_step}, {"path_links", d.path_links},
          {"fabric_seconds", d.fabric_seconds}, {"machine_seconds", d.machine_seconds},
          {"step_seconds", d.step_seconds}, {"scale_factor", d.scale_factor},
          {"faithful_link_rate_bps", d.faithful_link_rate_bps}};
}

}  // namespace mrclab::harness
