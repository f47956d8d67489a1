// udp EVs: which UDP source ports each QP pair of a job sends on. A QP pair gets a range of
// `width` consecutive ports (its EVs; an RC QP sends on one) from 49152 up, the same range at
// both ends. Ranges are distinct among the QP pairs that share a host, so each QP of a host has
// its own ports and a host never binds one (address, port) twice; pairs on other hosts reuse
// them, as NICs do (the ECMP hash also covers the addresses). A greedy edge colouring of the
// hosts' QP pairs, in order: a ring needs 3 ranges at most, an all-to-all over H hosts about
// H, so the 16,384 ports serve thousands of hosts instead of 16,384 / width QP pairs in all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "harness/job/job_types.h"

namespace mrclab::harness {

inline constexpr uint32_t kFirstSourcePort = 49152;
inline constexpr uint32_t kSourcePortCount = 65536 - kFirstSourcePort;  // 49152-65535

struct SourcePortPlan {
  uint32_t width = 0;           // ports per QP pair: EVs per QP (RC: 1); 0 in srv6 mode
  std::vector<uint32_t> range;  // per QP pair, in the order given: its range index
  size_t ranges = 0;            // ranges used (max index + 1)

  size_t ports() const { return ranges * width; }  // the span above kFirstSourcePort
  uint16_t first_port(size_t pair) const { return static_cast<uint16_t>(kFirstSourcePort + range[pair] * width); }
};

// The hosts (indices into config.hosts) at the ends of each QP pair of a job whose connected
// rank pairs are `rank_pairs`: ranks host-major, config.qps_per_peer lanes per rank pair in turn.
std::vector<std::pair<int, int>> QpPairHosts(const std::set<std::pair<int, int>>& rank_pairs, const JobConfig& config);

// `host_pairs`: the hosts (indices) at the two ends of each QP pair, in the order the job
// connects them (one entry per lane). Plans nothing (width 0) unless the job uses udp EVs.
SourcePortPlan PlanSourcePorts(const JobConfig& config, const std::vector<std::pair<int, int>>& host_pairs,
                               size_t hosts);

}  // namespace mrclab::harness
