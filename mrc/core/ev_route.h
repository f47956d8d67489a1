// How a driver carries an EV: the NIC port (plane) a packet leaves on, the IPv6 destination it
// is addressed to and its UDP source port. Plain data shared by every driver (Asio sockets,
// the ns-3 endpoint) and by the planners that compute routes from a lab (harness/job/ev_plan.h).
//
//   udp mode    destination = the peer's port address; the EV is the UDP source port, and the
//               fabric's ECMP hash picks the path
//   srv6 mode   destination = a uSID container (fcbb:0:<leafA>:<spine>:<leafB>:<port>::): the
//               sender picks the path; the UDP source port is 4791
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mrclab::mrc {

enum class EvMode : uint8_t { kUdp, kSrv6 };
std::string_view ToString(EvMode m);                     // "udp", "srv6"
std::optional<EvMode> ParseEvMode(std::string_view text);  // the same words

// One NIC port of a host endpoint.
struct EndpointPort {
  std::string netns;          // "" = current namespace (real-time driver only)
  std::string local_address;  // IPv6 address of the NIC port
  int plane = 0;
};

// The route of one EV of a QP.
struct EvRoute {
  int plane = 0;
  std::string destination;  // udp: peer port address; srv6: uSID container address
  uint16_t udp_source_port = 0;
};

}  // namespace mrclab::mrc
