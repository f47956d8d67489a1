// libFuzzer target for everything a hostile datagram can reach: the wire decoder (raw bytes,
// including the ICRC check), the prefetch hint a simulated fabric gives before it (every stage
// of Context::Prefetch, which reads the datagram before any check), and, behind a valid ICRC,
// the full receive path of MRC and RC QPs (placement, SACK/NAK handling, probes, credits). Input byte 0 selects the mode:
//   bit 7 set    the rest is a raw datagram
//   otherwise    byte 0 picks an opcode we speak; the rest is its body, sealed with a valid ICRC;
//                with bit 4 set, zeros are inserted first (how many and where: the last byte)
//                and the datagram is also fed held without them (DatagramInfo::elided)
// Invariants checked: a decoded packet re-encodes to the same bytes; a datagram held without a
// zero run decodes, if at all, to what the whole datagram decodes to; nothing crashes (ASan,
// UBSan abort the run on any memory or UB error).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "mrc/core/context.h"
#include "mrc/core/icrc.h"
#include "mrc/core/wire.h"

namespace {

using namespace mrclab::mrc;

constexpr Opcode kOpcodes[] = {
    Opcode::kRcWriteFirst,    Opcode::kRcWriteMiddle,  Opcode::kRcWriteLast,
    Opcode::kRcWriteLastImm,  Opcode::kRcWriteOnly,    Opcode::kRcWriteOnlyImm,
    Opcode::kRcAck,           Opcode::kMrcWriteFirst,  Opcode::kMrcWriteMiddle,
    Opcode::kMrcWriteLast,    Opcode::kMrcWriteLastImm, Opcode::kMrcWriteOnly,
    Opcode::kMrcWriteOnlyImm, Opcode::kMrcAck,         Opcode::kMrcProbe,
    Opcode::kMrcProbeReply};

// Two connected pairs (MRC and RC) whose responders accept anything the fuzzer sends to them.
struct Harness {
  Context ctx{ContextConfig{1}};
  std::vector<uint8_t> memory = std::vector<uint8_t>(1 << 16);
  std::vector<uint8_t> out = std::vector<uint8_t>(1 << 16);
  Qp* mrc;
  Qp* rc;
  int64_t now_ns = 0;
  Harness() {
    auto& cq = ctx.CreateCq();
    ctx.RegisterMemory(memory, kAccessRemoteWrite);
    QpConfig c;
    c.initial_psn = 1;
    c.evs = MakeEvProfile(4, 2);
    mrc = &ctx.CreateQp(c, cq, cq);
    c.mode = TransportMode::kRc;
    rc = &ctx.CreateQp(c, cq, cq);
    mrc->Connect(rc->qpn(), 1);  // peers are irrelevant: we inject their packets
    rc->Connect(mrc->qpn(), 1);
    for (int i = 0; i < 8; ++i) {
      mrc->PostRecv(i);
      rc->PostRecv(i);
      WriteRequest wr;
      wr.wr_id = i;
      wr.lkey = 1;
      wr.local_addr = reinterpret_cast<uint64_t>(memory.data());
      wr.length = 3000;
      wr.remote_addr = 0x1000;
      wr.rkey = 5;
      mrc->PostWrite(wr);
      rc->PostWrite(wr);
    }
  }
  void Feed(std::span<const uint8_t> datagram, ZeroRun elided = {}) {
    now_ns += 1000;
    const Timestamp now = Timestamp::FromNanoseconds(now_ns);
    for (int stage = 0; stage < Context::kPrefetchStages; ++stage) ctx.Prefetch(datagram, stage);
    ctx.OnDatagram(now, datagram, DatagramInfo{0, false, elided});
    if (ctx.NextTimeout() <= now) ctx.OnTimeout(now);
    for (int i = 0; i < 64 && ctx.PollTransmit(now, out); ++i) {
    }
  }
};

void CheckReencode(std::span<const uint8_t> bytes) {
  auto p = Decode(bytes);
  if (!p) return;
  std::vector<uint8_t> again(EncodedSize(*p));
  // Bits the encoder normalizes (MigReq, reserved, resv8a) may differ; compare by decoding.
  if (Encode(*p, again) != bytes.size()) std::abort();
  auto q = Decode(again);
  if (!q || q->bth.psn != p->bth.psn || q->bth.dest_qp != p->bth.dest_qp ||
      q->payload.size() != p->payload.size() ||
      (p->payload.size() && std::memcmp(q->payload.data(), p->payload.data(), p->payload.size())))
    std::abort();
}

// `stored` is `whole` without run.bytes zeros at run.at.
void CheckElided(std::span<const uint8_t> whole, std::span<const uint8_t> stored, ZeroRun run) {
  auto s = Decode(stored, nullptr, run);
  if (!s) return;  // e.g. a run that starts in the headers: not an elision Encode makes
  auto w = Decode(whole);
  if (!w || w->bth.psn != s->bth.psn || w->bth.dest_qp != s->bth.dest_qp || PayloadBytes(*w) != PayloadBytes(*s))
    std::abort();
  std::vector<uint8_t> a(PayloadBytes(*w)), b(PayloadBytes(*s));
  CopyPayload(*w, a.data());
  CopyPayload(*s, b.data());
  if (a != b) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Harness* harness = nullptr;
  // A QP the fuzzer drove into the error state ignores further input: start afresh.
  if (!harness || harness->mrc->state() == QpState::kError || harness->rc->state() == QpState::kError) {
    delete harness;
    harness = new Harness();
  }
  if (size == 0) return 0;
  std::vector<uint8_t> packet;
  if (data[0] & 0x80) {
    packet.assign(data + 1, data + size);
  } else {
    packet.push_back(static_cast<uint8_t>(kOpcodes[data[0] % std::size(kOpcodes)]));
    packet.insert(packet.end(), data + 1, data + size);
    // Steer most inputs at our QPs so the receive path, not the QPN lookup, gets exercised.
    if (packet.size() >= 8 && (data[0] & 0x40)) {
      const uint32_t qpn = (data[0] & 0x20) ? harness->mrc->qpn() : harness->rc->qpn();
      packet[5] = qpn >> 16;
      packet[6] = qpn >> 8;
      packet[7] = qpn;
    }
    ZeroRun run;
    if ((data[0] & 0x10) && size >= 2) {
      run = {static_cast<uint32_t>(data[size - 1] % (packet.size() + 1)), 1 + 16u * (data[size - 1] >> 4)};
      packet.insert(packet.begin() + run.at, run.bytes, 0);
    }
    const uint32_t icrc = ComputeIcrc(packet);
    for (int i = 0; i < 4; ++i) packet.push_back(static_cast<uint8_t>(icrc >> (8 * i)));
    if (run.bytes > 0) {
      std::vector<uint8_t> stored = packet;
      stored.erase(stored.begin() + run.at, stored.begin() + run.at + run.bytes);
      CheckElided(packet, stored, run);
      harness->Feed(stored, run);
    }
  }
  CheckReencode(packet);
  harness->Feed(packet);
  return 0;
}
