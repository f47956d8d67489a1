#include "harness/job/job_footprint.h"

#include <algorithm>

#include "harness/job/collective_plan.h"
#include "harness/job/source_ports.h"
#include "harness/job/workload.h"

namespace mrclab::harness {

uint64_t QpStateBytes(int evs_per_qp) { return 6144 + 180 * static_cast<uint64_t>(std::max(evs_per_qp, 1)); }

size_t CountQpPairs(const JobConfig& c) {
  const size_t n = c.hosts.size() * static_cast<size_t>(c.ranks_per_host);
  const bool all_to_all = std::any_of(c.collectives.begin(), c.collectives.end(),
                                      [](const CollectiveSpec& spec) { return spec.kind == CollectiveKind::kAllToAll; });
  const size_t pairs = all_to_all ? n * (n - 1) / 2 : (n == 2 ? 1 : n);
  return pairs * static_cast<size_t>(c.qps_per_peer);
}

JobFootprint EstimateFootprint(const JobConfig& c, int ports_per_host) {
  JobFootprint f;
  f.ranks = static_cast<int>(c.hosts.size()) * c.ranks_per_host;
  std::vector<CollectiveKind> kinds;
  for (const auto& spec : c.collectives) kinds.push_back(spec.kind);
  const StepPlan plan(kinds, f.ranks);
  f.qp_pairs = CountQpPairs(c);
  const SourcePortPlan ports = PlanSourcePorts(c, QpPairHosts(plan.RankPairs(), c), c.hosts.size());
  f.source_ports = ports.ports();
  f.source_port_width = ports.width;
  // Each QP pair's two ends open one socket per source port they use.
  f.sockets = c.hosts.size() * static_cast<size_t>(ports_per_host) + 2 * f.qp_pairs * ports.width;

  // As Workload allocates them: per collective N chunks of the rounded-up chunk size (virtual
  // payload: one chunk, shared by every rank).
  const uint64_t n = static_cast<uint64_t>(f.ranks);
  uint64_t slot_bytes = 0, per_rank = 0, shared = 0;
  for (const auto& spec : c.collectives) {
    const uint64_t chunk = ChunkBytes(spec.bytes, n);
    slot_bytes = std::max(slot_bytes, chunk);
    if (c.payload == PayloadMode::kVirtual)
      shared += chunk;
    else
      per_rank += chunk * n * (spec.kind == CollectiveKind::kAllToAll ? 2 : 1);
  }
  const uint64_t slots = c.payload == PayloadMode::kVirtual ? 1 : static_cast<uint64_t>(plan.slots());
  f.buffer_bytes = shared + n * (per_rank + slots * slot_bytes);
  f.qp_state_bytes = 2 * f.qp_pairs * QpStateBytes(c.evs_per_qp);
  return f;
}

}  // namespace mrclab::harness
