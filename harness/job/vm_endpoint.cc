#include "harness/job/vm_endpoint.h"

#include <chrono>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "emulator/netns/lab_state.h"
#include "mrc/asio/relay_endpoint.h"

namespace mrclab::harness {

namespace nx = emulator::netns;
using nlohmann::json;

VmEndpoint OpenVmEndpoint(const emulator::ResolvedLab& lab, const emulator::ResolvedNode& host,
                          boost::asio::io_context& io, const std::vector<mrc::EndpointPort>& ports,
                          mrc::EvMode ev_mode, uint16_t udp_port, std::optional<uint64_t> key_seed) {
  const std::string tool = "/opt/mrclab-udp-relay";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  try {
    // Killed by the agent only if this side vanished without closing (a day is "never").
    auto [session, first] =
        nx::GuestAgent(nx::LabPaths(lab.name).NodeDir(host.name)).Attach({tool}, std::chrono::hours(24), deadline);
    json config = {{"ports", json::array()}, {"udp_port", udp_port}};
    mrc::RelayEndpointConfig rc;
    for (const mrc::EndpointPort& p : ports) {
      config["ports"].push_back({{"plane", p.plane}, {"address", p.local_address}});
      rc.planes.push_back(p.plane);
    }
    session.Send(config);
    for (;;) {
      std::optional<json> line = session.Receive(deadline);
      if (!line) throw std::runtime_error(tool + " did not start relaying before the deadline");
      if (line->value("type", "") == "error") throw std::runtime_error(tool + ": " + line->value("message", ""));
      if (line->value("type", "") == "relaying") break;
    }
    auto [fd, received] = session.TakeStream();
    rc.fd = fd;
    rc.received = std::move(received);
    rc.ev_mode = ev_mode;
    rc.key_seed = key_seed;
    auto endpoint = std::make_unique<mrc::RelayEndpoint>(io, std::move(rc));
    return {std::move(session), std::move(endpoint)};
  } catch (const std::exception& e) {
    throw std::runtime_error("VM host " + host.name + ": " + e.what());
  }
}

}  // namespace mrclab::harness
