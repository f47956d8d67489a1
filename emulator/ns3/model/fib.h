// Fib: the forwarding table of one UsidSwitch, as data. The route computation (fabric_routes.h)
// produces it; the switch looks destinations up in it (usid_switch.h).
//
// Keys, following the addressing plan of labs/README.md:
//   by_usid          an address in the uSID block fcbb:0::/32 is looked up by its active uSID
//                    (bits 32..47). The switch's own uSID maps to Behaviour::kUn. Locator
//                    entries carry the hop count to the switch that owns the uSID.
//   link addresses   fd00:<P>:<L mod 2^16>:<L div 2^16>::<H>, H = 1 (endpoint a) or 2
//                    (endpoint b), by LookupLinkAddress: first by_link_address, keyed by
//                    LinkAddressKey(P, L, H), which holds the switch's own links (its own
//                    addresses map to Behaviour::kLocal) and the rare subnets whose two
//                    announcing ends are equally far (their ECMP union); then, as BGP with
//                    aggregation would, the route to the nearer of the switches that announce
//                    the subnet (`link_owners`, shared by every FIB of one computation), so a
//                    FIB stays O(switches + own links) however many hosts the plane has.
// An address without an entry has no route. Entries with Behaviour::kForward name an ECMP group:
// indices into the switch's egress ports (the order the switch was built with).
#pragma once

#include <cstdint>
#include <memory>
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
  uint8_t hops = 0;    // by_usid locators: hops to the uSID's owner
};

// Per link (by index): its plane and the uSIDs of the switch ends that announce its subnet
// (0: that end is a host, or the link is down and so not announced).
struct LinkOwner {
  uint16_t plane = 0;
  uint16_t usid[2] = {0, 0};
};
using LinkOwners = std::vector<LinkOwner>;

struct Fib {
  std::vector<std::vector<uint16_t>> groups;  // ECMP sets of egress-port indices, sorted
  std::unordered_map<uint16_t, FibEntry> by_usid;
  std::unordered_map<uint64_t, FibEntry> by_link_address;
  std::shared_ptr<const LinkOwners> link_owners;
};

// Key of the address of endpoint host_id (1 or 2) of link `link` in plane `plane` in
// Fib::by_link_address.
inline constexpr uint64_t LinkAddressKey(uint16_t plane, uint32_t link, uint16_t host_id) {
  return static_cast<uint64_t>(plane) << 48 | static_cast<uint64_t>(link) << 16 | host_id;
}

// The entry of `usid` in fib.by_usid, or nullptr.
inline const FibEntry* FindUsid(const Fib& fib, uint16_t usid) {
  auto it = fib.by_usid.find(usid);
  return it == fib.by_usid.end() ? nullptr : &it->second;
}

// The entry for endpoint host_id of link `link` in plane `plane`, or nullptr (no route).
// `find_usid(usid)` returns the FIB's entry for a uSID or nullptr: by_usid, or a switch's own
// faster index of it.
template <typename FindUsid>
const FibEntry* LookupLinkAddress(const Fib& fib, uint16_t plane, uint32_t link, uint16_t host_id,
                                  const FindUsid& find_usid) {
  if (auto it = fib.by_link_address.find(LinkAddressKey(plane, link, host_id)); it != fib.by_link_address.end())
    return &it->second;
  if (!fib.link_owners || link >= fib.link_owners->size()) return nullptr;
  const LinkOwner& owner = (*fib.link_owners)[link];
  if (owner.plane != plane) return nullptr;
  const FibEntry* best = nullptr;
  for (uint16_t usid : owner.usid) {
    if (usid == 0) continue;
    const FibEntry* entry = find_usid(usid);
    if (entry == nullptr || entry->behaviour != Behaviour::kForward) continue;
    if (best == nullptr || entry->hops < best->hops) best = entry;
  }
  return best;
}
inline const FibEntry* LookupLinkAddress(const Fib& fib, uint16_t plane, uint32_t link, uint16_t host_id) {
  return LookupLinkAddress(fib, plane, link, host_id, [&fib](uint16_t usid) { return FindUsid(fib, usid); });
}

}  // namespace mrclab::emulator::sim
