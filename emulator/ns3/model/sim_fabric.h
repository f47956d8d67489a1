// SimFabric: a whole lab (emulator::ResolvedLab) as simulated links and switches on the ns-3
// scheduler: one UsidSwitch per switch node, two SimPorts per link (a->b transmitted by
// endpoint a, b->a by endpoint b), and for every host port a NIC (the host's port on its host
// link) and a Receiver.
//
//   host ─Send─► NIC port ─► leaf ─► spine ─► leaf ─► port ─► Receiver(host, plane)
//                 (HostBufferBytes)   (PortBufferBytes, ECN above EcnThresholdBytes)
//
// Contract:
//   - Build() once, before Simulator::Run(). Every knob is an ns-3 attribute (GetTypeId); an
//     attribute is read when Build() runs, except RoutingReactionTime, read at each fault.
//     Links run at the lab's link_rate, else at LinkRate. NICs never mark ECN.
//   - Routes (fabric_routes.h) are computed at Build() from the topology for every destination
//     of the plan, whatever the lab's routing mode. A switch skips its down ports at once. In a
//     `routing: bgp` lab every change of a link's state (down or up, by any fault, and a
//     blackhole set on or cleared from a fabric link: BFD detects it and takes the BGP session
//     down) makes every switch recompute its FIB, RoutingReactionTime later, from the state at
//     that time; until then a link that came back up carries only its connected routes. In a
//     `routing: static` lab remote switches never react.
//   - Randomness: the ECMP hash of a switch is seeded from its name and Seed; the loss draws of
//     port i (2 * link for a->b, 2 * link + 1 for b->a) use ns-3 RNG stream Seed * 2^24 + i, so
//     a run is reproducible from Seed and ns-3's global seed and run number.
//   - Faults apply at Simulator::Now() and each can be reverted. Down faults nest: a link is
//     down while any of SetLinkUp(link, false), SetSwitchUp(either end, false) or (host links)
//     SetPlaneHostLinksUp(its plane, false) is in force. Each `false` call is one fault in
//     force; each `true` call reverts one (a `true` with none in force does nothing). Blackhole,
//     loss and rate are states: the last call wins (the ns-3 backend composes overlapping
//     faults into them).
//   - A host receives every packet delivered on its port (whatever the destination); without
//     a Receiver the packet is discarded after being counted.
//   - Hosts, planes, links and switches that the lab lacks are std::out_of_range errors.
//   - Events refer to the fabric's ports and switches: keep the fabric alive until
//     Simulator::Run() has returned; Simulator::Destroy() frees the remaining events.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "emulator/ns3/model/arrival_queue.h"
#include "emulator/ns3/model/fabric_routes.h"
#include "emulator/ns3/model/payload_pool.h"
#include "emulator/ns3/model/sim_packet.h"
#include "emulator/ns3/model/sim_port.h"
#include "emulator/ns3/model/usid_switch.h"
#include "emulator/resolved_lab.h"
#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

namespace mrclab::emulator::sim {

class SimFabric : public ns3::Object {
 public:
  using Receiver = std::function<void(SimPacket&&)>;
  // What a Receiver will read first for a packet, prefetched in stages while earlier arrivals
  // run (as PacketSink::Prefetch: stage 0 kPrefetchStages arrivals ahead, ..., the last one
  // ahead); a hint that changes nothing. fn(self, packet, stage).
  struct ReceiverPrefetch {
    void (*fn)(const void* self, const SimPacket& packet, int stage);
    const void* self;
  };

  // Attributes: LinkRate, LinkDelay, PortBufferBytes, EcnThresholdBytes, HostBufferBytes,
  // RoutingReactionTime, Seed.
  static ns3::TypeId GetTypeId();
  SimFabric();
  ~SimFabric() override;

  // Builds switches, ports and FIBs for `lab`. Throws std::logic_error when called twice.
  void Build(const emulator::ResolvedLab& lab);

  // --- Hosts --------------------------------------------------------------------------------
  // Sets who receives the packets delivered to `host`'s port in `plane`. A Receiver runs inside
  // the arrival queue's event: it reads the time with SimNowSteps() and schedules with
  // SimDelayUntil() (bucket_scheduler.h), not from Simulator::Now().
  void SetReceiver(const std::string& host, int plane, Receiver receiver, ReceiverPrefetch prefetch = {nullptr, nullptr});
  // Queues a packet on the host's NIC in `plane`. False (counted as a queue drop) when the NIC
  // buffer cannot take it; a down NIC takes the packet and drops it (a fault drop).
  bool Send(const std::string& host, int plane, SimPacket packet);
  // The host's NIC port in `plane` (valid as long as the fabric): what Send and QueuedBytes
  // use, for a sender that does not want a name lookup per packet.
  SimPort& Nic(const std::string& host, int plane) const;
  // Bytes queued on the host's NIC in `plane` and not yet serialised.
  uint64_t QueuedBytes(const std::string& host, int plane) const;
  // Called when the NIC's queue, having reached half its buffer, falls below half again, so an
  // endpoint can pull more from its transport (the callback may call Send).
  void SetOnTxSpace(const std::string& host, int plane, std::function<void()> callback);
  // Where hosts take their packets' payload buffers (one pool per fabric).
  PayloadPool& Payloads() { return payloads_; }

  // --- Faults -------------------------------------------------------------------------------
  // Takes a link down (one more fault in force) or reverts one such fault.
  void SetLinkUp(int link, bool up);
  // Drops at b's ingress what a sends (a_to_b) and at a's what b sends (b_to_a); false, false
  // clears. The link stays up.
  void SetBlackhole(int link, bool a_to_b, bool b_to_a);
  // Bernoulli loss at the receiving ingress, at a rate per direction (0: none). Throws
  // std::invalid_argument unless both are within [0, 1].
  void SetLoss(int link, double a_to_b, double b_to_a);
  // Sets both directions' rate in bits per second; 0 restores the default rate.
  void SetLinkRate(int link, uint64_t bps);
  // Takes every link of a switch down (dropping what they hold), or reverts that.
  void SetSwitchUp(const std::string& name, bool up);
  // Takes every host link of a plane down, or reverts that.
  void SetPlaneHostLinksUp(int plane, bool up);

  // --- Reading ------------------------------------------------------------------------------
  // Counters of the port endpoint a (a_end) or endpoint b of `link` transmits on.
  PortCounters Counters(int link, bool a_end) const;
  // Counters of a switch.
  SwitchCounters CountersOfSwitch(const std::string& name) const;
  // Whether `link` is up (no down fault in force).
  bool LinkUp(int link) const;
  // Packets serialised on any port since Build (the cost unit of a simulation).
  uint64_t PacketHops() const;
  // Number of FIB recomputations done so far (bgp labs), Build's excluded.
  uint64_t RouteRecomputations() const { return recomputations_; }

 protected:
  // Drops the hosts' Receivers and OnTxSpace callbacks (they may hold references to their
  // owners), then disposes the Object.
  void DoDispose() override;

 private:
  class HostPort;
  struct LinkState {
    int down_faults = 0;  // SetLinkUp(link, false) calls in force
    bool up = true;
  };

  SimPort& PortOf(int link, bool a_end) const;
  HostPort& HostPortOf(const std::string& host, int plane) const;
  const LinkState& CheckedLink(int link) const;
  int SwitchIndex(const std::string& name) const;
  bool LinkShouldBeUp(int link) const;
  // Brings the link's ports to the state its faults ask for; true if it changed.
  bool ApplyLinkState(int link);
  // In bgp labs: recompute every FIB RoutingReactionTime from now.
  void RoutingChanged();
  void RecomputeRoutes();
  void InstallFibs();

  // Attributes.
  ns3::DataRate link_rate_;
  ns3::Time link_delay_;
  uint64_t port_buffer_bytes_ = 0;
  uint64_t ecn_threshold_bytes_ = 0;
  uint64_t host_buffer_bytes_ = 0;
  ns3::Time routing_reaction_time_;
  uint32_t seed_ = 0;

  bool built_ = false;
  Routing routing_ = Routing::kBgp;
  uint64_t default_rate_bps_ = 0;
  std::vector<std::unique_ptr<UsidSwitch>> switches_;
  std::unordered_map<std::string, int> switch_index_;
  std::vector<std::unique_ptr<HostPort>> host_ports_;
  std::unordered_map<std::string, std::vector<HostPort*>> host_ports_by_name_;  // [plane]
  PayloadPool payloads_;   // the hosts' packets' payloads (declared before ports_: outlives them)
  ArrivalQueue arrivals_;  // every port's deliveries (declared before ports_: outlives them)
  std::vector<std::unique_ptr<SimPort>> ports_;  // [2 * link] a->b, [2 * link + 1] b->a
  std::vector<LinkState> links_;
  std::vector<std::vector<int>> links_of_switch_;
  std::vector<int> switch_down_faults_;
  std::vector<int> plane_down_faults_;
  RouteTopology topology_;
  uint64_t recomputations_ = 0;
};

}  // namespace mrclab::emulator::sim
