// QP configurations for the time scale a driver runs at. QpConfig's own defaults suit a
// fabric in virtual time (µs timers: the loop driver, ns-3 at 100G); a driver in real time on
// shared CPUs needs ms-scale timers, because the OS deschedules its threads for milliseconds.
#pragma once

#include <cstdint>
#include <vector>

#include "mrc/core/qp.h"

namespace mrclab::mrc {

// Real-time timers (see mrc/README.md "Behaviour and knobs"): RTO 4-200 ms, reorder window at
// least 2 ms, 3 losses to ASSUMED_BAD, probes every 5 ms, max_retransmissions at least the
// number of EVs. ev_planes[i] is the plane of EV i.
QpConfig RealtimeQpConfig(TransportMode transport, const std::vector<int>& ev_planes, uint32_t mtu);

// Fabric timers (QpConfig's defaults: µs-scale RTO, reorder window and RC ACK timeout) for
// virtual time at data-centre RTTs, with max_retransmissions at least the number of EVs.
QpConfig FabricQpConfig(TransportMode transport, const std::vector<int>& ev_planes, uint32_t mtu);

}  // namespace mrclab::mrc
