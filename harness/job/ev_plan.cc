#include "harness/job/ev_plan.h"

#include <map>
#include <stdexcept>

namespace mrclab::harness {
namespace {

using emulator::ResolvedLab;
using emulator::ResolvedNode;

std::string LocalAddress(const ResolvedNode::Port& p, mrc::EvMode mode) {
  return mode == mrc::EvMode::kSrv6 ? emulator::UsidAddress(p.usid) : p.address;
}

// The leaf a host's port of `plane` attaches to.
std::string LeafOf(const ResolvedNode& host, int plane) {
  for (const auto& port : host.ports)
    if (port.plane == plane)
      for (const auto& itf : host.interfaces)
        if (itf.name == port.interface) return itf.peer_node;
  return {};
}

// A hash of a host pair (FNV-1a of the two names, in order): where the pair's EVs start in a
// plane's list of spines when they do not reach every spine of it, so that pairs whose EVs
// cover only some spines (a big fabric) together still use all of them, not the first few.
uint64_t PairHash(const std::string& a, const std::string& b) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : std::min(a, b) + "|" + std::max(a, b)) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  return h;
}

}  // namespace

const ResolvedNode& LabHost(const ResolvedLab& lab, const std::string& name) {
  const ResolvedNode* node = lab.FindNode(name);
  if (!node) throw std::invalid_argument("unknown node '" + name + "' in lab '" + lab.name + "'");
  if (node->kind != emulator::NodeKind::kHost)
    throw std::invalid_argument("'" + name + "' is a switch, not a host");
  return *node;
}

std::vector<mrc::EndpointPort> HostPorts(const ResolvedNode& host, mrc::EvMode mode) {
  std::vector<mrc::EndpointPort> ports;
  for (const auto& p : host.ports) ports.push_back({host.netns, LocalAddress(p, mode), p.plane});
  return ports;
}

HostPairPlan PlanEvs(const ResolvedLab& lab, const std::string& a, const std::string& b,
                     mrc::EvMode mode, int evs, uint16_t first_port) {
  const ResolvedNode& src = LabHost(lab, a);
  const ResolvedNode& dst = LabHost(lab, b);
  if (evs < 1 || evs > 256) throw std::invalid_argument("EVs per QP must be between 1 and 256");
  std::map<int, std::string> src_address, dst_address;
  for (const auto& p : src.ports) src_address[p.plane] = LocalAddress(p, mode);
  for (const auto& p : dst.ports) dst_address[p.plane] = LocalAddress(p, mode);

  HostPairPlan plan;
  std::vector<int> planes;
  for (const auto& p : src.ports) {
    if (!dst_address.count(p.plane)) continue;
    planes.push_back(p.plane);
    plan.a_ports.push_back({src.netns, src_address[p.plane], p.plane});
    plan.b_ports.push_back({dst.netns, dst_address[p.plane], p.plane});
  }
  if (planes.empty()) throw std::invalid_argument(a + " and " + b + " share no plane");

  std::map<int, std::vector<std::string>> spines;
  for (const ResolvedNode* sw : lab.Switches())
    if (sw->role == emulator::SwitchRole::kSpine) spines[sw->plane].push_back(sw->name);
  const size_t evs_per_plane = (static_cast<size_t>(evs) + planes.size() - 1) / planes.size();
  const uint64_t pair_hash = PairHash(a, b);
  for (int i = 0; i < evs; ++i) {
    const int plane = planes[i % planes.size()];
    const auto sport = static_cast<uint16_t>(first_port + i);
    if (mode == mrc::EvMode::kUdp) {
      plan.a_to_b.push_back({plane, dst_address[plane], sport});
      plan.b_to_a.push_back({plane, src_address[plane], sport});
      continue;
    }
    const auto& plane_spines = spines[plane];
    if (plane_spines.empty())
      throw std::invalid_argument("plane " + std::to_string(plane) + " has no spine");
    const size_t first = evs_per_plane >= plane_spines.size() ? 0 : pair_hash % plane_spines.size();
    const std::string& spine = plane_spines[(first + i / planes.size()) % plane_spines.size()];
    const std::string leaf_a = LeafOf(src, plane), leaf_b = LeafOf(dst, plane);
    plan.a_to_b.push_back({plane, lab.PathVia(a, leaf_a, spine, leaf_b, b).destination, sport});
    plan.b_to_a.push_back({plane, lab.PathVia(b, leaf_b, spine, leaf_a, a).destination, sport});
  }
  return plan;
}

}  // namespace mrclab::harness
