// Fib: the forwarding table of one UsidSwitch, as data. The route computation (fabric_routes.h)
// produces it; the switch looks destinations up in it (usid_switch.h).
//
// Keys, following the addressing plan of labs/README.md:
//   by_usid          an address in the uSID block fcbb:0::/32 is looked up by its active uSID
//                    (bits 32..47). The switch's own uSID maps to Behaviour::kUn.
//   by_link_address  an address fd00:<P>:<L>::<H>, H = 1 (endpoint a) or 2 (endpoint b), is
//                    looked up by LinkAddressKey(P, L, H); the switch's own addresses map to
//                    Behaviour::kLocal.
// An address without an entry has no route. Entries with Behaviour::kForward name an ECMP group:
// indices into the switch's egress ports (the order the switch was built with).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace mrclab::emulator::sim {

// What a switch does with a packet whose destination matched an entry. Named as Linux
// seg6_local and the RFCs name them; UsidSwitch runs them from a table indexed by this value.
enum class Behaviour : uint8_t {
  kNoRoute = 0,  // drop (no route, or no live port in the ECMP group)
  kUn = 1,       // SRv6 End with NEXT-CSID flavor (uN): shift the container, then look up again
  kForward = 2,  // plain IPv6 forwarding over an ECMP group
  kLocal = 3,    // addressed to the switch itself: nothing listens, drop
};
inline constexpr int kBehaviourCount = 4;

struct FibEntry {
  Behaviour behaviour = Behaviour::kNoRoute;
  uint32_t group = 0;  // kForward only: index into Fib::groups
};

struct Fib {
  std::vector<std::vector<uint16_t>> groups;  // ECMP sets of egress-port indices, sorted
  std::unordered_map<uint16_t, FibEntry> by_usid;
  std::unordered_map<uint64_t, FibEntry> by_link_address;
};

// Key of address fd00:<plane>:<link>::<host_id> in Fib::by_link_address.
inline constexpr uint64_t LinkAddressKey(uint16_t plane, uint16_t link, uint16_t host_id) {
  return static_cast<uint64_t>(plane) << 32 | static_cast<uint64_t>(link) << 16 | host_id;
}

}  // namespace mrclab::emulator::sim
