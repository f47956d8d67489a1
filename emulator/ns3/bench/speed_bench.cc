#include "emulator/ns3/bench/speed_bench.h"

#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>

#include "emulator/ns3/model/bucket_scheduler.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"

namespace mrclab::emulator::bench {

namespace {

// Every host port of the lab, hosts in lab order, each host's ports by plane.
std::vector<HostPort> HostPortsOf(const ResolvedLab& lab) {
  std::vector<HostPort> ports;
  for (const ResolvedNode* host : lab.Hosts()) {
    for (const ResolvedNode::Port& port : host->ports) {
      ports.push_back({host->name, port.plane, port.address});
    }
  }
  return ports;
}

// For each port, the ports of the same plane that follow it in `ports`, wrapping around.
std::vector<std::vector<int>> RotatedPeers(const std::vector<HostPort>& ports) {
  std::map<int, std::vector<int>> by_plane;
  for (size_t i = 0; i < ports.size(); ++i) by_plane[ports[i].plane].push_back(static_cast<int>(i));
  std::vector<std::vector<int>> peers(ports.size());
  for (const auto& [plane, members] : by_plane) {
    const size_t m = members.size();
    for (size_t j = 0; j < m; ++j) {
      for (size_t step = 1; step < m; ++step) peers[members[j]].push_back(members[(j + step) % m]);
    }
  }
  return peers;
}

}  // namespace

TrafficPlan::TrafficPlan(const ResolvedLab& lab, const BenchConfig& config)
    : ports_(HostPortsOf(lab)), peers_(RotatedPeers(ports_)), stop_(config.stop) {
  if (config.link_rate_bps == 0 || !(config.load > 0) || config.frame_bytes == 0) {
    throw std::invalid_argument("traffic plan: link rate, load and frame size must be positive");
  }
  interval_ns_ =
      config.frame_bytes * 8.0 * 1e9 / (static_cast<double>(config.link_rate_bps) * config.load);
}

ns3::Time TrafficPlan::Departure(int port, uint64_t k) const {
  const double offset_ns = interval_ns_ * port / static_cast<double>(ports_.size());
  return ns3::NanoSeconds(std::llround(offset_ns + interval_ns_ * static_cast<double>(k)));
}

Pacer::Pacer(const TrafficPlan& plan, int port, SendFn send)
    : plan_(plan), port_(port), peers_(static_cast<int>(plan.PeersOf(port).size())),
      send_(std::move(send)) {}

void Pacer::Start() { ScheduleDeparture(); }

void Pacer::ScheduleDeparture() {
  if (peers_ == 0) return;
  const ns3::Time at = plan_.Departure(port_, offered_);
  if (at >= plan_.Stop()) return;
  ns3::Simulator::Schedule(at - ns3::Simulator::Now(), &Pacer::Depart, this);
}

void Pacer::Depart() {
  send_(static_cast<int>(offered_ % peers_));
  ++offered_;
  ScheduleDeparture();
}

void UseScheduler(const BenchConfig& config) {
  sim::BucketScheduler::GetTypeId();  // registers mrclab::BucketScheduler
  ns3::ObjectFactory factory;
  factory.SetTypeId(config.scheduler);
  ns3::Simulator::SetScheduler(factory);
}

double RunTimed(ns3::Time stop) {
  ns3::Simulator::Stop(stop);
  const auto start = std::chrono::steady_clock::now();
  ns3::Simulator::Run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace mrclab::emulator::bench
