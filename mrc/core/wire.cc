#include "mrc/core/wire.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "mrc/core/icrc.h"

namespace mrclab::mrc {
namespace {

//                      opcode                     name                 mrc  mdeth reth imm aeth crdt sack probe payload
constexpr std::array kLayouts = {
    OpcodeLayout{Opcode::kRcWriteFirst,     "RC_WRITE_FIRST",     false, false, true,  false, false, false, false, false, true},
    OpcodeLayout{Opcode::kRcWriteMiddle,    "RC_WRITE_MIDDLE",    false, false, false, false, false, false, false, false, true},
    OpcodeLayout{Opcode::kRcWriteLast,      "RC_WRITE_LAST",      false, false, false, false, false, false, false, false, true},
    OpcodeLayout{Opcode::kRcWriteLastImm,   "RC_WRITE_LAST_IMM",  false, false, false, true,  false, false, false, false, true},
    OpcodeLayout{Opcode::kRcWriteOnly,      "RC_WRITE_ONLY",      false, false, true,  false, false, false, false, false, true},
    OpcodeLayout{Opcode::kRcWriteOnlyImm,   "RC_WRITE_ONLY_IMM",  false, false, true,  true,  false, false, false, false, true},
    OpcodeLayout{Opcode::kRcAck,            "RC_ACK",             false, false, false, false, true,  true,  false, false, false},
    OpcodeLayout{Opcode::kMrcWriteFirst,    "MRC_WRITE_FIRST",    true,  true,  true,  false, false, false, false, false, true},
    OpcodeLayout{Opcode::kMrcWriteMiddle,   "MRC_WRITE_MIDDLE",   true,  true,  true,  false, false, false, false, false, true},
    OpcodeLayout{Opcode::kMrcWriteLast,     "MRC_WRITE_LAST",     true,  true,  true,  false, false, false, false, false, true},
    OpcodeLayout{Opcode::kMrcWriteLastImm,  "MRC_WRITE_LAST_IMM", true,  true,  true,  true,  false, false, false, false, true},
    OpcodeLayout{Opcode::kMrcWriteOnly,     "MRC_WRITE_ONLY",     true,  true,  true,  false, false, false, false, false, true},
    OpcodeLayout{Opcode::kMrcWriteOnlyImm,  "MRC_WRITE_ONLY_IMM", true,  true,  true,  true,  false, false, false, false, true},
    OpcodeLayout{Opcode::kMrcAck,           "MRC_ACK",            true,  false, false, false, true,  true,  true,  false, false},
    OpcodeLayout{Opcode::kMrcProbe,         "MRC_PROBE",          true,  false, false, false, false, false, false, true,  false},
    OpcodeLayout{Opcode::kMrcProbeReply,    "MRC_PROBE_REPLY",    true,  false, false, false, false, false, false, true,  false},
};

constexpr std::array<const OpcodeLayout*, 256> BuildIndex() {
  std::array<const OpcodeLayout*, 256> index{};
  for (const auto& l : kLayouts) index[static_cast<uint8_t>(l.opcode)] = &l;
  return index;
}
constexpr auto kIndex = BuildIndex();

size_t HeaderBytes(const OpcodeLayout& l) {
  return kBthBytes + (l.mrceth ? kMrcethBytes : 0) + (l.mdeth ? kMdethBytes : 0) +
         (l.reth ? kRethBytes : 0) + (l.immdt ? kImmdtBytes : 0) + (l.aeth ? kAethBytes : 0) +
         (l.crdt ? kCrdtBytes : 0) + (l.sack ? kSackBytes : 0) + (l.probe ? kProbeBytes : 0);
}

// Network byte order <-> the host's, for one load or store per field instead of a byte each.
template <typename T>
T BigEndian(T v) {
  if constexpr (std::endian::native == std::endian::big) return v;
  if constexpr (sizeof(T) == 2) return __builtin_bswap16(v);
  if constexpr (sizeof(T) == 4) return __builtin_bswap32(v);
  if constexpr (sizeof(T) == 8) return __builtin_bswap64(v);
}

class Writer {
 public:
  explicit Writer(uint8_t* p) : p_(p) {}
  void U8(uint8_t v) { *p_++ = v; }
  void U16(uint16_t v) { Store(v); }
  void U24(uint32_t v) { U8((v >> 16) & 0xFF); U16(v & 0xFFFF); }
  void U32(uint32_t v) { Store(v); }
  void U64(uint64_t v) { Store(v); }
  void Raw(std::span<const uint8_t> s) { if (!s.empty()) std::memcpy(p_, s.data(), s.size()); p_ += s.size(); }
  void Zeros(size_t n) { std::memset(p_, 0, n); p_ += n; }
  uint8_t* pos() const { return p_; }
 private:
  template <typename T>
  void Store(T v) {
    v = BigEndian(v);
    std::memcpy(p_, &v, sizeof(v));
    p_ += sizeof(v);
  }
  uint8_t* p_;
};

// Reader over a span whose length the caller has already checked against the layout.
class Reader {
 public:
  explicit Reader(const uint8_t* p) : p_(p) {}
  uint8_t U8() { return *p_++; }
  uint16_t U16() { return Load<uint16_t>(); }
  uint32_t U24() { uint32_t hi = U8(); return (hi << 16) | U16(); }
  uint32_t U32() { return Load<uint32_t>(); }
  uint64_t U64() { return Load<uint64_t>(); }
  const uint8_t* pos() const { return p_; }
 private:
  template <typename T>
  T Load() {
    T v;
    std::memcpy(&v, p_, sizeof(v));
    p_ += sizeof(v);
    return BigEndian(v);
  }
  const uint8_t* p_;
};

uint8_t AethSyndrome(AethCode c) {
  // IBA: 0b000xxxxx ACK (credits: 0b11111 = invalid/unused), 0b011xxxxx NAK with code.
  switch (c) {
    case AethCode::kAck: return 0x1F;
    case AethCode::kNakSequence: return 0x60;
    case AethCode::kNakInvalidRequest: return 0x61;
    case AethCode::kNakRemoteAccess: return 0x62;
  }
  return 0x1F;
}

std::optional<AethCode> AethFromSyndrome(uint8_t s) {
  if ((s & 0xE0) == 0x00) return AethCode::kAck;
  switch (s) {
    case 0x60: return AethCode::kNakSequence;
    case 0x61: return AethCode::kNakInvalidRequest;
    case 0x62: return AethCode::kNakRemoteAccess;
    default: return std::nullopt;
  }
}

}  // namespace

const OpcodeLayout* LayoutOf(Opcode op) { return kIndex[static_cast<uint8_t>(op)]; }

std::string_view ToString(ParseError e) {
  switch (e) {
    case ParseError::kOk: return "ok";
    case ParseError::kTooShort: return "too short";
    case ParseError::kUnknownOpcode: return "unknown opcode";
    case ParseError::kBadTransportVersion: return "bad transport version";
    case ParseError::kBadExtensionVersion: return "bad MRC extension version";
    case ParseError::kBadPad: return "bad pad count";
    case ParseError::kBadIcrc: return "bad ICRC";
    case ParseError::kUnexpectedPayload: return "payload on a header-only opcode";
    case ParseError::kBadAeth: return "bad AETH syndrome";
    case ParseError::kBadZeroRun: return "elided zero run outside the payload";
  }
  return "?";
}

void CopyPayload(const Packet& p, uint8_t* dst) {
  const size_t at = p.payload_zeros.at;
  if (at > 0) std::memcpy(dst, p.payload.data(), at);
  if (p.payload_zeros.bytes > 0) std::memset(dst + at, 0, p.payload_zeros.bytes);
  if (p.payload.size() > at) std::memcpy(dst + at + p.payload_zeros.bytes, p.payload.data() + at, p.payload.size() - at);
}

size_t EncodedSize(const Packet& p) {
  const OpcodeLayout* l = LayoutOf(p.bth.opcode);
  if (!l) return 0;
  const size_t payload = l->payload ? PayloadBytes(p) : 0;
  return HeaderBytes(*l) + ((payload + 3) & ~size_t{3}) + kIcrcBytes;
}

size_t Encode(const Packet& p, std::span<uint8_t> out, ZeroRun* elided) {
  const OpcodeLayout* l = LayoutOf(p.bth.opcode);
  if (!l) return 0;
  const ZeroRun zeros = p.payload_zeros;
  if ((l->mrceth && !p.mrceth) || (l->mdeth && !p.mdeth) || (l->reth && !p.reth) ||
      (l->immdt && !p.immediate) || (l->aeth && !p.aeth) || (l->crdt && !p.credit_limit) ||
      (l->sack && !p.sack) || (l->probe && !p.probe) || (!l->payload && PayloadBytes(p) != 0) ||
      zeros.at > p.payload.size())
    return 0;
  const size_t total = EncodedSize(p);
  const bool elide = elided && zeros.bytes > 0;
  if (out.size() < total - (elide ? zeros.bytes : 0)) return 0;
  const size_t pad = (4 - PayloadBytes(p) % 4) % 4;

  Writer w(out.data());
  w.U8(static_cast<uint8_t>(p.bth.opcode));
  w.U8(static_cast<uint8_t>((p.bth.solicited ? 0x80 : 0) | 0x40 /* MigReq */ | (pad << 4)));
  w.U16(p.bth.pkey);
  w.U8(0);  // resv8a
  w.U24(p.bth.dest_qp & kQpnMask);
  w.U8(p.bth.ack_request ? 0x80 : 0);
  w.U24(p.bth.psn & kPsnMask);
  if (l->mrceth) {
    w.U16(p.mrceth->ev);
    w.U8(p.mrceth->flags);
    w.U8(Mrceth::kVersion);
  }
  if (l->mdeth) {
    w.U32(p.mdeth->msg_seq);
    w.U32(p.mdeth->offset);
  }
  if (l->reth) {
    w.U64(p.reth->va);
    w.U32(p.reth->rkey);
    w.U32(p.reth->length);
  }
  if (l->immdt) w.U32(*p.immediate);
  if (l->aeth) {
    w.U8(AethSyndrome(p.aeth->code));
    w.U24(p.aeth->msn & 0xFFFFFF);
  }
  if (l->crdt) w.U32(*p.credit_limit);
  if (l->sack) {
    w.U32(p.sack->base_psn & kPsnMask);
    w.U32(p.sack->echo_psn & kPsnMask);
    w.U64(p.sack->bitmap);
  }
  if (l->probe) {
    w.U32(p.probe->probe_id);
    w.U32(0);
    w.U64(p.probe->sent_at_ns);
  }
  const size_t run_at = static_cast<size_t>(w.pos() - out.data()) + zeros.at;  // in the datagram
  if (l->payload) {
    w.Raw(p.payload.first(zeros.at));
    if (!elide) w.Zeros(zeros.bytes);
    w.Raw(p.payload.subspan(zeros.at));
    w.Zeros(pad);
  }
  const size_t stored = static_cast<size_t>(w.pos() - out.data());
  // The ICRC covers the run left out as zeros (none left out: an empty run at the end), as Decode.
  const ZeroRun left_out = elide ? ZeroRun{static_cast<uint32_t>(run_at), zeros.bytes}
                                 : ZeroRun{static_cast<uint32_t>(stored), 0};
  const uint32_t icrc =
      ComputeIcrc(out.first(left_out.at), left_out.bytes, out.subspan(left_out.at, stored - left_out.at));
  for (int i = 0; i < 4; ++i) w.U8(static_cast<uint8_t>(icrc >> (8 * i)));
  if (elided) *elided = elide ? left_out : ZeroRun{};
  return total;
}

std::optional<Packet> Decode(std::span<const uint8_t> in, ParseError* error, ZeroRun elided) {
  auto fail = [&](ParseError e) -> std::optional<Packet> {
    if (error) *error = e;
    return std::nullopt;
  };
  if (in.size() < kBthBytes + kIcrcBytes) return fail(ParseError::kTooShort);
  const OpcodeLayout* l = LayoutOf(static_cast<Opcode>(in[0]));
  if (!l) return fail(ParseError::kUnknownOpcode);
  const size_t headers = HeaderBytes(*l);
  if (in.size() < headers + kIcrcBytes) return fail(ParseError::kTooShort);
  if ((in[1] & 0x0F) != 0) return fail(ParseError::kBadTransportVersion);

  const size_t stored = in.size() - kIcrcBytes;  // covered by the ICRC, the run left out
  if (elided.bytes == 0) elided.at = static_cast<uint32_t>(stored);
  if (elided.at < headers || elided.at > stored) return fail(ParseError::kBadZeroRun);
  uint32_t wire_icrc = 0;
  for (int i = 0; i < 4; ++i) wire_icrc |= static_cast<uint32_t>(in[stored + i]) << (8 * i);
  if (ComputeIcrc(in.first(elided.at), elided.bytes, in.subspan(elided.at, stored - elided.at)) != wire_icrc)
    return fail(ParseError::kBadIcrc);
  const size_t covered = stored + elided.bytes;

  Packet p;
  Reader r(in.data());
  p.bth.opcode = static_cast<Opcode>(r.U8());
  const uint8_t b1 = r.U8();
  p.bth.solicited = b1 & 0x80;
  p.bth.pad_count = (b1 >> 4) & 0x3;
  p.bth.pkey = r.U16();
  r.U8();
  p.bth.dest_qp = r.U24();
  p.bth.ack_request = r.U8() & 0x80;
  p.bth.psn = r.U24();
  if (l->mrceth) {
    Mrceth m;
    m.ev = r.U16();
    m.flags = r.U8();
    if (r.U8() != Mrceth::kVersion) return fail(ParseError::kBadExtensionVersion);
    p.mrceth = m;
  }
  if (l->mdeth) p.mdeth = Mdeth{r.U32(), r.U32()};
  if (l->reth) {
    Reth reth;
    reth.va = r.U64();
    reth.rkey = r.U32();
    reth.length = r.U32();
    p.reth = reth;
  }
  if (l->immdt) p.immediate = r.U32();
  if (l->aeth) {
    const uint8_t syndrome = r.U8();
    auto code = AethFromSyndrome(syndrome);
    if (!code) return fail(ParseError::kBadAeth);
    p.aeth = Aeth{*code, r.U24()};
  }
  if (l->crdt) p.credit_limit = r.U32();
  if (l->sack) {
    Sack s;
    s.base_psn = r.U32();
    s.echo_psn = r.U32();
    s.bitmap = r.U64();
    if ((s.base_psn | s.echo_psn) & ~kPsnMask) return fail(ParseError::kBadExtensionVersion);
    p.sack = s;
  }
  if (l->probe) {
    Probe pr;
    pr.probe_id = r.U32();
    r.U32();
    pr.sent_at_ns = r.U64();
    p.probe = pr;
  }
  const size_t body = covered - headers;
  if (!l->payload) {
    if (body != 0 || p.bth.pad_count != 0) return fail(ParseError::kUnexpectedPayload);
  } else {
    if (body % 4 != 0 || p.bth.pad_count > body) return fail(ParseError::kBadPad);
    // The run, which starts in the payload or its pad, counts in the payload up to its end.
    const size_t payload = body - p.bth.pad_count, run_at = elided.at - headers;
    const size_t zeros = run_at < payload ? std::min<size_t>(elided.bytes, payload - run_at) : 0;
    p.payload = in.subspan(headers, payload - zeros);
    if (zeros > 0) p.payload_zeros = {static_cast<uint32_t>(run_at), static_cast<uint32_t>(zeros)};
  }
  if (error) *error = ParseError::kOk;
  return p;
}

std::optional<Opcode> PeekOpcode(std::span<const uint8_t> datagram) {
  if (datagram.size() < kBthBytes) return std::nullopt;
  return static_cast<Opcode>(datagram[0]);
}

std::optional<uint32_t> PeekDestQp(std::span<const uint8_t> datagram) {
  if (datagram.size() < kBthBytes) return std::nullopt;
  return uint32_t{datagram[5]} << 16 | uint32_t{datagram[6]} << 8 | datagram[7];
}

std::optional<uint16_t> PeekEv(std::span<const uint8_t> datagram) {
  if (datagram.size() < kBthBytes + kMrcethBytes) return std::nullopt;
  const OpcodeLayout* layout = LayoutOf(static_cast<Opcode>(datagram[0]));
  if (!layout || !layout->mrceth) return std::nullopt;
  return static_cast<uint16_t>(datagram[kBthBytes] << 8 | datagram[kBthBytes + 1]);
}

std::optional<uint32_t> PeekRkey(std::span<const uint8_t> datagram) {
  if (datagram.size() < kBthBytes) return std::nullopt;
  const OpcodeLayout* layout = LayoutOf(static_cast<Opcode>(datagram[0]));
  if (!layout || !layout->reth) return std::nullopt;
  const size_t at = kBthBytes + (layout->mrceth ? kMrcethBytes : 0) + (layout->mdeth ? kMdethBytes : 0) + 8;
  if (datagram.size() < at + 4) return std::nullopt;
  uint32_t rkey;
  std::memcpy(&rkey, datagram.data() + at, sizeof rkey);
  return BigEndian(rkey);
}

}  // namespace mrclab::mrc
