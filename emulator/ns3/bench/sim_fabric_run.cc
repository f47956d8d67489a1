// The plan's traffic on mrclab's lean model (SimFabric): frames go to the link address of the
// peer's host port (UDP mode, no uSID path), one UDP flow per (port, peer), so the switches'
// per-flow ECMP hash spreads them. ECN marking is off (the stock FIFO queue disc does not mark).
#include <chrono>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "emulator/ns3/bench/speed_bench.h"
#include "emulator/ns3/model/sim_fabric.h"
#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace mrclab::emulator::bench {

namespace {

using sim::ParseIpv6Address;
using sim::SimFabric;
using sim::SimPacket;

constexpr uint16_t kFirstSourcePort = 10000;  // source port of a flow: this + peer slot

ns3::Ptr<SimFabric> BuildFabric(const ResolvedLab& lab, const BenchConfig& config) {
  ns3::Ptr<SimFabric> fabric = ns3::CreateObject<SimFabric>();
  fabric->SetAttribute("LinkRate", ns3::DataRateValue(ns3::DataRate(config.link_rate_bps)));
  fabric->SetAttribute("LinkDelay", ns3::TimeValue(config.link_delay));
  fabric->SetAttribute("PortBufferBytes", ns3::UintegerValue(config.switch_buffer_bytes));
  fabric->SetAttribute("HostBufferBytes", ns3::UintegerValue(config.host_buffer_bytes));
  fabric->SetAttribute("EcnThresholdBytes",
                       ns3::UintegerValue(std::numeric_limits<uint64_t>::max()));
  fabric->Build(lab);
  return fabric;
}

// One pacer per host port, sending `frame_bytes` frames to its peers' link addresses.
std::vector<std::unique_ptr<Pacer>> MakePacers(SimFabric& fabric, const TrafficPlan& plan,
                                               const BenchConfig& config) {
  if (config.frame_bytes <= sim::kFrameOverheadBytes) {
    throw std::invalid_argument("frames must be longer than their IPv6/UDP/Ethernet headers");
  }
  const std::vector<HostPort>& ports = plan.Ports();
  std::vector<sim::Ipv6Address> addresses;
  for (const HostPort& port : ports) addresses.push_back(ParseIpv6Address(port.address));

  std::vector<std::unique_ptr<Pacer>> pacers;
  for (size_t i = 0; i < ports.size(); ++i) {
    SimPacket templ;
    templ.src = addresses[i];
    templ.payload_bytes = config.frame_bytes - sim::kFrameOverheadBytes;
    std::vector<sim::Ipv6Address> peers;
    for (int peer : plan.PeersOf(static_cast<int>(i))) peers.push_back(addresses[peer]);
    const HostPort& port = ports[i];
    auto send = [&fabric, &port, templ, peers = std::move(peers)](int slot) {
      SimPacket packet = templ;
      packet.dst = peers[slot];
      packet.src_port = static_cast<uint16_t>(kFirstSourcePort + slot);
      fabric.Send(port.host, port.plane, std::move(packet));
    };
    pacers.push_back(std::make_unique<Pacer>(plan, static_cast<int>(i), std::move(send)));
  }
  return pacers;
}

// Queue and fault drops of every port plus the switches' drops (no route, hop limit, local).
uint64_t Drops(const SimFabric& fabric, const ResolvedLab& lab) {
  uint64_t drops = 0;
  for (const ResolvedLink& link : lab.links) {
    for (bool a_end : {true, false}) {
      const sim::PortCounters c = fabric.Counters(link.index, a_end);
      drops += c.queue_drops + c.fault_drops;
    }
  }
  for (const ResolvedNode* node : lab.Switches()) {
    const sim::SwitchCounters c = fabric.CountersOfSwitch(node->name);
    drops += c.no_route_drops + c.local_drops + c.hop_limit_drops;
  }
  return drops;
}

}  // namespace

RunResult RunSimFabric(const ResolvedLab& lab, const TrafficPlan& plan, const BenchConfig& config) {
  RunResult result;
  result.model = "mrclab SimFabric";
  UseScheduler(config);

  const auto setup_start = std::chrono::steady_clock::now();
  ns3::Ptr<SimFabric> fabric = BuildFabric(lab, config);
  for (const HostPort& port : plan.Ports()) {
    fabric->SetReceiver(port.host, port.plane, [&result](SimPacket&&) { ++result.delivered; });
  }
  std::vector<std::unique_ptr<Pacer>> pacers = MakePacers(*fabric, plan, config);
  result.setup_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();

  for (auto& pacer : pacers) pacer->Start();
  result.wall_seconds = RunTimed(plan.Stop());
  result.simulated_ms = ns3::Simulator::Now().GetSeconds() * 1e3;
  result.packet_hops = fabric->PacketHops();
  result.dropped = Drops(*fabric, lab);
  result.events = ns3::Simulator::GetEventCount();
  for (const auto& pacer : pacers) result.offered += pacer->Offered();

  fabric->Dispose();
  ns3::Simulator::Destroy();
  return result;
}

}  // namespace mrclab::emulator::bench
