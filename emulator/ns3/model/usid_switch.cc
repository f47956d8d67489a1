#include "emulator/ns3/model/usid_switch.h"

#include <algorithm>
#include <stdexcept>

#include "emulator/ns3/model/ecmp_hash.h"

namespace mrclab::emulator::sim {

namespace {

const FibEntry kNoEntry{};

bool InUsidBlock(const Ipv6Address& a) {
  return a[0] == 0xfc && a[1] == 0xbb && a[2] == 0 && a[3] == 0;
}

// fd00:<P>:<L lo>:<L hi>::1 or ::2 (the only addresses a link subnet uses).
bool IsLinkAddress(const Ipv6Address& a) {
  if (a[0] != 0xfd || a[1] != 0x00) return false;
  for (int i = 8; i < 15; ++i) {
    if (a[i] != 0) return false;
  }
  return a[15] == 1 || a[15] == 2;
}

uint16_t Group16(const Ipv6Address& a, int byte) {
  return static_cast<uint16_t>(a[byte] << 8 | a[byte + 1]);
}

}  // namespace

// Indexed by Behaviour.
const UsidSwitch::BehaviourFunction UsidSwitch::kBehaviours[kBehaviourCount] = {
    &UsidSwitch::NoRoute,
    &UsidSwitch::EndNextCsid,
    &UsidSwitch::Forward,
    &UsidSwitch::Local,
};

UsidSwitch::UsidSwitch(std::string name, uint64_t hash_seed)
    : name_(std::move(name)), hash_seed_(hash_seed) {}

uint16_t UsidSwitch::AddEgressPort(SimPort* port) {
  if (egress_ports_.size() > UINT16_MAX) {
    throw std::out_of_range(name_ + ": more egress ports than a FIB can name");
  }
  egress_ports_.push_back(port);
  return static_cast<uint16_t>(egress_ports_.size() - 1);
}

void UsidSwitch::SetFib(Fib fib) {
  auto check = [&](const FibEntry& e) {
    if (e.behaviour == Behaviour::kForward && e.group >= fib.groups.size()) {
      throw std::out_of_range(name_ + ": FIB entry names group " + std::to_string(e.group) +
                              " of " + std::to_string(fib.groups.size()));
    }
  };
  for (const auto& [usid, entry] : fib.by_usid) check(entry);
  for (const auto& [key, entry] : fib.by_link_address) check(entry);
  std::vector<std::vector<SimPort*>> groups;
  groups.reserve(fib.groups.size());
  for (const std::vector<uint16_t>& members : fib.groups) {
    std::vector<SimPort*>& ports = groups.emplace_back();
    for (uint16_t index : members) {
      if (index >= egress_ports_.size()) {
        throw std::out_of_range(name_ + ": FIB group names port " + std::to_string(index) +
                                " of " + std::to_string(egress_ports_.size()));
      }
      ports.push_back(egress_ports_[index]);
    }
  }
  fib_ = std::move(fib);
  groups_ = std::move(groups);
}

void UsidSwitch::Receive(SimPacket&& packet) {
  if (packet.hop_limit <= 1) {
    ++counters_.hop_limit_drops;
    return;
  }
  --packet.hop_limit;
  Dispatch(std::move(packet));
}

void UsidSwitch::Dispatch(SimPacket&& packet) {
  ++counters_.lookups;
  const FibEntry& entry = Lookup(packet.dst);
  (this->*kBehaviours[static_cast<int>(entry.behaviour)])(std::move(packet), entry);
}

const FibEntry& UsidSwitch::Lookup(const Ipv6Address& dst) const {
  if (InUsidBlock(dst)) {
    auto it = fib_.by_usid.find(Group16(dst, 4));
    return it == fib_.by_usid.end() ? kNoEntry : it->second;
  }
  if (IsLinkAddress(dst)) {
    const FibEntry* entry =
        LookupLinkAddress(fib_, Group16(dst, 2), uint32_t{Group16(dst, 6)} << 16 | Group16(dst, 4), dst[15]);
    return entry ? *entry : kNoEntry;
  }
  return kNoEntry;
}

void UsidSwitch::NoRoute(SimPacket&&, const FibEntry&) { ++counters_.no_route_drops; }

void UsidSwitch::Local(SimPacket&&, const FibEntry&) { ++counters_.local_drops; }

void UsidSwitch::EndNextCsid(SimPacket&& packet, const FibEntry&) {
  ++counters_.un_hits;
  Ipv6Address& dst = packet.dst;
  std::copy(dst.begin() + 6, dst.end(), dst.begin() + 4);
  dst[14] = 0;
  dst[15] = 0;
  Dispatch(std::move(packet));
}

void UsidSwitch::Forward(SimPacket&& packet, const FibEntry& entry) {
  const std::vector<SimPort*>& members = groups_[entry.group];
  uint32_t up = 0;
  for (const SimPort* port : members) up += port->IsUp() ? 1 : 0;
  if (up == 0) {
    ++counters_.no_route_drops;
    return;
  }
  // Hashing is skipped when there is no choice to make.
  uint32_t pick = up == 1 ? 0 : EcmpPick(FlowHash(packet, hash_seed_), up);
  for (SimPort* port : members) {
    if (!port->IsUp()) continue;
    if (pick-- == 0) {
      ++counters_.forwarded;
      port->Enqueue(std::move(packet));
      return;
    }
  }
}

}  // namespace mrclab::emulator::sim
