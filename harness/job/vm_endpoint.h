// A VM host's MRC endpoint for the real-time training job: the core runs here, as for a
// namespace host, and its datagrams enter and leave the fabric through the guest's kernel:
// /opt/mrclab-udp-relay (emulator/netns/guest/mrclab_udp_relay.cc) attached through the guest
// agent holds the UDP sockets, bound to the same addresses a namespace host's endpoint binds,
// and mrc::RelayEndpoint streams the datagrams to and from it.
//
//   Context ─► RelayEndpoint ═ agent port (virtio-serial) ═► mrclab-udp-relay ─► guest UDP ─► NIC ─► leaf
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "emulator/netns/vm_guest_agent.h"
#include "emulator/resolved_lab.h"
#include "mrc/asio/endpoint.h"

namespace mrclab::harness {

// A guest's rdma_rxe holds UDP port 4791 (RoCEv2's), so a job with a VM host runs our MRC on
// this port instead, on every host of the job (a namespace host's endpoint too).
inline constexpr uint16_t kMrcPortBesideRxe = 4792;

struct VmEndpoint {
  emulator::netns::GuestSession session;  // holds the agent port while the endpoint lives
  std::unique_ptr<mrc::Endpoint> endpoint;
};

// Starts the relay in VM host `host` of deployed lab `lab` for `ports` (as HostPorts gives them)
// and connects an endpoint to it. Throws std::runtime_error naming the host when the relay
// cannot start or bind.
VmEndpoint OpenVmEndpoint(const emulator::ResolvedLab& lab, const emulator::ResolvedNode& host,
                          boost::asio::io_context& io, const std::vector<mrc::EndpointPort>& ports,
                          mrc::EvMode ev_mode, uint16_t udp_port, std::optional<uint64_t> key_seed);

}  // namespace mrclab::harness
