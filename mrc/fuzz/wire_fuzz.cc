// libFuzzer target for everything a hostile datagram can reach: the wire decoder (raw bytes,
// including the ICRC check) and, behind a valid ICRC, the full receive path of MRC and RC QPs
// (placement, SACK/NAK handling, probes, credits). Input byte 0 selects the mode:
//   bit 7 set    the rest is a raw datagram
//   otherwise    byte 0 picks an opcode we speak; the rest is its body, sealed with a valid ICRC
// Invariants checked: a decoded packet re-encodes to the same bytes; nothing crashes (ASan,
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
  void Feed(std::span<const uint8_t> datagram) {
    now_ns += 1000;
    const Timestamp now = Timestamp::FromNanoseconds(now_ns);
    ctx.OnDatagram(now, datagram);
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
    const uint32_t icrc = ComputeIcrc(packet);
    for (int i = 0; i < 4; ++i) packet.push_back(static_cast<uint8_t>(icrc >> (8 * i)));
  }
  CheckReencode(packet);
  harness->Feed(packet);
  return 0;
}
