#include "sim-test-helpers.h"

#include <cstring>
#include <stdexcept>

#include "emulator/lab_spec.h"
#include "emulator/ns3/model/bucket_scheduler.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace mrclab::emulator::sim::test {

emulator::ResolvedLab Clos2(emulator::Routing routing) {
  const std::string yaml =
      std::string("name: t\n"
                  "clos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 4, hosts: 8, "
                  "hosts_per_leaf: 2}\n") +
      (routing == emulator::Routing::kBgp ? "routing: bgp\n" : "routing: static\n") +
      "link_rate: 1Gbit\n";
  return emulator::Resolve(emulator::ParseLabText(yaml, "<test>"));
}

ns3::Ptr<SimFabric> BuildFabric(const emulator::ResolvedLab& lab, uint32_t seed) {
  ns3::Ptr<SimFabric> fabric = ns3::CreateObject<SimFabric>();
  fabric->SetAttribute("RoutingReactionTime", ns3::TimeValue(ns3::MilliSeconds(5)));
  fabric->SetAttribute("Seed", ns3::UintegerValue(seed));
  fabric->Build(lab);
  return fabric;
}

SimPacket NumberedPacket(const std::string& src, const std::string& dst, uint16_t src_port,
                         uint32_t seq) {
  std::vector<uint8_t> bytes(1000);
  std::memcpy(bytes.data(), &seq, sizeof seq);
  SimPacket p;
  p.src = ParseIpv6Address(src);
  p.dst = ParseIpv6Address(dst);
  p.src_port = src_port;
  p.payload_bytes = static_cast<uint32_t>(bytes.size());
  p.payload = Payload::Own(bytes);
  return p;
}

uint32_t SequenceOf(const SimPacket& packet) {
  uint32_t seq;
  std::memcpy(&seq, (*packet.payload).data(), sizeof seq);
  return seq;
}

void CollectingSink::Receive(SimPacket&& packet) {
  if (on_receive) on_receive(packet);
  arrivals.push_back({ns3::TimeStep(SimNowSteps()), std::move(packet)});
}

void Recorder::Attach(SimFabric& fabric, const std::string& host, int plane) {
  fabric.SetReceiver(host, plane, [this](SimPacket&& p) {
    arrivals_.push_back({ns3::TimeStep(SimNowSteps()), std::move(p)});
  });
}

std::vector<uint32_t> Recorder::Sequences() const {
  std::vector<uint32_t> out;
  for (const Arrival& a : arrivals_) out.push_back(SequenceOf(a.packet));
  return out;
}

std::string HostAddress(const emulator::ResolvedLab& lab, const std::string& host, int plane) {
  for (const emulator::ResolvedNode::Port& p : lab.FindNode(host)->ports) {
    if (p.plane == plane) return p.address;
  }
  throw std::out_of_range(host + " has no port in plane " + std::to_string(plane));
}

}  // namespace mrclab::emulator::sim::test
