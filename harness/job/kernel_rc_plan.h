// The kernel's RC job as each VM host runs it: the "open" request of mrclab-rc-ranks
// (emulator/netns/guest/mrclab_rc_ranks.cc) for every host of the job, from the same collective
// plan as the Workload's (collective_plan.h), so the kernel's RC carries the same messages
// between the same ranks as our RC model does. Pure: unit-tested without VMs.
//
//   ranks        host-major (ranks_per_host each), as in the Workload
//   QPs          one RC connection per pair of ranks that talk, per lane (qps_per_peer); lane l
//                on the l-th plane (mod how many) both hosts attach to, as the model's EV l;
//                the lower rank connects, the other accepts
//   pieces       a chunk split over the lanes as the Workload splits it (PieceOf)
//   timers       the ACK timeout as the verbs exponent (4.096 us * 2^e, the first e that covers
//                it) and the retry count, both as the model's RC (its defaults: 8 ms, 7)
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/resolved_lab.h"
#include "harness/job/job_types.h"

namespace mrclab::harness {

inline constexpr int kKernelRcPort = 18600;  // rdma_cm's port for the job's connections

// The verbs ACK timeout exponent e (1..31) of the first 4.096 us * 2^e >= timeout.
int AckTimeoutExponent(mrc::Duration timeout);

// The buffers mrclab-rc-ranks holds on each host, at most: per rank a landing slot per receive
// of a step and a send region per write of a phase (at most one per other rank), each of the
// largest chunk.
uint64_t KernelRcBufferBytesPerHost(const JobConfig& config);

// One "open" request per host of config.hosts (same order). Throws std::invalid_argument for
// a config the kernel's RC cannot run (fewer than 2 ranks, hosts that share no plane).
std::vector<nlohmann::json> PlanKernelRc(const emulator::ResolvedLab& lab, const JobConfig& config);

}  // namespace mrclab::harness
