// SimEndpoint: one host's MRC endpoint in the simulation: an unchanged mrc::Context whose clock
// is ns-3's, whose datagrams ride SimPackets over the host's NIC ports of a SimFabric, and
// whose timer is an ns-3 event. The ns-3 counterpart of mrc::AsioEndpoint.
//
//   SimFabric Receiver(host, plane) ─► Context::OnDatagram(now, payload, {plane, ecn_ce})
//                                      ─► progress hook (the workload polls its CQs) ─► Flush
//   Flush: Context::PollTransmit ─► EV route (plane, destination, UDP source port) ─► SimPacket
//          ─► the host's NIC port in that plane (SimFabric::Nic, looked up once); stops while
//          the NIC it just used is above half its buffer, and resumes from its OnTxSpace callback.
//          A NIC never drops what its own host sends: a packet that does not fit waits in the
//          port's backlog (and stops the flush) until the NIC has room.
//   timer: one ns-3 event at or before Context::NextTimeout ─► OnTimeout once it is due
//          (else re-armed at the deadline) ─► progress hook ─► Flush
//
// Sources: udp mode sends from the port's link address with the EV's UDP source port; srv6
// mode from the port's uSID address with source port 4791 to the EV's uSID container. The
// payload is the real datagram (RoCEv2 BTH ... ICRC). The Context elides the zeros of a virtual
// payload (ContextConfig::elide_zero_payload): they travel as the packet's zero run, not as
// bytes, and the receiving Context takes them back as such; its ICRC covers them all the same.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "emulator/ns3/model/sim_fabric.h"
#include "mrc/core/context.h"
#include "mrc/core/ev_route.h"
#include "mrc/core/flat_id_map.h"
#include "ns3/event-id.h"
#include "ns3/event-impl.h"
#include "ns3/ptr.h"

namespace mrclab::emulator::sim {

// The models' clock (SimNowSteps) as the core's Timestamp (nanoseconds since the simulation
// started).
mrc::Timestamp SimNow();
// The time step of a finite `at`, or the models' clock if `at` has passed: for SimDelayUntil.
int64_t SimStepsAt(mrc::Timestamp at);

struct SimEndpointStats {
  uint64_t rx_datagrams = 0, tx_datagrams = 0, unroutable = 0, timer_events = 0;
  uint64_t tx_waited = 0;  // datagrams that waited in a backlog for their NIC's room
};

class SimEndpoint {
 public:
  // `ports` are the host's NIC ports (one per plane), as HostPorts (harness/job/ev_plan.h)
  // gives them for `mode`. Registers a Receiver and an OnTxSpace callback for each.
  SimEndpoint(ns3::Ptr<SimFabric> fabric, std::string host, const std::vector<mrc::EndpointPort>& ports,
              mrc::EvMode mode, const mrc::ContextConfig& context);
  ~SimEndpoint();
  SimEndpoint(const SimEndpoint&) = delete;
  SimEndpoint& operator=(const SimEndpoint&) = delete;

  mrc::Context& context() { return context_; }
  // Routes of QP `qpn`: routes[i] serves EV i. Throws std::invalid_argument for a destination
  // that is not an IPv6 address or a plane the host has no port in.
  void SetRoutes(uint32_t qpn, const std::vector<mrc::EvRoute>& routes);
  // Called after every input or timer, before transmitting: the place to poll CQs.
  // `prefetch` is what fn will read for a datagram, prefetched in stages while earlier arrivals
  // run: prefetch.fn(self, stage) with stages 0, 1, ... up to PacketSink::kPrefetchStages - 2,
  // each later than the one before (a hint that changes nothing).
  struct ProgressPrefetch {
    void (*fn)(const void* self, int stage);
    const void* self;
  };
  void SetOnProgress(std::function<void()> fn, ProgressPrefetch prefetch = {nullptr, nullptr}) {
    on_progress_ = std::move(fn);
    progress_prefetch_ = prefetch;
  }
  // Transmits what the core has and re-arms the timer; call after posting work.
  void Kick();
  const SimEndpointStats& stats() const { return stats_; }

 private:
  struct alignas(64) Port {  // what a send reads on the first line, the backlog after it
    int plane = 0;
    Ipv6Address address{};
    SimPort* nic = nullptr;  // the fabric's port for this host and plane
    std::deque<SimPacket> backlog;  // sent by the core, waiting for room in the NIC
  };
  struct Route {  // 32 bytes: two to a line
    SimPort* nic = nullptr;  // ports_[port].nic, read without the Port's line
    Ipv6Address destination{};
    uint16_t src_port = 0;
    uint8_t port = 0;  // index in ports_
  };
  void OnReceive(int plane, SimPacket&& packet);
  // The fabric's ReceiverPrefetch: stage 0, this endpoint and the datagram's bytes; stage 1, the
  // QP the datagram is for (Context::Prefetch stage 0); stage 2, what the QP points at
  // (Context::Prefetch stage 1); from stage 1 on, the progress callback's stages and the send
  // path (PrefetchSends).
  static void Prefetch(const void* self, const SimPacket& packet, int stage);
  void OnTimer();
  // When the core's next timeout is due (infinite while it must wait for NIC room).
  mrc::Timestamp Deadline() const;
  // Arms the timer event at Deadline() unless one is armed as early.
  void ArmTimer();
  void Flush();
  // QP qpn's routes (by EV); empty when it has none. RoutesOf keeps the last two at hand.
  std::span<const Route> RoutesOf(uint32_t qpn);
  std::span<const Route> StoredRoutes(uint32_t qpn) const;  // from routes_, without the recent two
  // The routes of qpn without moving the recent two (empty when it has none).
  std::span<const Route> PeekRoutes(uint32_t qpn) const;
  // Prefetches what a send on `route` reads: its endpoint port's first line and its NIC.
  void PrefetchSendPath(const Route& route) const;
  // Prefetches, in stages 1 to 3, what the datagram's answer (an ACK, on the datagram's EV) and
  // the next data send (on the QP that sent data last, from its spraying cursor's EV) read.
  void PrefetchSends(std::span<const uint8_t> datagram, int stage) const;
  // Moves port's backlog into its NIC while it fits; true if the port can take more now
  // (backlog empty, NIC below half its buffer). Keeps the port's bit in unsure_ports_.
  bool Drain(size_t index);
  Port* PortOf(int plane);

  // Read at setup, or when a port may be full, or for a QP not among the recent two.
  std::string host_;
  mrc::EvMode mode_;
  mrc::FlatIdMap<std::vector<Route>> routes_;  // by QPN
  // What a datagram's way through reads, from the Context's hot part (Context::HotBegin) to the
  // end: Prefetch asks for that span.
  mrc::Context context_;
  std::vector<Port> ports_;  // filled once by the constructor (Routes name them by index)
  // The QP of the last data packet sent (0: none yet): a ring's host sends its data on one
  // QP, whatever the datagram that makes it send next was for.
  uint32_t data_qpn_ = 0;
  ns3::Ptr<SimFabric> fabric_;
  std::function<void()> on_progress_;
  ProgressPrefetch progress_prefetch_{nullptr, nullptr};
  ns3::EventId timer_;
  ns3::Ptr<ns3::EventImpl> timer_event_;  // what timer_ runs, reused until it is cancelled
  mrc::Timestamp armed_at_ = mrc::Timestamp::Infinite();
  bool flushing_ = false;
  bool blocked_ = false;  // the last Flush stopped at a full NIC: its OnTxSpace resumes it
  // A bit per port (by index in ports_) that may not have room: it has a backlog, or its NIC was
  // at half its buffer or more when last looked at. A NIC only fills when this endpoint enqueues
  // (it is the only sender), so a port without its bit has room and an empty backlog: Flush
  // skips it without touching the NIC (most Flushes, after every datagram received, look at no
  // port at all), and sends into it without reading the backlog.
  uint32_t unsure_ports_ = 0;
  // The routes of the last two QPs that sent (a ring's host sends its data on one QP and its
  // ACKs on another), most recent first: found without a probe of routes_, a cold line at
  // thousands of hosts. Cleared by SetRoutes (routes_ may move its vectors).
  struct RecentRoutes {
    uint32_t qpn = 0;
    std::span<const Route> routes;
  };
  std::array<RecentRoutes, 2> recent_routes_{};
  SimEndpointStats stats_;
};

}  // namespace mrclab::emulator::sim
