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
// share included: 6 KiB plus 180 bytes per EV, a little above what was measured. Measured as
// an all-to-all drill's peak RSS over a ring all-reduce's on the same 256 hosts of clos8-1k,
// per QP of the all-to-all's 65,280: 8.4 KiB with 16 EVs, 16.4 KiB with 64 (2026-11-29, after
// mrc/core/ring_queue.h, the growing receive ring and EV samples taken one at a time; 14.9 KiB
// with 16 EVs before).
uint64_t QpStateBytes(int evs_per_qp);

// The job's QP pairs, counted without listing them (a list of an all-to-all's would not fit in
// memory at 100,000 ranks): an all-to-all pairs every two ranks, the ring collectives each rank
// with its neighbour; qps_per_peer pairs each.
size_t CountQpPairs(const JobConfig& config);

// `ports_per_host`: how many planes a host is attached to (one receive socket each).
JobFootprint EstimateFootprint(const JobConfig& config, int ports_per_host);

}  // namespace mrclab::harness
