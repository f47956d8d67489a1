// Kernel means of the faults: link ends administratively down and up (netlink), and nftables
// chains that drop at a link end's ingress. Each call does one thing to the given objects and
// throws std::runtime_error naming the node, the interface and the kernel's (or nft's) reason.
#pragma once

#include <set>
#include <string>

#include "emulator/resolved_lab.h"

namespace mrclab::emulator::netns {

// Both ends of every link in `links` down (or up), one netlink batch per namespace. Bringing a
// host's port up also puts back the host's routes through it: the kernel deletes the IPv6
// routes of an interface that goes administratively down, and on hosts those routes are
// deploy's (FRR reinstalls the switches' own). Setting a state a link already has is fine.
void SetLinksUp(const ResolvedLab& lab, const std::set<int>& links, bool up);

// Those of `interfaces` in namespace `netns` that are administratively down (or missing).
std::set<std::string> AdminDownInterfaces(const std::string& netns, const std::set<std::string>& interfaces);

// Table `netdev <table>` in namespace `netns` with an ingress chain on `ifname` that drops
// every packet (drop_per_10000 = 10000) or each with probability drop_per_10000 / 10000
// (`numgen random mod 10000 < N`). One nft transaction: all or nothing.
void AddIngressDrop(const std::string& netns, const std::string& table, const std::string& ifname,
                    int drop_per_10000);

// Deletes table `netdev <table>` of namespace `netns`; a table that is not there is fine.
void DeleteNftTable(const std::string& netns, const std::string& table);

}  // namespace mrclab::emulator::netns
