#include "mrc/core/context.h"

#include "mrc/core/wire.h"

namespace mrclab::mrc {

Context::Context(const ContextConfig& config)
    : rng_(config.seed), elide_zero_payload_(config.elide_zero_payload), memory_(&rng_) {}

MemoryRegion Context::RegisterMemory(std::span<uint8_t> buffer, uint32_t access) {
  return memory_.Register(buffer, access);
}

CompletionQueue& Context::CreateCq() {
  cqs_.push_back(std::make_unique<CompletionQueue>());
  return *cqs_.back();
}

Qp& Context::CreateQp(QpConfig config, CompletionQueue& send_cq, CompletionQueue& recv_cq) {
  // Every QPN is drawn afresh (not counted up from the last), so knowing one QP's number
  // tells nothing about the next; 0..0xFF and 0xFFFFFF (multicast) are never handed out.
  uint32_t qpn;
  do qpn = kFirstQpn + static_cast<uint32_t>(rng_.Below(kQpnMask - kFirstQpn));
  while (qps_.Contains(qpn));
  if (config.initial_psn == 0) config.initial_psn = static_cast<uint32_t>(rng_.Below(kPsnMask));
  auto qp = std::make_unique<Qp>(qpn, config, &memory_, &send_cq, &recv_cq, &events_);
  Qp& ref = *qp;
  qps_.Put(qpn, std::move(qp));
  scheduler_.Add(&ref);
  return ref;
}

Qp* Context::FindQp(uint32_t qpn) {
  const std::unique_ptr<Qp>* qp = qps_.Find(qpn);
  return qp ? qp->get() : nullptr;
}

void Context::OnDatagram(Timestamp now, std::span<const uint8_t> datagram, const DatagramInfo& info) {
  ++stats_.datagrams_in;
  auto packet = Decode(datagram, nullptr, info.elided);
  if (!packet) {
    ++stats_.malformed;
    return;
  }
  const uint32_t qpn = packet->bth.dest_qp;
  Qp* qp = recent_qps_.Find(qpn);
  if (!qp) {
    qp = FindQp(qpn);
    if (!qp) {
      ++stats_.unknown_qp;
      return;
    }
    recent_qps_.Remember(qp);
  }
  qp->OnPacket(now, *packet, info.ecn_ce);
}

const Qp* Context::PeekQp(uint32_t qpn) const {
  if (const Qp* qp = recent_qps_.Peek(qpn)) return qp;
  const std::unique_ptr<Qp>* found = qps_.Find(qpn);
  return found ? found->get() : nullptr;
}

void Context::Prefetch(std::span<const uint8_t> datagram, int stage) const {
  const std::optional<uint32_t> qpn = PeekDestQp(datagram);
  if (!qpn) return;
  const Qp* qp = PeekQp(*qpn);
  if (qp == nullptr) return;
  if (stage == 0) {
    qp->Prefetch();
    scheduler_.PrefetchScanned(0, qp);
    return;
  }
  qp->PrefetchState(PeekEv(datagram).value_or(UINT16_MAX), IsAck(PeekOpcode(datagram)));
  // The other QPs a poll asks (a scanning scheduler asks each after every datagram), and the
  // memory entry a Write's first packet resolves.
  scheduler_.PrefetchScanned(1, qp);
  if (const std::optional<uint32_t> rkey = PeekRkey(datagram)) memory_.PrefetchRemote(*rkey);
}

std::optional<Transmit> Context::PollTransmit(Timestamp now, std::span<uint8_t> out) {
  auto t = scheduler_.PollTransmit(now, out, elide_zero_payload_);
  if (t) ++stats_.datagrams_out;
  return t;
}

void Context::OnTimeout(Timestamp now) {
  scheduler_.RunDue(now);
}

}  // namespace mrclab::mrc
