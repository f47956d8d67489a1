#include "emulator/ns3/model/usid_switch.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#include "emulator/ns3/model/ecmp_hash.h"
#include "mrc/core/prefetch.h"

namespace mrclab::emulator::sim {

namespace {

// fcbb:0::/32, in one 4-byte comparison (every hop asks, some several times).
bool InUsidBlock(const Ipv6Address& a) {
  static constexpr uint8_t kBlock[4] = {0xfc, 0xbb, 0, 0};
  return std::memcmp(a.data(), kBlock, sizeof(kBlock)) == 0;
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

UsidSwitch::UsidSwitch(std::string name, uint64_t hash_seed) : hash_seed_(hash_seed), name_(std::move(name)) {}

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
  std::vector<GroupSpan> spans;
  std::vector<SimPort*> group_ports;
  spans.reserve(fib.groups.size());
  for (const std::vector<uint16_t>& members : fib.groups) {
    spans.push_back({static_cast<uint32_t>(group_ports.size()), static_cast<uint32_t>(members.size())});
    for (uint16_t index : members) {
      if (index >= egress_ports_.size()) {
        throw std::out_of_range(name_ + ": FIB group names port " + std::to_string(index) +
                                " of " + std::to_string(egress_ports_.size()));
      }
      group_ports.push_back(egress_ports_[index]);
    }
  }
  fib_ = std::move(fib);
  spans_ = std::move(spans);
  group_ports_ = std::move(group_ports);
  IndexHomeBlock();
}

void UsidSwitch::IndexHomeBlock() {
  std::array<size_t, 16> per_block{};
  for (const auto& [usid, entry] : fib_.by_usid) ++per_block[usid >> 12];
  home_block_ = static_cast<uint16_t>(std::max_element(per_block.begin(), per_block.end()) - per_block.begin());
  size_t size = 0;
  for (const auto& [usid, entry] : fib_.by_usid)
    if (usid >> 12 == home_block_) size = std::max<size_t>(size, (usid & 0xfff) + 1);
  home_entries_.assign(size, FibEntry{});
  home_table_.assign(size, Route{});
  for (const auto& [usid, entry] : fib_.by_usid) {
    if (usid >> 12 != home_block_) continue;
    home_entries_[usid & 0xfff] = entry;
    home_table_[usid & 0xfff] = Resolve(entry);
  }
}

UsidSwitch::Route UsidSwitch::Resolve(const FibEntry& entry) const {
  Route route{entry.behaviour};
  if (entry.behaviour == Behaviour::kForward) {
    const GroupSpan span = spans_[entry.group];
    route.size = span.size;
    route.ports = group_ports_.data() + span.first;
    route.first = span.size > 0 ? route.ports[0] : nullptr;
  }
  return route;
}

const FibEntry* UsidSwitch::FindUsid(uint16_t usid) const {
  if (usid >> 12 == home_block_) {
    if ((usid & 0xfffu) >= home_entries_.size()) return nullptr;
    const FibEntry& entry = home_entries_[usid & 0xfff];
    return entry.behaviour == Behaviour::kNoRoute ? nullptr : &entry;
  }
  return sim::FindUsid(fib_, usid);
}

void UsidSwitch::Receive(SimPacket&& packet) {
  if (packet.hop_limit <= 1) {
    ++counters_.hop_limit_drops;
    return;
  }
  --packet.hop_limit;
  Dispatch(std::move(packet));
}

void UsidSwitch::Prefetch(const SimPacket& packet, int stage) const {
  if (stage > 1 || !InUsidBlock(packet.dst)) return;  // two are enough: the table entry, then the egress port
  auto home = [&](int byte) -> const Route* {
    const uint16_t usid = Group16(packet.dst, byte);
    return usid >> 12 == home_block_ && (usid & 0xfffu) < home_table_.size() ? &home_table_[usid & 0xfff] : nullptr;
  };
  if (stage == 0) {
    for (int byte : {4, 6})
      if (const Route* route = home(byte)) mrc::PrefetchLine(route);
    return;
  }
  const Route* route = home(4);
  if (route && route->behaviour == Behaviour::kUn) route = home(6);  // (the shift moves 6 to 4)
  if (!route || route->behaviour != Behaviour::kForward || route->size == 0) return;
  (route->size == 1 ? route->first : route->ports[EcmpPick(FlowHash(packet, hash_seed_), route->size)])->Prefetch();
}

void UsidSwitch::Dispatch(SimPacket&& packet) {
  ++counters_.lookups;
  const Route route = Lookup(packet.dst);
  (this->*kBehaviours[static_cast<int>(route.behaviour)])(std::move(packet), route);
}

UsidSwitch::Route UsidSwitch::Lookup(const Ipv6Address& dst) const {
  if (InUsidBlock(dst)) {
    const uint16_t usid = Group16(dst, 4);
    if (usid >> 12 == home_block_) return (usid & 0xfffu) < home_table_.size() ? home_table_[usid & 0xfff] : Route{};
    const FibEntry* entry = sim::FindUsid(fib_, usid);
    return entry ? Resolve(*entry) : Route{};
  }
  if (IsLinkAddress(dst)) {
    const FibEntry* entry =
        LookupLinkAddress(fib_, Group16(dst, 2), uint32_t{Group16(dst, 6)} << 16 | Group16(dst, 4), dst[15],
                          [this](uint16_t usid) { return FindUsid(usid); });
    return entry ? Resolve(*entry) : Route{};
  }
  return Route{};
}

void UsidSwitch::NoRoute(SimPacket&&, const Route&) { ++counters_.no_route_drops; }

void UsidSwitch::Local(SimPacket&&, const Route&) { ++counters_.local_drops; }

void UsidSwitch::EndNextCsid(SimPacket&& packet, const Route&) {
  ++counters_.un_hits;
  // Shift the container by one uSID: bytes 6..15 move to 4..13 (through a fixed-size
  // temporary: std::copy of the overlapping range was a call to memmove, 2.6% of a ring step).
  uint8_t* dst = packet.dst.data();
  uint8_t shifted[10];
  std::memcpy(shifted, dst + 6, sizeof shifted);
  std::memcpy(dst + 4, shifted, sizeof shifted);
  dst[14] = 0;
  dst[15] = 0;
  Dispatch(std::move(packet));
}

void UsidSwitch::Forward(SimPacket&& packet, const Route& route) {
  if (route.size == 1) {  // no choice to make, no hash
    if (!route.first->IsUp()) {
      ++counters_.no_route_drops;
      return;
    }
    ++counters_.forwarded;
    route.first->Enqueue(std::move(packet));
    return;
  }
  SimPort* const* members = route.ports;
  uint32_t up = 0;
  for (uint32_t i = 0; i < route.size; ++i) up += members[i]->IsUp() ? 1 : 0;
  if (up == 0) {
    ++counters_.no_route_drops;
    return;
  }
  // Hashing is skipped when there is no choice to make.
  uint32_t pick = up == 1 ? 0 : EcmpPick(FlowHash(packet, hash_seed_), up);
  for (uint32_t i = 0; i < route.size; ++i) {
    if (!members[i]->IsUp()) continue;
    if (pick-- == 0) {
      ++counters_.forwarded;
      members[i]->Enqueue(std::move(packet));
      return;
    }
  }
}

}  // namespace mrclab::emulator::sim
