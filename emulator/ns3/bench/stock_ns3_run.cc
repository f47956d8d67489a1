// The plan's traffic on stock ns-3: one ns3::Node per lab node, one PointToPoint link per lab
// link (the links' rate and delay), the IPv4 internet stack (no IPv6: it would add neighbour
// discovery traffic), an IPv4 /30 per link, global routing with per-packet random ECMP, and
// UDP sockets: one sender per host port (bound to that port's address) and one receiver per
// host (port 4791, so nothing comes back as ICMP port unreachable).
//
// Queues (BenchConfig::stock_qdisc):
//   "fifo"     a FifoQueueDisc per device holding the same bytes as our port (switch or host
//              buffer) over a two-packet device queue: the closest to SimPort's output queue.
//              (With one packet, the device queue would stop and wake, one more event, on
//              every packet; with two, only while a backlog waits in the queue disc.)
//   "default"  what ns-3 installs when asked for nothing: FqCoDelQueueDisc over a 100-packet
//              DropTail device queue.
// A frame is the UDP payload + 8 (UDP) + 20 (IPv4) + 2 (PPP) bytes, so the UDP payload here is
// frame - 30 (ours carries an IPv6 + Ethernet frame of the same total size). The device MTU is
// raised when the frame needs it, so nothing is fragmented.
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "emulator/ns3/bench/speed_bench.h"
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/data-rate.h"
#include "ns3/inet-socket-address.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-global-routing-helper.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/packet.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue-disc.h"
#include "ns3/queue-size.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/string.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/udp-socket-factory.h"
#include "ns3/uinteger.h"

namespace mrclab::emulator::bench {

namespace {

constexpr uint16_t kUdpPort = 4791;
constexpr uint32_t kStockHeaderBytes = 8 + 20 + 2;  // UDP, IPv4, PPP

// The stock network of one run and what its callbacks count.
struct StockNetwork {
  ns3::NodeContainer nodes;                      // lab node order
  std::map<std::string, ns3::Ptr<ns3::Node>> node_of;
  std::map<std::pair<std::string, int>, ns3::Ipv4Address> port_address;  // (host, plane)
  std::vector<ns3::Ptr<ns3::Socket>> sockets;    // kept open until the run ends
  std::vector<ns3::Ptr<ns3::PointToPointNetDevice>> devices;
  std::vector<ns3::Ptr<ns3::QueueDisc>> queue_discs;
  uint64_t packet_hops = 0;
  uint64_t delivered = 0;
  uint64_t ip_drops = 0;      // Ipv4L3Protocol "Drop" (no route, TTL expired, ...)
  uint64_t send_failures = 0;  // Socket::SendTo refused the datagram
};

void CountHop(uint64_t* hops, ns3::Ptr<const ns3::Packet>) { ++*hops; }

void CountIpDrop(uint64_t* drops, const ns3::Ipv4Header&, ns3::Ptr<const ns3::Packet>,
                 ns3::Ipv4L3Protocol::DropReason, ns3::Ptr<ns3::Ipv4>, uint32_t) {
  ++*drops;
}

void DrainSocket(uint64_t* delivered, ns3::Ptr<ns3::Socket> socket) {
  while (socket->Recv()) ++*delivered;
}

void CreateNodes(const ResolvedLab& lab, StockNetwork& net) {
  net.nodes.Create(static_cast<uint32_t>(lab.nodes.size()));
  for (size_t i = 0; i < lab.nodes.size(); ++i) net.node_of[lab.nodes[i].name] = net.nodes.Get(i);
}

void InstallInternet(StockNetwork& net) {
  ns3::Config::SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", ns3::BooleanValue(true));
  ns3::InternetStackHelper internet;
  internet.SetIpv6StackInstall(false);
  internet.Install(net.nodes);
  for (uint32_t i = 0; i < net.nodes.GetN(); ++i) {
    net.nodes.Get(i)->GetObject<ns3::Ipv4L3Protocol>()->TraceConnectWithoutContext(
        "Drop", ns3::MakeBoundCallback(&CountIpDrop, &net.ip_drops));
  }
}

ns3::PointToPointHelper LinkHelper(const BenchConfig& config) {
  ns3::PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", ns3::DataRateValue(ns3::DataRate(config.link_rate_bps)));
  p2p.SetDeviceAttribute("Mtu", ns3::UintegerValue(std::max<uint32_t>(
                                    1500, config.frame_bytes - 2)));  // IP packet = frame - PPP
  p2p.SetChannelAttribute("Delay", ns3::TimeValue(config.link_delay));
  if (config.stock_qdisc == "fifo") {
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns3::StringValue("2p"));
  }
  return p2p;
}

// The queue disc of a device: see the file comment. Installed before addresses are assigned
// (Ipv4AddressHelper installs ns-3's default on a device that has none).
ns3::Ptr<ns3::QueueDisc> InstallQueueDisc(ns3::Ptr<ns3::NetDevice> device, bool host_end,
                                          const BenchConfig& config) {
  if (config.stock_qdisc == "default") {
    return ns3::TrafficControlHelper::Default().Install(device).Get(0);
  }
  const uint64_t bytes = host_end ? config.host_buffer_bytes : config.switch_buffer_bytes;
  ns3::TrafficControlHelper tc;
  tc.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize",
                      ns3::QueueSizeValue(ns3::QueueSize(ns3::QueueSizeUnit::BYTES,
                                                         static_cast<uint32_t>(bytes))));
  return tc.Install(device).Get(0);
}

// Packets dropped by queue discs, device queues, IPv4 and sockets.
uint64_t Drops(const StockNetwork& net) {
  uint64_t drops = net.ip_drops + net.send_failures;
  for (const auto& qdisc : net.queue_discs) drops += qdisc->GetStats().nTotalDroppedPackets;
  for (const auto& device : net.devices) drops += device->GetQueue()->GetTotalDroppedPackets();
  return drops;
}

// One PointToPoint link per lab link, with its queue discs, addresses and hop counters.
void ConnectLinks(const ResolvedLab& lab, const BenchConfig& config, StockNetwork& net) {
  ns3::PointToPointHelper p2p = LinkHelper(config);
  ns3::Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.252");
  for (const ResolvedLink& link : lab.links) {
    const EndpointSpec* ends[2] = {&link.a, &link.b};
    ns3::NetDeviceContainer devices =
        p2p.Install(net.node_of.at(link.a.node), net.node_of.at(link.b.node));
    for (uint32_t e = 0; e < 2; ++e) {
      const bool host_end = lab.FindNode(ends[e]->node)->kind == NodeKind::kHost;
      net.queue_discs.push_back(InstallQueueDisc(devices.Get(e), host_end, config));
      net.devices.push_back(ns3::DynamicCast<ns3::PointToPointNetDevice>(devices.Get(e)));
      devices.Get(e)->TraceConnectWithoutContext(
          "PhyTxEnd", ns3::MakeBoundCallback(&CountHop, &net.packet_hops));
    }
    ns3::Ipv4InterfaceContainer assigned = addresses.Assign(devices);
    addresses.NewNetwork();
    for (uint32_t e = 0; e < 2; ++e) {
      if (lab.FindNode(ends[e]->node)->kind == NodeKind::kHost) {
        net.port_address[{ends[e]->node, link.plane}] = assigned.GetAddress(e);
      }
    }
  }
}

void OpenReceivers(const ResolvedLab& lab, StockNetwork& net) {
  for (const ResolvedNode* host : lab.Hosts()) {
    ns3::Ptr<ns3::Socket> socket = ns3::Socket::CreateSocket(
        net.node_of.at(host->name), ns3::UdpSocketFactory::GetTypeId());
    if (socket->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), kUdpPort)) != 0) {
      throw std::runtime_error("stock ns-3: cannot bind the receiver of " + host->name);
    }
    socket->SetRecvCallback(ns3::MakeBoundCallback(&DrainSocket, &net.delivered));
    net.sockets.push_back(socket);
  }
}

// A UDP socket on the host, bound to the address of its port in `port.plane`.
ns3::Ptr<ns3::Socket> OpenSender(const HostPort& port, StockNetwork& net) {
  ns3::Ptr<ns3::Socket> socket = ns3::Socket::CreateSocket(net.node_of.at(port.host),
                                                           ns3::UdpSocketFactory::GetTypeId());
  const ns3::Ipv4Address local = net.port_address.at({port.host, port.plane});
  if (socket->Bind(ns3::InetSocketAddress(local, 0)) != 0) {
    throw std::runtime_error("stock ns-3: cannot bind a sender of " + port.host);
  }
  net.sockets.push_back(socket);
  return socket;
}

// One pacer per host port, sending UDP datagrams that make `frame_bytes` frames to its peers.
std::vector<std::unique_ptr<Pacer>> MakePacers(const TrafficPlan& plan, const BenchConfig& config,
                                               StockNetwork& net) {
  const std::vector<HostPort>& ports = plan.Ports();
  const uint32_t payload = config.frame_bytes - kStockHeaderBytes;
  std::vector<std::unique_ptr<Pacer>> pacers;
  for (size_t i = 0; i < ports.size(); ++i) {
    ns3::Ptr<ns3::Socket> socket = OpenSender(ports[i], net);
    std::vector<ns3::InetSocketAddress> peers;
    for (int peer : plan.PeersOf(static_cast<int>(i))) {
      peers.emplace_back(net.port_address.at({ports[peer].host, ports[peer].plane}), kUdpPort);
    }
    auto send = [socket, payload, peers = std::move(peers), &net](int slot) {
      if (socket->SendTo(ns3::Create<ns3::Packet>(payload), 0, peers[slot]) < 0) {
        ++net.send_failures;
      }
    };
    pacers.push_back(std::make_unique<Pacer>(plan, static_cast<int>(i), std::move(send)));
  }
  return pacers;
}

}  // namespace

RunResult RunStockNs3(const ResolvedLab& lab, const TrafficPlan& plan,
                      const BenchConfig& config) {
  if (config.stock_qdisc != "fifo" && config.stock_qdisc != "default") {
    throw std::invalid_argument("stock queue disc must be fifo or default, not '" +
                                config.stock_qdisc + "'");
  }
  if (config.frame_bytes < kStockHeaderBytes || config.frame_bytes - 2 > 65535) {
    throw std::invalid_argument("stock frames must hold their UDP/IPv4/PPP headers and fit a "
                                "65535-byte MTU");
  }
  RunResult result;
  result.model = "stock ns-3 (" + config.stock_qdisc + ")";
  UseScheduler(config);

  const auto setup_start = std::chrono::steady_clock::now();
  StockNetwork net;
  CreateNodes(lab, net);
  InstallInternet(net);
  ConnectLinks(lab, config, net);
  ns3::Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  OpenReceivers(lab, net);
  std::vector<std::unique_ptr<Pacer>> pacers = MakePacers(plan, config, net);
  result.setup_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();

  for (auto& pacer : pacers) pacer->Start();
  result.wall_seconds = RunTimed(plan.Stop());
  result.simulated_ms = ns3::Simulator::Now().GetSeconds() * 1e3;
  result.packet_hops = net.packet_hops;
  result.delivered = net.delivered;
  result.dropped = Drops(net);
  result.events = ns3::Simulator::GetEventCount();
  for (const auto& pacer : pacers) result.offered += pacer->Offered();

  ns3::Simulator::Destroy();
  return result;
}

}  // namespace mrclab::emulator::bench
