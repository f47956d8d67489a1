// UsidSwitch: the forwarding engine of one switch, as Linux forwards in the netns lab: SRv6
// End with `flavors next-csid lblen 32 nflen 16` (uN) on its own locator, plain IPv6 lookups
// with L4-hash ECMP (fib_multipath_hash_policy=1) for everything else.
//
//   Receive ─► lookup(dst) ─► behaviour table ─┬─ kUn:      shift the container, lookup again
//                                              ├─ kForward: ECMP over the group's up ports
//                                              ├─ kNoRoute: drop
//                                              └─ kLocal:   drop (addressed to the switch)
//
// Contract:
//   - Lookup keys (see fib.h): a destination in fcbb:0::/32 by its active uSID (bytes 4-5); a
//     destination fd00:<P>:<L>::<H> (H = 1 or 2, zero elsewhere) by (P, L, H); anything else
//     has no route. A container whose uSIDs are all consumed has active uSID 0, which no entry
//     has: no route.
//   - uN: bytes 6..15 of the destination move two bytes left and the last two become zero,
//     exactly the kernel's next-csid shift with a 32-bit block and 16-bit uSIDs.
//   - ECMP: among the group's ports that are up right now (a dead next hop is skipped at once,
//     as the kernel does), the one EcmpPick(FlowHash(packet, seed)) selects. A group without
//     an up port is a no-route drop.
//   - Counters: every lookup, and every execution of each behaviour. Each received packet is
//     looked up once plus once per shift, and ends in exactly one of forwarded, no_route_drops
//     or local_drops, so lookups == un_hits + forwarded + no_route_drops + local_drops.
//     Drops at the egress queue are the port's (PortCounters), not the switch's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/ns3/model/fib.h"
#include "emulator/ns3/model/sim_port.h"

namespace mrclab::emulator::sim {

struct SwitchCounters {
  uint64_t lookups = 0;         // FIB lookups: one per received packet plus one per uN shift
  uint64_t un_hits = 0;         // uN (End with NEXT-CSID) executions
  uint64_t forwarded = 0;       // packets handed to an egress port
  uint64_t no_route_drops = 0;  // no entry, or no up port in the ECMP group
  uint64_t local_drops = 0;     // addressed to one of the switch's own link addresses
  uint64_t hop_limit_drops = 0; // arrived with hop limit 1 or 0 (a routing loop, or a long path)
};

class UsidSwitch : public PacketSink {
 public:
  // `hash_seed` seeds the ECMP hash (see SwitchHashSeed). The switch starts with an empty FIB.
  UsidSwitch(std::string name, uint64_t hash_seed);
  UsidSwitch(const UsidSwitch&) = delete;
  UsidSwitch& operator=(const UsidSwitch&) = delete;

  // Appends an egress port (not owned; it must outlive the switch's use of it) and returns its
  // index, the number FIB groups use for it.
  uint16_t AddEgressPort(SimPort* port);
  // Replaces the forwarding table. Throws std::out_of_range if an entry names a group the FIB
  // lacks or a group names a port index that was never added.
  void SetFib(Fib fib);
  // Forwards a packet that arrived on any of the switch's ports.
  void Receive(SimPacket&& packet) override;
  // Stage 0: the home-table slots of the packet's active uSID and of the one after it. Stage 1:
  // the egress port those name (for a group, the one its hash picks if all are up).
  void Prefetch(const SimPacket& packet, int stage) const override;

  // The switch's node name.
  const std::string& Name() const { return name_; }
  // The current forwarding table.
  const Fib& GetFib() const { return fib_; }
  // Counters since construction.
  const SwitchCounters& Counters() const { return counters_; }

 private:
  // A FIB entry with its ECMP group resolved to ports, which is all forwarding reads: the
  // group's first port is inline, so a one-port group (every srv6 hop) costs no further load.
  struct Route {
    Behaviour behaviour = Behaviour::kNoRoute;
    uint32_t size = 0;                 // kForward: ports in the group
    SimPort* first = nullptr;          // kForward: the group's first port
    SimPort* const* ports = nullptr;   // kForward: all of them (in group_ports_)
  };
  using BehaviourFunction = void (UsidSwitch::*)(SimPacket&&, const Route&);
  static const BehaviourFunction kBehaviours[kBehaviourCount];

  void Dispatch(SimPacket&& packet);
  Route Lookup(const Ipv6Address& dst) const;
  Route Resolve(const FibEntry& entry) const;
  // Fills home_table_ from fib_.by_usid.
  void IndexHomeBlock();
  // The FIB's entry for a uSID, or nullptr.
  const FibEntry* FindUsid(uint16_t usid) const;
  void NoRoute(SimPacket&& packet, const Route& route);
  void EndNextCsid(SimPacket&& packet, const Route& route);
  void Forward(SimPacket&& packet, const Route& route);
  void Local(SimPacket&& packet, const Route& route);

  // What every packet reads first: counters, the hash seed and the home block's routes.
  SwitchCounters counters_;
  uint64_t hash_seed_;
  uint16_t home_block_ = 0xffff;
  // fib_.by_usid's entries of one uSID block (the top nibble: a plane), resolved and indexed by
  // the low 12 bits up to the highest one in use (kNoRoute where there is none): a lookup reads
  // one array slot, not a hash chain. Entries of other blocks stay in by_usid.
  std::vector<Route> home_table_;
  std::vector<FibEntry> home_entries_;  // the same entries unresolved, for FindUsid
  std::string name_;
  std::vector<SimPort*> egress_ports_;
  Fib fib_;
  // fib_.groups resolved to ports: group g is group_ports_[spans_[g].first, + spans_[g].size).
  struct GroupSpan {
    uint32_t first = 0, size = 0;
  };
  std::vector<GroupSpan> spans_;
  std::vector<SimPort*> group_ports_;
};

}  // namespace mrclab::emulator::sim
