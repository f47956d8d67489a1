// ECMP hashing of a switch: which member of an ECMP group a flow takes.
//
// Contract: FlowHash is a pure function of the flow's 5-tuple (source and destination address,
// UDP source and destination port, next header 17) and the switch's seed, so one flow always
// takes the same member on one switch while the group's live members stay the same, and
// switches with different seeds hash independently (no polarisation across tiers). The
// destination hashed is the one the switch forwards on (after any uSID shift). EcmpPick maps
// the hash onto n members like the kernel's hash-threshold selection (RFC 2992): equal shares;
// when a member goes away, its flows move and so do some flows of the members next to it.
#pragma once

#include <cstdint>
#include <string_view>

#include "emulator/ns3/model/sim_packet.h"

namespace mrclab::emulator::sim {

// The seed of one switch, from its name and the fabric's seed.
uint64_t SwitchHashSeed(std::string_view switch_name, uint64_t fabric_seed);

// 32-bit hash of the packet's flow under `seed`.
uint32_t FlowHash(const SimPacket& packet, uint64_t seed);

// The member (0..members-1) that hash `hash` takes among `members` > 0.
inline uint32_t EcmpPick(uint32_t hash, uint32_t members) {
  return static_cast<uint32_t>((static_cast<uint64_t>(hash) * members) >> 32);
}

}  // namespace mrclab::emulator::sim
