// ResolvedLab: everything the backends need, computed purely from a LabSpec — namespace and
// interface names, the IPv6 addressing plan, the RFC 7938 ASN plan, the SRv6 uSID plan, the
// routes of `routing: static` and of hosts, and uSID paths. The plan is documented in
// labs/README.md. Resolve() touches no kernel state and is deterministic.
//
// Plan summary (see labs/README.md for the full text):
//   namespaces      "<lab>-<node>"
//   link L subnet   fd00:<plane>:<L mod 2^16>:<L div 2^16>::/64, a = ::1, b = ::2 (L = link index)
//   plane P prefix  fd00:<P>::/32 (every host-port and fabric subnet of plane P)
//   uSID block      fcbb:0::/32; a uSID is 16 bits: nibble P+1, then 12 bits (usid_plan.h):
//                   p0-spine0 = 1101, p1-leaf2 = 2203, host6 port of plane 1 = 2307; labs of
//                   more than 255 hosts give host ports leaf-local uSIDs (0xc00 + position).
//                   uSID locator of a node: fcbb:0:<usid>::/48.
//   plane P uSIDs   fcbb:0:<P+1>000::/36
//   path            fcbb:0:<leafA>:<spine>:<leafB>:<hostB port>:: (a uSID container)
//   host address    on its plane-P port: the link address, plus fcbb:0:<port usid>::/128
//   ASNs            spines of plane P share 4200000000 + P*100000;
//                   leaf i of plane P has 4200000000 + P*100000 + 10000 + i
//   router-id       10.<P>.<role + 4 * (index div 256)>.<index mod 256>
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "emulator/lab_spec.h"

namespace mrclab::emulator {

struct NextHop {
  std::string address;    // global address of the neighbour on the link
  std::string interface;  // local interface
};

struct Route {
  std::string prefix;  // "fd00:1::/32"
  std::vector<NextHop> next_hops;  // ECMP set, sorted
};

struct ResolvedInterface {
  std::string name;         // <= 15 characters
  int link = -1;            // index into ResolvedLab::links
  int plane = 0;
  std::string address;      // "fd00:0:5::1/64"
  std::string peer_node;
  std::string peer_interface;
  std::string peer_address; // "fd00:0:5::2" (no prefix length)
};

struct ResolvedNode {
  std::string name;
  NodeKind kind = NodeKind::kSwitch;
  SwitchRole role = SwitchRole::kLeaf;  // switches only
  int plane = -1;                       // switches: their plane; hosts: -1
  int index = 0;                        // switches: within (plane, role); hosts: host number
  std::string netns;                    // "<lab>-<node>"
  uint32_t asn = 0;                     // switches only
  std::string router_id;                // switches only
  uint16_t usid = 0;                    // switches only
  std::vector<ResolvedInterface> interfaces;  // in link order
  // Hosts: one port per plane they attach to.
  struct Port {
    int plane = 0;
    std::string interface;
    uint16_t usid = 0;
    std::string address;  // link address without prefix length
  };
  std::vector<Port> ports;   // hosts only, sorted by plane
  // Routes this node needs besides connected ones. Hosts: plane prefix and plane uSIDs via
  // their leaf (both modes). Switches: in static mode, every plane subnet, switch locator and
  // host uSID via shortest paths (ECMP); in bgp mode only leaves' routes to their hosts' uSIDs.
  std::vector<Route> routes;
  // The lab file's sysctls that match this node, in file order: (key with dots, value, field).
  struct Sysctl {
    std::string key, value, field;
  };
  std::vector<Sysctl> sysctls;
  // Switches: the lab file's own FRR configuration (the last frr_config entry that matches), or
  // none: mrclab generates it (emulator/netns/frr_config.h).
  struct FrrConfig {
    std::string path, field;
    bool is_template = false;
  };
  std::optional<FrrConfig> frr_config;
  // Switches: the router image it runs from as a container (the last images entry that
  // matches), or none: FRR installed on this machine, in the switch's namespace.
  struct Image {
    std::string reference, field;  // a tag, or an archive's path
    bool is_archive = false;
  };
  std::optional<Image> image;
  // Hosts: a VM with its own kernel (the last runtimes entry that matches says runtime: vm), or
  // none: a network namespace of this machine's kernel.
  struct Vm {
    uint32_t memory_mib = 256, cpus = 1;
    std::string field;  // "runtimes[0]"
  };
  std::optional<Vm> vm;
};

// Hosts a and b's ports on each plane both attach to: (a's, b's), in plane order.
using SharedPort = std::pair<const ResolvedNode::Port*, const ResolvedNode::Port*>;
std::vector<SharedPort> SharedPorts(const ResolvedNode& a, const ResolvedNode& b);

struct ResolvedLink {
  int index = 0;
  int plane = 0;
  bool fabric = false;  // switch-to-switch (false: host-to-switch)
  EndpointSpec a, b;
  std::string subnet;   // "fd00:0:5::/64"
  std::string a_address, b_address;  // without prefix length
};

// One uSID path host->leaf->spine->leaf->host inside one plane.
struct UsidPath {
  int plane = 0;
  std::string src_host, leaf_a, spine, leaf_b, dst_host;
  std::string destination;  // the uSID container, e.g. "fcbb:0:1201:1101:1202:1302::"
};

// BFD's interval for a bgp lab that does not set one: 300 ms (FRR's default), longer on labs of
// many fabric links so that all of the lab's BFD sessions send at most kMaxBfdPacketsPerSecond
// together (rounded up to 100 ms: clos4's 128 links 700 ms, clos8's 256 links 1.3 s). Every BFD
// packet wakes a daemon several times; at 300 ms clos4's 48 bfdd took a quarter of this machine.
inline constexpr int kMaxBfdPacketsPerSecond = 400;
uint64_t DefaultBfdIntervalNs(size_t fabric_links);

struct ResolvedLab {
  std::string name;
  std::string source;
  Routing routing = Routing::kBgp;
  std::optional<uint64_t> link_rate_bps;
  std::optional<uint64_t> link_delay_ns;  // simulation only (deploy refuses it)
  uint32_t mtu = kDefaultLinkMtu;         // every link's MTU (lab_spec.h)
  uint64_t bfd_interval_ns = 0;           // bgp labs: BFD's transmit/receive interval (x3 to detect)
  int planes = 0;
  bool host_usids_leaf_local = false;  // more than 255 hosts: see usid_plan.h
  std::vector<ResolvedNode> nodes;  // switches first (by plane, spines then leaves), then hosts
  std::vector<ResolvedLink> links;

  const ResolvedNode* FindNode(const std::string& name) const;  // nullptr if unknown
  void IndexNodes();  // makes FindNode O(1); Resolve calls it (a stale index falls back to a scan)
  std::vector<const ResolvedNode*> Switches() const;
  std::vector<const ResolvedNode*> Hosts() const;
  // The VM host (`runtime: vm`) a link ends on, or nullptr: its end is a tap on the leaf and an
  // interface in the guest, not a veth in this machine's namespaces.
  const ResolvedNode* VmHostOn(const ResolvedLink& link) const;
  // True for an interface on a switch-to-switch link (the ones that run BGP and BFD).
  bool IsFabric(const ResolvedInterface& itf) const {
    return itf.link >= 0 && static_cast<size_t>(itf.link) < links.size() && links[itf.link].fabric;
  }
  // Expected number of BGP sessions, counted once per fabric link end (bgp mode).
  int ExpectedBgpSessions() const;
  // For every plane and every spine of it, one path that crosses that spine, between two
  // hosts on different leaves where the plane has two leaves with hosts (else the same leaf).
  std::vector<UsidPath> SpineProofPaths() const;
  // Path through the named nodes; throws std::invalid_argument if they are not adjacent.
  UsidPath PathVia(const std::string& src_host, const std::string& leaf_a,
                   const std::string& spine, const std::string& leaf_b,
                   const std::string& dst_host) const;
  // The plan as JSON: what deploy records, what a run directory's lab.json holds.
  nlohmann::json ToJson() const;
  // ToJson() without its per-node and per-link lists ("nodes", "links", "spine_proof_paths").
  nlohmann::json SummaryJson() const;
  // Writes the text of ToJson().dump() in pieces, holding one node or link as JSON at a time:
  // at 131,072 hosts the whole document would take over 10 GiB.
  void DumpJson(const std::function<void(std::string_view)>& write) const;

 private:
  std::unordered_map<std::string, size_t> node_index_;
};

struct ResolveOptions {
  // The routes of nodes (what an emulated lab installs). The simulator computes its own FIBs
  // and skips them: in static mode they grow as switches x links.
  bool routes = true;
};

// Throws LabError (file = spec.source) for plans that cannot be made: more than 1279 switches
// of a role in a plane, more than 1024 host ports on a leaf (labs of over 255 hosts), more than
// 15 planes, an interface name over 15 characters, a host with two ports in one plane, a plane
// with leaves but no spines, a host without any port — and for specs that ParseLabText would
// have refused (unknown or duplicate nodes, reused interfaces, self or host-to-host links), a
// fabric link between two planes, a switch declared spine that has host ports.
ResolvedLab Resolve(const LabSpec& spec, const ResolveOptions& options = {});

std::string UsidHex(uint16_t usid);  // 0x1101 -> "1101"
std::string UsidAddress(uint16_t usid);  // 0x1101 -> "fcbb:0:1101::"
std::string UsidLocator(uint16_t usid);  // 0x1101 -> "fcbb:0:1101::/48"
// RFC 5952 canonical text of an IPv6 address given as eight 16-bit groups: lowercase, no
// leading zeros, the longest (leftmost on a tie) run of two or more zero groups as "::".
std::string FormatIpv6(const std::array<uint16_t, 8>& groups);

}  // namespace mrclab::emulator
