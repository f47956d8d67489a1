// Kernel means of the faults: link ends administratively down and up (netlink), and nftables
// chains that drop at a link end's ingress (or egress, toward a VM host). Each call does one thing to the given objects and
// throws std::runtime_error naming the node, the interface and the kernel's (or nft's) reason.
#pragma once

#include <set>
#include <string>

#include "emulator/resolved_lab.h"

namespace mrclab::emulator::netns {

// Both ends of every link in `links` down (or up), one netlink batch per namespace. Bringing a
// host's port up also puts back the host's routes through it: the kernel deletes the IPv6
// routes of an interface that goes administratively down, and on hosts those routes are
// deploy's (FRR reinstalls the switches' own). A VM host's end is its guest NIC's carrier (set
// through qemu's monitor, vm_qmp.h; the guest keeps its routes). Setting a state a link already
// has is fine.
void SetLinksUp(const ResolvedLab& lab, const std::set<int>& links, bool up);

// Those of `interfaces` in namespace `netns` that are administratively down (or missing).
std::set<std::string> AdminDownInterfaces(const std::string& netns, const std::set<std::string>& interfaces);

// The netdev hook a drop chain is on: what arrives on the interface, or what leaves by it.
enum class DropHook { kIngress, kEgress };

// Table `netdev <table>` in namespace `netns` with a chain named by the hook ("ingress",
// "egress") on `ifname` that drops every packet (drop_per_10000 = 10000) or each with
// probability drop_per_10000 / 10000 (`numgen random mod 10000 < N`). A table may hold one chain
// of each hook. One nft transaction: all or nothing.
void AddDrop(const std::string& netns, const std::string& table, const std::string& ifname, DropHook hook,
             int drop_per_10000);

// Deletes table `netdev <table>` of namespace `netns`; a table that is not there is fine.
void DeleteNftTable(const std::string& netns, const std::string& table);

}  // namespace mrclab::emulator::netns
