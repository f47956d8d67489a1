// What a training job will hold before it runs: QP pairs, udp source ports, sockets and buffer
// memory, computed from its JobConfig alone (no lab, no sockets). `mrclab drill --check` and
// the drill's start compare it with the machine's limits, so a job that cannot get what it
// needs is refused before any transport runs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "harness/job/job_types.h"

namespace mrclab::harness {

struct JobFootprint {
  int ranks = 0;
  size_t qp_pairs = 0;
  size_t source_ports = 0;  // udp EVs: the source ports the job spans (source_ports.h)
  uint32_t source_port_width = 0;  // udp EVs: source ports per QP pair (its EVs; RC: 1)
  size_t sockets = 0;       // real-time driver: one per host port, plus one per udp EV route
  uint64_t buffer_bytes = 0;  // collective inputs, outputs and landing slots of every rank
  uint64_t qp_state_bytes = 0;  // the transport state of both ends of every QP pair (estimated)
};

// What one QP's state takes, EV table, queues, receive window and its driver's and workload's
// share included, as measured (bytes per QP on a 1,024-host all-to-all, mrc/core/qp.h): about
// 9 KiB, plus 160 bytes per EV.
uint64_t QpStateBytes(int evs_per_qp);

// The job's QP pairs, counted without listing them (a list of an all-to-all's would not fit in
// memory at 100,000 ranks): an all-to-all pairs every two ranks, the ring collectives each rank
// with its neighbour; qps_per_peer pairs each.
size_t CountQpPairs(const JobConfig& config);

// `ports_per_host`: how many planes a host is attached to (one receive socket each).
JobFootprint EstimateFootprint(const JobConfig& config, int ports_per_host);

}  // namespace mrclab::harness
