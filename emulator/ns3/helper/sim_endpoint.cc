#include "emulator/ns3/helper/sim_endpoint.h"

#include <optional>
#include <stdexcept>

#include "emulator/ns3/model/bucket_scheduler.h"
#include "mrc/core/prefetch.h"
#include "mrc/core/wire.h"
#include "ns3/make-event.h"
#include "ns3/simulator.h"

namespace mrclab::emulator::sim {
namespace {

constexpr size_t kBufferBytes = 16384;  // larger than any MTU the job uses

// A simulation runs on one thread, one event at a time, and an endpoint is done with its send
// buffer before it returns: every endpoint builds its datagrams in the same buffer, which stays
// in cache (one per endpoint was 16 KiB of cold memory per host).
std::span<uint8_t> SendBuffer() {
  thread_local std::vector<uint8_t> buffer(kBufferBytes);
  return buffer;
}

mrc::ContextConfig Eliding(mrc::ContextConfig config) {
  config.elide_zero_payload = true;
  return config;
}

}  // namespace

mrc::Timestamp SimNow() { return mrc::Timestamp::FromNanoseconds(ns3::TimeStep(SimNowSteps()).GetNanoSeconds()); }

int64_t SimStepsAt(mrc::Timestamp at) {
  return std::max(SimNowSteps(), ns3::NanoSeconds(at.nanoseconds()).GetTimeStep());
}

SimEndpoint::SimEndpoint(ns3::Ptr<SimFabric> fabric, std::string host, const std::vector<mrc::EndpointPort>& ports,
                         mrc::EvMode mode, const mrc::ContextConfig& context)
    : host_(std::move(host)), mode_(mode), context_(Eliding(context)), fabric_(std::move(fabric)) {
  if (ports.size() > 32) throw std::invalid_argument(host_ + " has more than 32 NIC ports");
  for (const auto& p : ports) {
    ports_.push_back({p.plane, ParseIpv6Address(p.local_address), &fabric_->Nic(host_, p.plane), {}});
    const int plane = p.plane;
    fabric_->SetReceiver(host_, plane, [this, plane](SimPacket&& packet) { OnReceive(plane, std::move(packet)); },
                         {&SimEndpoint::Prefetch, this});
    fabric_->SetOnTxSpace(host_, plane, [this] { Flush(); });
  }
}

SimEndpoint::~SimEndpoint() {
  ns3::Simulator::Cancel(timer_);
  for (const Port& p : ports_) {
    fabric_->SetReceiver(host_, p.plane, nullptr);
    fabric_->SetOnTxSpace(host_, p.plane, nullptr);
  }
}

SimEndpoint::Port* SimEndpoint::PortOf(int plane) {
  for (Port& p : ports_)
    if (p.plane == plane) return &p;
  return nullptr;
}

void SimEndpoint::SetRoutes(uint32_t qpn, const std::vector<mrc::EvRoute>& routes) {
  std::vector<Route> out;
  for (const auto& r : routes) {
    Port* port = PortOf(r.plane);
    if (!port) throw std::invalid_argument(host_ + " has no port in plane " + std::to_string(r.plane));
    out.push_back({port->nic, ParseIpv6Address(r.destination),
                   mode_ == mrc::EvMode::kUdp ? r.udp_source_port : kRoceV2Port,
                   static_cast<uint8_t>(port - ports_.data())});
  }
  routes_.Put(qpn, std::move(out));
  recent_routes_ = {};
}

void SimEndpoint::OnReceive(int plane, SimPacket&& packet) {
  if (!packet.payload) return;  // virtual payload: not for a transport endpoint
  ++stats_.rx_datagrams;
  context_.OnDatagram(SimNow(), *packet.payload,
                      mrc::DatagramInfo{plane, packet.ecn_ce, {packet.zero_run_at, packet.zero_run_bytes}});
  if (on_progress_) on_progress_();
  Kick();
}

void SimEndpoint::Prefetch(const void* self, const SimPacket& packet, int stage) {
  static_assert(1 + mrc::Context::kPrefetchStages <= PacketSink::kPrefetchStages);
  const auto* endpoint = static_cast<const SimEndpoint*>(self);
  if (!packet.payload) return;
  if (stage == 0) {
    // What a datagram's way through reads: the Context's recent QPs, scheduler, memory
    // registry and events, the progress hook, the timer, the recent routes, the stats.
    mrc::PrefetchSpan(endpoint->context_.HotBegin(), endpoint + 1);
    mrc::PrefetchBytes(packet.payload.get(), 2 * mrc::kCacheLineBytes);
    return;
  }
  const std::span<const uint8_t> datagram = *packet.payload;
  if (stage - 1 < mrc::Context::kPrefetchStages) endpoint->context_.Prefetch(datagram, stage - 1);
  if (endpoint->progress_prefetch_.fn) endpoint->progress_prefetch_.fn(endpoint->progress_prefetch_.self, stage - 1);
  endpoint->PrefetchSends(datagram, stage);
}

std::span<const SimEndpoint::Route> SimEndpoint::PeekRoutes(uint32_t qpn) const {
  for (const RecentRoutes& recent : recent_routes_)
    if (recent.qpn == qpn && !recent.routes.empty()) return recent.routes;  // without a probe of routes_
  return StoredRoutes(qpn);
}

void SimEndpoint::PrefetchSendPath(const Route& route) const {
  mrc::PrefetchLine(&ports_[route.port]);
  route.nic->Prefetch();
}

void SimEndpoint::PrefetchSends(std::span<const uint8_t> datagram, int stage) const {
  const std::optional<uint32_t> qpn = mrc::PeekDestQp(datagram);
  if (!qpn) return;
  // The answer: an ACK leaves on the route of the EV the data came by (MakeEvProfile's EV ids
  // are their indexes); an ACK itself is not answered. One route's line, then its path.
  if (!mrc::IsAck(mrc::PeekOpcode(datagram)) && stage <= 2) {
    const std::span<const Route> routes = PeekRoutes(*qpn);
    if (const std::optional<uint16_t> ev = mrc::PeekEv(datagram); ev && *ev < routes.size())
      stage == 1 ? mrc::PrefetchLine(&routes[*ev]) : PrefetchSendPath(routes[*ev]);
  }
  // The next data packet: the sending QP's lines (unless the datagram is for it: the Context
  // asks for those), then the route its spraying cursor points at and that QP's state for a
  // send, then that route's path.
  if (data_qpn_ == 0) return;
  const mrc::Qp* sender = context_.PeekQp(data_qpn_);
  if (sender == nullptr) return;
  if (stage == 1) {
    if (data_qpn_ != *qpn) sender->Prefetch();
    return;
  }
  const std::span<const Route> routes = PeekRoutes(data_qpn_);
  const uint16_t ev = sender->NextEvHint();
  if (ev >= routes.size()) return;
  if (stage == 2) {
    mrc::PrefetchLine(&routes[ev]);
    if (data_qpn_ != *qpn) sender->PrefetchState(ev, true);
  } else if (stage == 3) {
    PrefetchSendPath(routes[ev]);
  }
}

void SimEndpoint::OnTimer() {
  armed_at_ = mrc::Timestamp::Infinite();
  if (Deadline() > SimNow()) return ArmTimer();  // the deadline moved on since this was armed
  ++stats_.timer_events;
  context_.OnTimeout(SimNow());
  if (on_progress_) on_progress_();
  Kick();
}

void SimEndpoint::Kick() {
  Flush();
  ArmTimer();
}

mrc::Timestamp SimEndpoint::Deadline() const {
  const mrc::Timestamp next = context_.NextTimeout();
  // A deadline that has passed wants a packet out (an ACK, a retransmission); while the NICs
  // are full it waits for their OnTxSpace, which flushes and re-arms, instead of firing again
  // at this same instant.
  return blocked_ && next <= SimNow() ? mrc::Timestamp::Infinite() : next;
}

void SimEndpoint::ArmTimer() {
  const mrc::Timestamp next = Deadline();
  // A later deadline keeps the event that is armed: when it fires it finds the deadline ahead
  // and re-arms for it (most progress pushes the deadline on; an ns-3 event cancelled and
  // scheduled again after every datagram was a third of all events).
  if (next >= armed_at_) return;
  if (!armed_at_.IsInfinite()) {
    ns3::Simulator::Cancel(timer_);
    timer_event_ = nullptr;  // a cancelled ns-3 event stays cancelled
  }
  armed_at_ = next;
  if (next.IsInfinite()) return;
  // One ns-3 event, scheduled again and again while it is not cancelled (an event made afresh
  // is an allocation).
  if (!timer_event_) timer_event_ = ns3::Ptr<ns3::EventImpl>(ns3::MakeEvent(&SimEndpoint::OnTimer, this), false);
  timer_ = ns3::Simulator::Schedule(SimDelayUntil(SimStepsAt(next)), timer_event_);
}

bool SimEndpoint::Drain(size_t index) {
  Port& port = ports_[index];
  SimPort& nic = *port.nic;
  while (!port.backlog.empty() && nic.QueuedBytes() + port.backlog.front().WireBytes() <= nic.BufferBytes()) {
    nic.Enqueue(std::move(port.backlog.front()));
    port.backlog.pop_front();
  }
  const bool room = port.backlog.empty() && 2 * nic.QueuedBytes() < nic.BufferBytes();
  const uint32_t bit = uint32_t{1} << index;
  unsure_ports_ = room ? unsure_ports_ & ~bit : unsure_ports_ | bit;
  return room;
}

std::span<const SimEndpoint::Route> SimEndpoint::RoutesOf(uint32_t qpn) {
  RecentRoutes& last = recent_routes_[0];
  if (last.qpn == qpn && !last.routes.empty()) return last.routes;
  std::swap(recent_routes_[0], recent_routes_[1]);
  if (last.qpn == qpn && !last.routes.empty()) return last.routes;
  const std::span<const Route> routes = StoredRoutes(qpn);
  if (!routes.empty()) last = {qpn, routes};
  return routes;
}

std::span<const SimEndpoint::Route> SimEndpoint::StoredRoutes(uint32_t qpn) const {
  const std::vector<Route>* routes = routes_.Find(qpn);
  return routes ? std::span<const Route>(*routes) : std::span<const Route>();
}

void SimEndpoint::Flush() {
  if (flushing_) return;  // Send may call OnTxSpace synchronously
  flushing_ = true;
  bool room = true;
  for (uint32_t unsure = unsure_ports_; unsure != 0; unsure &= unsure - 1)
    room = Drain(static_cast<size_t>(__builtin_ctz(unsure))) && room;
  const mrc::Timestamp now = SimNow();
  const std::span<uint8_t> buffer = SendBuffer();
  while (room) {
    auto tx = context_.PollTransmit(now, buffer);
    if (!tx) break;
    const std::span<const Route> routes = RoutesOf(tx->qpn);
    if (tx->ev >= routes.size()) {
      ++stats_.unroutable;
      continue;
    }
    const Route& route = routes[tx->ev];
    Port& port = ports_[route.port];
    if (!mrc::IsAck(mrc::PeekOpcode(buffer.first(tx->length)))) data_qpn_ = tx->qpn;
    SimPacket packet;
    packet.src = port.address;
    packet.dst = route.destination;
    packet.src_port = route.src_port;
    // Zeros the core left out (a virtual payload) travel as a run, not as bytes.
    packet.payload_bytes = static_cast<uint32_t>(tx->length);
    packet.payload = fabric_->Payloads().Copy({buffer.data(), tx->length - tx->elided.bytes});
    packet.zero_run_at = tx->elided.at;
    packet.zero_run_bytes = tx->elided.bytes;
    ++stats_.tx_datagrams;
    SimPort& nic = *route.nic;
    const size_t index = route.port;
    const uint32_t bit = uint32_t{1} << index;
    // Leave the rest in the transport (its window and pacing) while this NIC is busy: from
    // half its buffer on, the same mark at which the port calls OnTxSpace when it drains.
    if (!(unsure_ports_ & bit) && nic.QueuedBytes() + packet.WireBytes() <= nic.BufferBytes()) {
      // Its backlog is empty: straight into the NIC, as Drain would move it, without reading
      // the backlog (cold lines at thousands of hosts).
      nic.Enqueue(std::move(packet));
      room = 2 * nic.QueuedBytes() < nic.BufferBytes();
      if (!room) unsure_ports_ |= bit;
    } else {
      port.backlog.push_back(std::move(packet));
      room = Drain(index);
      if (!port.backlog.empty()) ++stats_.tx_waited;  // this packet (the backlog's last) waits
    }
  }
  blocked_ = !room;
  flushing_ = false;
  ArmTimer();
}

}  // namespace mrclab::emulator::sim
