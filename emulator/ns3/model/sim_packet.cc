#include "emulator/ns3/model/sim_packet.h"

#include <arpa/inet.h>

#include <stdexcept>

#include "emulator/resolved_lab.h"

namespace mrclab::emulator::sim {

Ipv6Address ParseIpv6Address(std::string_view text) {
  // inet_pton needs a terminated string; an address is at most 45 characters.
  const std::string terminated(text);
  Ipv6Address address{};
  if (inet_pton(AF_INET6, terminated.c_str(), address.data()) != 1) {
    throw std::invalid_argument("'" + terminated + "' is not an IPv6 address");
  }
  return address;
}

std::string FormatIpv6Address(const Ipv6Address& address) {
  std::array<uint16_t, 8> groups{};
  for (size_t i = 0; i < groups.size(); ++i) {
    groups[i] = static_cast<uint16_t>(address[2 * i] << 8 | address[2 * i + 1]);
  }
  return emulator::FormatIpv6(groups);
}

}  // namespace mrclab::emulator::sim
