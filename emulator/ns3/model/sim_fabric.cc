#include "emulator/ns3/model/sim_fabric.h"

#include <algorithm>
#include <stdexcept>

#include "emulator/ns3/model/bucket_scheduler.h"
#include "emulator/ns3/model/ecmp_hash.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace mrclab::emulator::sim {

// Registered at start-up, so that --PrintAttributes and --TypeName::Attribute=value on an ns-3
// command line know the type before the first fabric is made.
NS_OBJECT_ENSURE_REGISTERED(SimFabric);

namespace {

// Loss draws of port i use ns-3 RNG stream Seed * kStreamsPerSeed + i: independent per port
// and per Seed (a plan has fewer than 2^31 ports; seeds are 32-bit).
constexpr int64_t kStreamsPerSeed = int64_t{1} << 31;

// One more fault in force (up == false) or one fewer; a `true` with none in force does nothing.
void CountFault(int& faults, bool up) {
  if (!up) {
    ++faults;
  } else if (faults > 0) {
    --faults;
  }
}

}  // namespace

// The far end of a host link: hands what the leaf delivers to the host's Receiver.
class SimFabric::HostPort : public PacketSink {
 public:
  void Receive(SimPacket&& packet) override {
    if (receiver) receiver(std::move(packet));
  }
  void Prefetch(const SimPacket& packet, int stage) const override {
    if (prefetch.fn != nullptr) prefetch.fn(prefetch.self, packet, stage);
  }

  SimPort* nic = nullptr;
  Receiver receiver;
  ReceiverPrefetch prefetch{nullptr, nullptr};
};

ns3::TypeId SimFabric::GetTypeId() {
  static ns3::TypeId tid =
      ns3::TypeId("mrclab::emulator::sim::SimFabric")
          .SetParent<ns3::Object>()
          .SetGroupName("Mrclab")
          .AddConstructor<SimFabric>()
          .AddAttribute("LinkRate", "Rate of every link when the lab sets no link_rate.",
                        ns3::DataRateValue(ns3::DataRate("100Gbps")),
                        ns3::MakeDataRateAccessor(&SimFabric::link_rate_),
                        ns3::MakeDataRateChecker())
          .AddAttribute("LinkDelay", "Propagation delay of every link.",
                        ns3::TimeValue(ns3::MicroSeconds(1)),
                        ns3::MakeTimeAccessor(&SimFabric::link_delay_), ns3::MakeTimeChecker())
          .AddAttribute("PortBufferBytes", "Output buffer of every switch port, in bytes.",
                        ns3::UintegerValue(1 << 20),
                        ns3::MakeUintegerAccessor(&SimFabric::port_buffer_bytes_),
                        ns3::MakeUintegerChecker<uint64_t>(1))
          .AddAttribute("EcnThresholdBytes",
                        "A switch port marks CE on ECN-capable packets that find more than "
                        "this many bytes queued.",
                        ns3::UintegerValue(100'000),
                        ns3::MakeUintegerAccessor(&SimFabric::ecn_threshold_bytes_),
                        ns3::MakeUintegerChecker<uint64_t>())
          .AddAttribute("HostBufferBytes", "Transmit buffer of every host NIC port, in bytes.",
                        ns3::UintegerValue(1 << 18),
                        ns3::MakeUintegerAccessor(&SimFabric::host_buffer_bytes_),
                        ns3::MakeUintegerChecker<uint64_t>(1))
          .AddAttribute("RoutingReactionTime",
                        "bgp labs: delay from a link or switch state change to every switch "
                        "recomputing its routes.",
                        ns3::TimeValue(ns3::MilliSeconds(200)),
                        ns3::MakeTimeAccessor(&SimFabric::routing_reaction_time_),
                        ns3::MakeTimeChecker(ns3::Time(0)))
          .AddAttribute("Seed", "Seeds the ECMP hash of every switch and the loss draws.",
                        ns3::UintegerValue(1), ns3::MakeUintegerAccessor(&SimFabric::seed_),
                        ns3::MakeUintegerChecker<uint32_t>());
  return tid;
}

SimFabric::SimFabric() = default;
SimFabric::~SimFabric() = default;

void SimFabric::DoDispose() {
  // Callbacks may hold references back to their owners; drop them with the fabric.
  for (auto& host_port : host_ports_) {
    host_port->receiver = nullptr;
    host_port->nic->SetOnTxSpace(nullptr);
  }
  ns3::Object::DoDispose();
}

void SimFabric::Build(const emulator::ResolvedLab& lab) {
  if (built_) throw std::logic_error("SimFabric::Build called twice");
  built_ = true;
  routing_ = lab.routing;
  default_rate_bps_ = lab.link_rate_bps.value_or(link_rate_.GetBitRate());
  if (lab.link_delay_ns) link_delay_ = ns3::NanoSeconds(static_cast<int64_t>(*lab.link_delay_ns));
  // Arrival buckets about as wide as a 1 KiB frame takes on the links.
  arrivals_.SetBucketWidth(ns3::Seconds(1).GetTimeStep() * 8 * 1024 /
                           std::max<int64_t>(1, static_cast<int64_t>(default_rate_bps_)));

  // Node name -> switch index, or host port per plane.
  for (const emulator::ResolvedNode& node : lab.nodes) {
    if (node.kind == NodeKind::kSwitch) {
      switch_index_.emplace(node.name, static_cast<int>(switches_.size()));
      switches_.push_back(
          std::make_unique<UsidSwitch>(node.name, SwitchHashSeed(node.name, seed_)));
      topology_.switches.push_back({node.plane, node.asn, node.usid});
      continue;
    }
    std::vector<HostPort*>& by_plane = host_ports_by_name_[node.name];
    by_plane.assign(lab.planes, nullptr);
    for (const emulator::ResolvedNode::Port& port : node.ports) {
      by_plane.at(port.plane) = host_ports_.emplace_back(std::make_unique<HostPort>()).get();
    }
  }
  links_of_switch_.resize(switches_.size());
  switch_down_faults_.assign(switches_.size(), 0);
  plane_down_faults_.assign(lab.planes, 0);
  links_.resize(lab.links.size());

  for (const emulator::ResolvedLink& link : lab.links) {
    RouteTopology::Link& routed = topology_.links.emplace_back();
    routed.plane = link.plane;
    const emulator::EndpointSpec* ends[2] = {&link.a, &link.b};
    int end_switch[2];
    PacketSink* end_sink[2];
    for (int e = 0; e < 2; ++e) {
      auto it = switch_index_.find(ends[e]->node);
      end_switch[e] = it == switch_index_.end() ? -1 : it->second;
      if (end_switch[e] >= 0) {
        end_sink[e] = switches_[end_switch[e]].get();
        links_of_switch_[end_switch[e]].push_back(link.index);
      } else {
        end_sink[e] = &HostPortOf(ends[e]->node, link.plane);
        for (const emulator::ResolvedNode::Port& p : lab.FindNode(ends[e]->node)->ports) {
          if (p.plane == link.plane) routed.host_usid = p.usid;
        }
        routed.host_usid_leaf_local = lab.host_usids_leaf_local;
      }
    }
    routed.a_switch = end_switch[0];
    routed.b_switch = end_switch[1];
    for (int e = 0; e < 2; ++e) {
      const bool from_host = end_switch[e] < 0;
      PortConfig config;
      config.rate_bps = default_rate_bps_;
      config.delay = link_delay_;
      config.buffer_bytes = from_host ? host_buffer_bytes_ : port_buffer_bytes_;
      config.ecn_threshold_bytes = from_host ? kNeverMark : ecn_threshold_bytes_;
      config.loss_stream = int64_t{seed_} * kStreamsPerSeed + static_cast<int64_t>(ports_.size());
      config.arrivals = &arrivals_;
      SimPort* port = ports_.emplace_back(std::make_unique<SimPort>(config, end_sink[1 - e])).get();
      if (from_host) {
        HostPortOf(ends[e]->node, link.plane).nic = port;
      } else {
        (e == 0 ? routed.a_port : routed.b_port) = switches_[end_switch[e]]->AddEgressPort(port);
      }
    }
  }
  InstallFibs();
}

void SimFabric::InstallFibs() {
  std::vector<Fib> fibs = ComputeFibs(
      topology_, routing_ == Routing::kBgp ? RouteMode::kBgp : RouteMode::kShortestPath);
  for (size_t s = 0; s < switches_.size(); ++s) switches_[s]->SetFib(std::move(fibs[s]));
}

SimPort& SimFabric::PortOf(int link, bool a_end) const {
  CheckedLink(link);
  return *ports_[2 * static_cast<size_t>(link) + (a_end ? 0 : 1)];
}

SimFabric::HostPort& SimFabric::HostPortOf(const std::string& host, int plane) const {
  auto it = host_ports_by_name_.find(host);
  if (it == host_ports_by_name_.end()) throw std::out_of_range("no host '" + host + "'");
  if (plane < 0 || static_cast<size_t>(plane) >= it->second.size() ||
      it->second[plane] == nullptr) {
    throw std::out_of_range("host '" + host + "' has no port in plane " + std::to_string(plane));
  }
  return *it->second[plane];
}

const SimFabric::LinkState& SimFabric::CheckedLink(int link) const {
  if (link < 0 || static_cast<size_t>(link) >= links_.size()) {
    throw std::out_of_range("no link " + std::to_string(link));
  }
  return links_[link];
}

int SimFabric::SwitchIndex(const std::string& name) const {
  auto it = switch_index_.find(name);
  if (it == switch_index_.end()) throw std::out_of_range("no switch '" + name + "'");
  return it->second;
}

void SimFabric::SetReceiver(const std::string& host, int plane, Receiver receiver, ReceiverPrefetch prefetch) {
  HostPort& port = HostPortOf(host, plane);
  port.receiver = std::move(receiver);
  port.prefetch = port.receiver ? prefetch : ReceiverPrefetch{nullptr, nullptr};
}

bool SimFabric::Send(const std::string& host, int plane, SimPacket packet) {
  return HostPortOf(host, plane).nic->Enqueue(std::move(packet)) != EnqueueResult::kQueueDrop;
}

SimPort& SimFabric::Nic(const std::string& host, int plane) const { return *HostPortOf(host, plane).nic; }

uint64_t SimFabric::QueuedBytes(const std::string& host, int plane) const {
  return HostPortOf(host, plane).nic->QueuedBytes();
}

void SimFabric::SetOnTxSpace(const std::string& host, int plane, std::function<void()> callback) {
  HostPortOf(host, plane).nic->SetOnTxSpace(std::move(callback));
}

bool SimFabric::LinkShouldBeUp(int link) const {
  const RouteTopology::Link& l = topology_.links[link];
  if (links_[link].down_faults > 0) return false;
  for (int sw : {l.a_switch, l.b_switch}) {
    if (sw >= 0 && switch_down_faults_[sw] > 0) return false;
  }
  const bool host_link = l.a_switch < 0 || l.b_switch < 0;
  return !(host_link && plane_down_faults_[l.plane] > 0);
}

bool SimFabric::ApplyLinkState(int link) {
  LinkState& state = links_[link];
  const bool up = LinkShouldBeUp(link);
  if (up == state.up) return false;
  state.up = up;
  ports_[2 * static_cast<size_t>(link)]->SetUp(up);
  ports_[2 * static_cast<size_t>(link) + 1]->SetUp(up);
  topology_.links[link].up = up;
  return true;
}

void SimFabric::RoutingChanged() {
  if (routing_ != Routing::kBgp) return;
  ns3::Simulator::Schedule(SimDelayUntil(SimNowSteps() + routing_reaction_time_.GetTimeStep()), &SimFabric::RecomputeRoutes,
                           this);
}

void SimFabric::RecomputeRoutes() {
  ++recomputations_;
  InstallFibs();
}

void SimFabric::SetLinkUp(int link, bool up) {
  CheckedLink(link);
  CountFault(links_[link].down_faults, up);
  if (ApplyLinkState(link)) RoutingChanged();
}

void SimFabric::SetBlackhole(int link, bool a_to_b, bool b_to_a) {
  PortOf(link, true).SetBlackhole(a_to_b);
  PortOf(link, false).SetBlackhole(b_to_a);
  RouteTopology::Link& routed = topology_.links[link];
  const bool fabric = routed.a_switch >= 0 && routed.b_switch >= 0;
  const bool carries = !(a_to_b || b_to_a);
  if (fabric && carries != routed.carries_routes) {
    routed.carries_routes = carries;
    RoutingChanged();
  }
}

void SimFabric::SetLoss(int link, double a_to_b, double b_to_a) {
  CheckedLink(link);
  for (double rate : {a_to_b, b_to_a})
    if (!(rate >= 0 && rate <= 1)) throw std::invalid_argument("a loss rate is within [0, 1]");
  PortOf(link, true).SetLossRate(a_to_b);
  PortOf(link, false).SetLossRate(b_to_a);
}

void SimFabric::SetLinkRate(int link, uint64_t bps) {
  const uint64_t rate = bps == 0 ? default_rate_bps_ : bps;
  PortOf(link, true).SetRate(rate);
  PortOf(link, false).SetRate(rate);
}

void SimFabric::SetSwitchUp(const std::string& name, bool up) {
  const int sw = SwitchIndex(name);
  CountFault(switch_down_faults_[sw], up);
  bool changed = false;
  for (int link : links_of_switch_[sw]) changed |= ApplyLinkState(link);
  if (changed) RoutingChanged();
}

void SimFabric::SetPlaneHostLinksUp(int plane, bool up) {
  if (plane < 0 || static_cast<size_t>(plane) >= plane_down_faults_.size()) {
    throw std::out_of_range("no plane " + std::to_string(plane));
  }
  CountFault(plane_down_faults_[plane], up);
  bool changed = false;
  for (size_t link = 0; link < links_.size(); ++link) {
    const RouteTopology::Link& l = topology_.links[link];
    if (l.plane == plane && (l.a_switch < 0 || l.b_switch < 0)) {
      changed |= ApplyLinkState(static_cast<int>(link));
    }
  }
  if (changed) RoutingChanged();
}

PortCounters SimFabric::Counters(int link, bool a_end) const {
  return PortOf(link, a_end).Counters();
}

SwitchCounters SimFabric::CountersOfSwitch(const std::string& name) const {
  return switches_[SwitchIndex(name)]->Counters();
}

bool SimFabric::LinkUp(int link) const { return CheckedLink(link).up; }

uint64_t SimFabric::PacketHops() const {
  uint64_t hops = 0;
  for (const auto& port : ports_) hops += port->Counters().tx_packets;
  return hops;
}

}  // namespace mrclab::emulator::sim
