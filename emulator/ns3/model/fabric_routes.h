// Route computation: the FIB of every switch, computed from the topology and the state of its
// links, for every destination the addressing plan has, whatever the lab's routing mode:
//   - every switch's locator (its uSID; the switch itself gets Behaviour::kUn),
//   - every host port's uSID (originated by its leaf; the leaf forwards to the host; a
//     leaf-local one is known to that leaf only),
//   - both addresses of every link subnet fd00:<P>:<L>::/64 (originated by each switch end;
//     a switch end forwards the peer's address over the link and owns its own: kLocal).
// Next hops are all neighbours on a shortest path (ECMP). A link subnet is reached through
// its nearer switch end (both, on a tie).
//
// RouteMode::kShortestPath is breadth-first search over the fabric links: the routes of a
// `routing: static` lab (labs/README.md). RouteMode::kBgp adds eBGP's AS-path loop prevention,
// which is what a `routing: bgp` lab converges to under the RFC 7938 ASN plan: a switch refuses
// a path that already crosses its own ASN, so with the spines of a plane sharing one ASN no
// route ever goes leaf -> spine -> leaf -> spine ("valley"). Hence, in a bgp lab, once a spine
// loses its link to a leaf it has no route to that leaf's destinations at all, as in the kernel
// lab. (A switch advertises one of its best paths, the first the search finds, and the loop
// check applies to that one.)
//
// Connected routes (a switch's entries for its own links and host ports) are always present:
// the switch skips a down port when it forwards. Other switches reach a link's subnet, and a
// host port's uSID, only while the link is `up`; paths only cross fabric links that carry
// routes (`carries_routes`: up, and for bgp labs not blackholed, which brings BFD and then the
// BGP session down).
//
// Cost: planes never meet, so per plane with V switches, E fabric links and L links in total:
// one search per switch, O(V * (V + E * D)) with D the path length (D <= 3 in a two-tier Clos),
// plus O(V * E) to find the fabric subnets whose ends are equally far, plus O(V * L) for global
// host uSIDs (none when they are leaf-local). Memory: O(V^2) per plane while computing; a FIB
// holds O(V + its own links) entries, since link subnets are reached through the locator of
// the switch that announces them (fib.h: LookupLinkAddress, one shared LinkOwners table).
#pragma once

#include <cstdint>
#include <vector>

#include "emulator/ns3/model/fib.h"

namespace mrclab::emulator::sim {

struct RouteTopology {
  struct Switch {
    int plane = 0;
    uint32_t asn = 0;
    uint16_t usid = 0;
  };
  // Link i has subnet fd00:<plane>:<i mod 2^16>:<i div 2^16>::/64, endpoint a = ::1, b = ::2.
  struct Link {
    int plane = 0;
    int a_switch = -1, b_switch = -1;  // index into switches; -1: that end is a host
    int a_port = -1, b_port = -1;      // that switch's egress-port index on this link
    uint16_t host_usid = 0;            // host links: the uSID of the host's port
    bool host_usid_leaf_local = false; // only its leaf routes host_usid (usid_plan.h)
    bool up = true;                    // the link's subnet and host port uSID are announced
    bool carries_routes = true;        // fabric links: paths may cross it
  };
  std::vector<Switch> switches;
  std::vector<Link> links;
};

enum class RouteMode { kShortestPath, kBgp };

// One FIB per switch, in the order of topology.switches. Throws std::invalid_argument if a
// link joins two hosts or two planes, or names a switch or port out of range.
std::vector<Fib> ComputeFibs(const RouteTopology& topology, RouteMode mode);

}  // namespace mrclab::emulator::sim
