// Speed of the model: an all-to-all blast on a Clos (by default clos8: 8 planes, 64 hosts).
// Every host port sends `--packets` packets to every other host's port in its plane (to its
// link address, one flow per destination), keeping its NIC queue full through OnTxSpace.
// Prints packet-hops and ns-3 events per wall-clock second of Simulator::Run().
//
//   mrclab_ns3_model_bench [--lab=labs/clos4.yaml] [--packets=20] [--payload=4096]
//                          [--scheduler=ns3::MapScheduler|mrclab::BucketScheduler|...]
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "emulator/lab_spec.h"
#include "emulator/ns3/model/bucket_scheduler.h"
#include "emulator/ns3/model/sim_fabric.h"
#include "ns3/command-line.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace {

using mrclab::emulator::ResolvedLab;
using mrclab::emulator::sim::ParseIpv6Address;
using mrclab::emulator::sim::SimFabric;
using mrclab::emulator::sim::SimPacket;

const char* kClos8 =
    "name: clos8\n"
    "clos: {planes: 8, spines_per_plane: 4, leaves_per_plane: 8, hosts: 64, hosts_per_leaf: 8}\n"
    "routing: bgp\n"
    "link_rate: 1Gbit\n";

// One host port's share of the blast: round-robin over its peers until each has `packets`.
class Blaster {
 public:
  Blaster(SimFabric& fabric, std::string host, int plane, SimPacket templ,
          std::vector<mrclab::emulator::sim::Ipv6Address> peers, uint32_t packets,
          uint64_t buffer_bytes)
      : fabric_(fabric), host_(std::move(host)), plane_(plane), templ_(templ),
        peers_(std::move(peers)), remaining_(static_cast<uint64_t>(packets) * peers_.size()),
        buffer_bytes_(buffer_bytes) {}

  void Pump() {
    while (remaining_ > 0 &&
           fabric_.QueuedBytes(host_, plane_) + templ_.WireBytes() <= buffer_bytes_) {
      SimPacket p = templ_;
      p.dst = peers_[next_];
      p.src_port = static_cast<uint16_t>(10000 + next_);
      next_ = (next_ + 1) % peers_.size();
      --remaining_;
      fabric_.Send(host_, plane_, std::move(p));
    }
  }

 private:
  SimFabric& fabric_;
  std::string host_;
  int plane_;
  SimPacket templ_;
  std::vector<mrclab::emulator::sim::Ipv6Address> peers_;
  uint64_t remaining_;
  uint64_t buffer_bytes_;
  size_t next_ = 0;
};

}  // namespace

int main(int argc, char* argv[]) {
  std::string lab_path;
  uint32_t packets = 20;
  uint32_t payload = 4096;
  std::string scheduler = "ns3::MapScheduler";
  ns3::CommandLine cmd(__FILE__);
  cmd.AddValue("lab", "lab file (default: clos8 inline)", lab_path);
  cmd.AddValue("packets", "packets from every host port to every peer", packets);
  cmd.AddValue("payload", "payload bytes per packet", payload);
  cmd.AddValue("scheduler", "ns-3 scheduler TypeId", scheduler);
  cmd.Parse(argc, argv);

  mrclab::emulator::sim::BucketScheduler::GetTypeId();  // registers mrclab::BucketScheduler
  ns3::ObjectFactory scheduler_factory;
  scheduler_factory.SetTypeId(scheduler);
  ns3::Simulator::SetScheduler(scheduler_factory);

  const ResolvedLab lab = mrclab::emulator::Resolve(
      lab_path.empty() ? mrclab::emulator::ParseLabText(kClos8, "<clos8>")
                       : mrclab::emulator::ParseLabFile(lab_path));
  ns3::Ptr<SimFabric> fabric = ns3::CreateObject<SimFabric>();
  const auto build_start = std::chrono::steady_clock::now();
  fabric->Build(lab);
  const double build_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start).count();
  ns3::UintegerValue host_buffer;
  fabric->GetAttribute("HostBufferBytes", host_buffer);

  uint64_t received = 0;
  std::vector<std::unique_ptr<Blaster>> blasters;
  for (const auto* host : lab.Hosts()) {
    for (const auto& port : host->ports) {
      fabric->SetReceiver(host->name, port.plane, [&received](SimPacket&&) { ++received; });
      std::vector<mrclab::emulator::sim::Ipv6Address> peers;
      for (const auto* peer : lab.Hosts()) {
        for (const auto& peer_port : peer->ports) {
          if (peer != host && peer_port.plane == port.plane) {
            peers.push_back(ParseIpv6Address(peer_port.address));
          }
        }
      }
      SimPacket templ;
      templ.src = ParseIpv6Address(port.address);
      templ.payload_bytes = payload;
      Blaster* b = blasters
                       .emplace_back(std::make_unique<Blaster>(*fabric, host->name, port.plane,
                                                               templ, std::move(peers), packets,
                                                               host_buffer.Get()))
                       .get();
      fabric->SetOnTxSpace(host->name, port.plane, [b] { b->Pump(); });
      b->Pump();
    }
  }

  const auto start = std::chrono::steady_clock::now();
  ns3::Simulator::Run();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uint64_t hops = fabric->PacketHops();
  const uint64_t events = ns3::Simulator::GetEventCount();
  std::printf("lab %s: %zu hosts, %d planes, %zu links, %s\n", lab.name.c_str(),
              lab.Hosts().size(), lab.planes, lab.links.size(), scheduler.c_str());
  std::printf("build (FIBs included): %.3f s\n", build_seconds);
  std::printf("packets received %llu, packet-hops %llu, simulated %.6f s\n",
              static_cast<unsigned long long>(received), static_cast<unsigned long long>(hops),
              ns3::Simulator::Now().GetSeconds());
  std::printf("wall %.3f s: %.0f packet-hops/s, %.0f events/s, %.2f events per hop\n", wall,
              hops / wall, events / wall, static_cast<double>(events) / hops);
  ns3::Simulator::Destroy();
  return 0;
}
