// Wire format: RoCEv2 framing (UDP payload starting with the IBA Base Transport Header) with
// MRC's own fields in an extension header right after the BTH.
//
// RC mode uses the standard IBA RC opcodes, so its packets are plain RoCEv2. MRC mode uses
// opcodes from the manufacturer-specific range 0xC0..0xFF: a standard dissector (tshark's
// `infiniband`) decodes their BTH (opcode, destination QP, PSN, ack-request) and leaves the rest
// as data, instead of mis-parsing the MRC extension header as a RETH.
//
//   opcode            layout after the 12-byte BTH                         (then payload, ICRC)
//   RC_WRITE_FIRST    RETH                                                 payload
//   RC_WRITE_MIDDLE   -                                                    payload
//   RC_WRITE_LAST     -                                                    payload
//   RC_WRITE_LAST_IMM ImmDt                                                payload
//   RC_WRITE_ONLY     RETH                                                 payload
//   RC_WRITE_ONLY_IMM RETH ImmDt                                           payload
//   RC_ACK            AETH CRDT
//   MRC_WRITE_*       MRCETH MDETH RETH [ImmDt on *_LAST_IMM/*_ONLY_IMM]   payload
//   MRC_ACK           MRCETH AETH CRDT SACK
//   MRC_PROBE(_REPLY) MRCETH PROBE
//
// Every MRC data packet carries the RETH of its message plus its offset (MDETH), so it can be
// placed the moment it arrives, in any order. All fields are big-endian except the ICRC.
// Decode() rejects anything malformed or truncated and never reads outside its input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace mrclab::mrc {

inline constexpr uint16_t kRoceV2UdpPort = 4791;

enum class Opcode : uint8_t {
  kRcWriteFirst = 0x06,
  kRcWriteMiddle = 0x07,
  kRcWriteLast = 0x08,
  kRcWriteLastImm = 0x09,
  kRcWriteOnly = 0x0A,
  kRcWriteOnlyImm = 0x0B,
  kRcAck = 0x11,
  kMrcWriteFirst = 0xC6,
  kMrcWriteMiddle = 0xC7,
  kMrcWriteLast = 0xC8,
  kMrcWriteLastImm = 0xC9,
  kMrcWriteOnly = 0xCA,
  kMrcWriteOnlyImm = 0xCB,
  kMrcAck = 0xD1,
  kMrcProbe = 0xD8,
  kMrcProbeReply = 0xD9,
};

// Which headers an opcode carries (the table in wire.cc is the single source of truth).
struct OpcodeLayout {
  Opcode opcode;
  std::string_view name;
  bool mrceth, mdeth, reth, immdt, aeth, crdt, sack, probe, payload;
};
const OpcodeLayout* LayoutOf(Opcode op);  // nullptr for opcodes we do not speak

inline constexpr size_t kBthBytes = 12, kMrcethBytes = 4, kMdethBytes = 8, kRethBytes = 16,
                        kImmdtBytes = 4, kAethBytes = 4, kCrdtBytes = 4, kSackBytes = 16,
                        kProbeBytes = 16, kIcrcBytes = 4;
inline constexpr uint32_t kPsnMask = 0xFFFFFF;
inline constexpr uint32_t kQpnMask = 0xFFFFFF;

struct Bth {
  Opcode opcode = Opcode::kRcAck;
  bool solicited = false;
  uint8_t pad_count = 0;  // filled in by Encode
  uint16_t pkey = 0xFFFF;
  uint32_t dest_qp = 0;    // 24 bits
  bool ack_request = false;
  uint32_t psn = 0;        // 24 bits
};

// MRC extension header common to all MRC opcodes.
struct Mrceth {
  static constexpr uint8_t kRetransmit = 0x01;  // data: this is a retransmission
  static constexpr uint8_t kEcnEcho = 0x02;     // ack: a packet acknowledged here was CE-marked
  static constexpr uint8_t kDuplicate = 0x04;   // ack: triggered by a copy of echo_psn that had
                                                //   already arrived (as TCP's D-SACK)
  static constexpr uint8_t kVersion = 1;
  uint16_t ev = 0;  // data/probe: EV sent on; ack: EV the acknowledged packet arrived on
  uint8_t flags = 0;
};

struct Mdeth {  // MRC message position
  uint32_t msg_seq = 0;
  uint32_t offset = 0;
};

struct Reth {
  uint64_t va = 0;
  uint32_t rkey = 0;
  uint32_t length = 0;  // whole message
};

enum class AethCode : uint8_t { kAck, kNakSequence, kNakRemoteAccess, kNakInvalidRequest };
struct Aeth {
  AethCode code = AethCode::kAck;
  uint32_t msn = 0;  // 24 bits: messages completed at the responder
};

struct Sack {
  uint32_t base_psn = 0;  // bit i of bitmap covers base_psn + i
  uint32_t echo_psn = 0;  // the PSN whose arrival triggered this ack
  uint64_t bitmap = 0;
};

struct Probe {
  uint32_t probe_id = 0;
  uint64_t sent_at_ns = 0;  // echoed verbatim by the reply
};

// A run of zero bytes a buffer is held without: its bytes are the stored ones with `bytes`
// zero bytes inserted at `at`.
struct ZeroRun {
  uint32_t at = 0, bytes = 0;
};

// Decoded view of one packet; `payload` points into the decoded buffer (or, for Encode, at the
// bytes to copy), with payload_zeros' zero bytes inserted (a Write from a zero-filled region,
// or a zero run the datagram was held without). Optional fields are present exactly when the
// opcode's layout says so.
struct Packet {
  Bth bth;
  std::optional<Mrceth> mrceth;
  std::optional<Mdeth> mdeth;
  std::optional<Reth> reth;
  std::optional<uint32_t> immediate;
  std::optional<Aeth> aeth;
  std::optional<uint32_t> credit_limit;  // CRDT: receives posted, cumulative
  std::optional<Sack> sack;
  std::optional<Probe> probe;
  std::span<const uint8_t> payload;
  ZeroRun payload_zeros;  // within the payload
};

// The payload's length, its zero run included.
inline size_t PayloadBytes(const Packet& p) { return p.payload.size() + p.payload_zeros.bytes; }
// Writes the payload, its zero run included, to dst (PayloadBytes(p) bytes).
void CopyPayload(const Packet& p, uint8_t* dst);

enum class ParseError : uint8_t {
  kOk,
  kTooShort,
  kUnknownOpcode,
  kBadTransportVersion,
  kBadExtensionVersion,
  kBadPad,
  kBadIcrc,
  kUnexpectedPayload,
  kBadAeth,
  kBadZeroRun,
};
std::string_view ToString(ParseError e);

// Serialized size of `p` (headers by opcode, payload padded to 4 bytes, ICRC).
size_t EncodedSize(const Packet& p);
// Writes `p` into `out`; returns the datagram's length, or 0 if `out` is too small or a header
// the opcode requires is missing. With `elided`, the payload's zero run is left out of `out`
// (which then holds length - elided->bytes bytes) and *elided says where in the datagram it
// belongs ({0, 0}: none); the ICRC covers it all the same.
size_t Encode(const Packet& p, std::span<uint8_t> out, ZeroRun* elided = nullptr);
// Parses and checks one UDP payload. On failure returns nullopt and sets *error if given.
// `in` may be a datagram held without a zero run (`elided`, as Encode leaves out): the run must
// lie after the headers and before the ICRC (else kBadZeroRun), and comes back as the
// packet's payload_zeros.
std::optional<Packet> Decode(std::span<const uint8_t> in, ParseError* error = nullptr, ZeroRun elided = {});

// A datagram's opcode, destination QP and (if its opcode has an MRCETH) EV, read from where
// they sit without any check (for cache hints ahead of Decode): nullopt when it is too short
// for them.
std::optional<Opcode> PeekOpcode(std::span<const uint8_t> datagram);
// Whether an opcode (PeekOpcode's) is an acknowledgement, MRC's or RC's.
inline bool IsAck(std::optional<Opcode> op) { return op == Opcode::kMrcAck || op == Opcode::kRcAck; }
std::optional<uint32_t> PeekDestQp(std::span<const uint8_t> datagram);
std::optional<uint16_t> PeekEv(std::span<const uint8_t> datagram);
// The RETH's rkey of a datagram that carries one (the first packet of a Write).
std::optional<uint32_t> PeekRkey(std::span<const uint8_t> datagram);

// 24-bit PSN helpers: the core counts packets with 64-bit sequence numbers and puts the low
// 24 bits on the wire; Unwrap picks the 64-bit value nearest to `reference`.
inline uint32_t ToWirePsn(uint64_t seq) { return static_cast<uint32_t>(seq) & kPsnMask; }
inline uint64_t UnwrapPsn(uint32_t wire, uint64_t reference) {
  const int32_t diff = static_cast<int32_t>((wire - static_cast<uint32_t>(reference)) << 8) >> 8;
  return reference + static_cast<uint64_t>(static_cast<int64_t>(diff));
}

}  // namespace mrclab::mrc
