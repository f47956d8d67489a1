// EV plan between two hosts of a lab: which NIC ports each side binds and which entropy values
// (EVs) carry its packets. Shared by `mrclab perf` and the training job, so both spray the same
// way.
//
//   ports       one per plane both hosts attach to; bound to the port's uSID address in srv6
//               mode (packets arrive addressed to fcbb:0:<port usid>::) or its link address in
//               udp mode
//   EV i        plane i mod P (planes in order); udp mode: source port first_port + i to the
//               peer's port address (the fabric's ECMP hash picks the path); srv6 mode: the uSID
//               container through the spines of that plane in turn (the sender picks the path),
//               from spine 0 when the EVs per plane reach every spine of it, else from a spine
//               the host pair hashes to (so that many pairs spread over all the spines)
//   reverse     b_to_a[i] is the same path backwards, for acknowledgements
#pragma once

#include <string>
#include <vector>

#include "emulator/resolved_lab.h"
#include "mrc/core/ev_route.h"

namespace mrclab::harness {

struct HostPairPlan {
  std::vector<mrc::EndpointPort> a_ports, b_ports;
  std::vector<mrc::EvRoute> a_to_b, b_to_a;  // index = EV id
};

// The lab host named `name`; throws std::invalid_argument naming it if unknown or a switch.
const emulator::ResolvedNode& LabHost(const emulator::ResolvedLab& lab, const std::string& name);

// Ports of a host as an endpoint binds them in `mode`.
std::vector<mrc::EndpointPort> HostPorts(const emulator::ResolvedNode& host, mrc::EvMode mode);

// Throws std::invalid_argument when the hosts share no plane, a plane has no spine, or evs is
// outside 1..256. a == b is allowed (the path leaves the host and comes back).
HostPairPlan PlanEvs(const emulator::ResolvedLab& lab, const std::string& a, const std::string& b,
                     mrc::EvMode mode, int evs, uint16_t first_port = 49152);

}  // namespace mrclab::harness
