// SimPacket: what moves through the simulated fabric. It carries only what links and switches
// look at (the IPv6 addresses, the UDP ports, ECN bits, sizes); the transport's bytes ride along
// in a shared, immutable payload that every hop moves and never copies.
//
// Contract:
//   - payload_bytes is the UDP payload size that links serialise. When `payload` is set the
//     sender keeps payload_bytes == payload->size() + zero_run_bytes: the bytes are `payload`
//     with zero_run_bytes zero bytes inserted at zero_run_at (mrc::ZeroRun: a Write of a
//     virtual payload travels as its headers and checksum). A null
//     payload is a virtual one (size only), which is how benchmarks and bulk traffic avoid
//     allocating bytes they never read.
//   - WireBytes() is what a port serialises and what buffers account: payload + 40 (IPv6) +
//     8 (UDP) + 18 (Ethernet header and FCS). Preamble and inter-frame gap are not modelled.
//   - Switches rewrite `dst` (uSID shift), `ecn_ce` and `hop_limit`; nothing else changes on
//     the way. The hop limit bounds what a routing loop costs, as in a real fabric.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/ns3/model/payload_pool.h"

namespace mrclab::emulator::sim {

// An IPv6 address in network byte order.
using Ipv6Address = std::array<uint8_t, 16>;

// RoCEv2's UDP destination port.
inline constexpr uint16_t kRoceV2Port = 4791;
// Bytes a frame adds to its UDP payload: IPv6 header 40 + UDP header 8 + Ethernet 14 + FCS 4.
inline constexpr uint32_t kFrameOverheadBytes = 40 + 8 + 18;

struct SimPacket {
  Ipv6Address src{}, dst{};
  uint16_t src_port = 0, dst_port = kRoceV2Port;
  uint32_t payload_bytes = 0;
  bool ecn_capable = true;  // ECT(0) or ECT(1) set by the sender
  bool ecn_ce = false;      // Congestion Experienced, set by a port above its ECN threshold
  uint8_t hop_limit = 64;   // IPv6 Hop Limit: every switch decrements it and drops at 0
  Payload payload;                               // may be null: virtual payload
  uint32_t zero_run_at = 0, zero_run_bytes = 0;  // zero bytes left out of `payload`

  // Bytes on the wire: payload_bytes + kFrameOverheadBytes.
  uint32_t WireBytes() const { return payload_bytes + kFrameOverheadBytes; }
};

// Parses IPv6 text ("fcbb:0:1201::", "fd00:0:12::2"); throws std::invalid_argument naming the
// text when it is not an IPv6 address.
Ipv6Address ParseIpv6Address(std::string_view text);

// RFC 5952 canonical text of an address (the form labs/README.md prints).
std::string FormatIpv6Address(const Ipv6Address& address);

}  // namespace mrclab::emulator::sim
