#include "harness/job/source_ports.h"

#include <algorithm>
#include <bit>

namespace mrclab::harness {

std::vector<std::pair<int, int>> QpPairHosts(const std::set<std::pair<int, int>>& rank_pairs, const JobConfig& c) {
  std::vector<std::pair<int, int>> out;
  out.reserve(rank_pairs.size() * static_cast<size_t>(c.qps_per_peer));
  for (auto [a, b] : rank_pairs)
    for (int lane = 0; lane < c.qps_per_peer; ++lane) out.emplace_back(a / c.ranks_per_host, b / c.ranks_per_host);
  return out;
}

SourcePortPlan PlanSourcePorts(const JobConfig& c, const std::vector<std::pair<int, int>>& host_pairs,
                               size_t hosts) {
  SourcePortPlan plan;
  if (c.ev_mode != mrc::EvMode::kUdp) return plan;
  plan.width = c.transport == mrc::TransportMode::kRc ? 1 : static_cast<uint32_t>(c.evs_per_qp);
  // Per host, a bitset of the ranges its QP pairs hold.
  std::vector<std::vector<uint64_t>> used(hosts);
  plan.range.reserve(host_pairs.size());
  for (auto [a, b] : host_pairs) {
    std::vector<uint64_t>& ua = used[static_cast<size_t>(a)];
    std::vector<uint64_t>& ub = used[static_cast<size_t>(b)];
    const auto taken_in = [&](size_t w) { return (w < ua.size() ? ua[w] : 0) | (w < ub.size() ? ub[w] : 0); };
    size_t word = 0;
    while (taken_in(word) == ~uint64_t{0}) ++word;
    const uint64_t taken = taken_in(word);
    const size_t r = 64 * word + static_cast<size_t>(std::countr_one(taken));
    for (auto* u : {&ua, &ub}) {
      if (u->size() <= r / 64) u->resize(r / 64 + 1, 0);
      (*u)[r / 64] |= uint64_t{1} << (r % 64);
    }
    plan.range.push_back(static_cast<uint32_t>(r));
    plan.ranges = std::max(plan.ranges, r + 1);
  }
  return plan;
}

}  // namespace mrclab::harness
