#include "mrc/core/wire.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "mrc/core/crc32_pclmul.h"
#include "mrc/core/icrc.h"
#include "mrc/loop/pcap_writer.h"

namespace mrclab::mrc {
namespace {

std::vector<uint8_t> Bytes(std::string_view s) { return {s.begin(), s.end()}; }

TEST(IcrcTest, Crc32CheckValue) {
  const auto data = Bytes("123456789");
  EXPECT_EQ(~Crc32Update(0xFFFFFFFFu, data), 0xCBF43926u);  // the CRC-32 check value
  // Slicing-by-8 and the bytewise tail agree for every split point.
  std::vector<uint8_t> big(1000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 37 + 11);
  uint32_t whole = Crc32Update(0xFFFFFFFFu, big);
  for (size_t split : {1, 7, 8, 9, 500}) {
    uint32_t part = Crc32Update(0xFFFFFFFFu, std::span(big).first(split));
    EXPECT_EQ(Crc32Update(part, std::span(big).subspan(split)), whole);
  }
}

// Bit by bit, straight from the definition: the reference every fast path must match.
uint32_t Crc32Bitwise(uint32_t crc, std::span<const uint8_t> data) {
  for (uint8_t byte : data) {
    crc ^= byte;
    for (int i = 0; i < 8; ++i) crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
  }
  return crc;
}

TEST(IcrcTest, CarrylessFoldingMatchesTheDefinition) {
  if (!HavePclmul()) GTEST_SKIP() << "no PCLMULQDQ on this CPU";
  std::vector<uint8_t> buf(9000 + 16);
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (auto& b : buf) b = static_cast<uint8_t>((x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 56);
  // Every length mod 256 on both sides of the wide (VPCLMULQDQ) path's 512-byte threshold.
  for (size_t length = 64; length <= 9000; length += (length < 1100 ? 16 : 784))
    for (size_t offset : {0, 1, 7, 13})
      for (uint32_t seed : {0u, 0xFFFFFFFFu, 0x12345678u}) {
        auto span = std::span<const uint8_t>(buf).subspan(offset, length);
        ASSERT_EQ(Crc32FoldPclmul(seed, span.data(), length), Crc32Bitwise(seed, span))
            << "length " << length << " offset " << offset << " seed " << seed;
      }
  // And through Crc32Update for lengths that are not multiples of 16.
  for (size_t length : {64, 65, 79, 100, 1023, 8235})
    EXPECT_EQ(Crc32Update(0xFFFFFFFFu, std::span<const uint8_t>(buf).first(length)),
              Crc32Bitwise(0xFFFFFFFFu, std::span<const uint8_t>(buf).first(length)));
}

std::vector<Packet> SamplePackets(const std::vector<uint8_t>& payload) {
  std::vector<Packet> v;
  auto base = [](Opcode op) {
    Packet p;
    p.bth.opcode = op;
    p.bth.dest_qp = 0xABCDEF;
    p.bth.psn = 0xFFFFFE;
    p.bth.ack_request = true;
    return p;
  };
  Packet p = base(Opcode::kRcWriteFirst);
  p.reth = Reth{0x1122334455667788ULL, 0xDEADBEEF, 70000};
  p.payload = payload;
  v.push_back(p);
  p = base(Opcode::kRcWriteMiddle);
  p.payload = payload;
  v.push_back(p);
  p = base(Opcode::kRcWriteLastImm);
  p.immediate = 0xCAFEBABE;
  p.payload = std::span(payload).first(3);  // exercises padding
  v.push_back(p);
  p = base(Opcode::kRcWriteOnlyImm);
  p.reth = Reth{1, 2, 0};
  p.immediate = 5;
  v.push_back(p);
  p = base(Opcode::kRcAck);
  p.aeth = Aeth{AethCode::kNakSequence, 77};
  p.credit_limit = 12;
  v.push_back(p);
  p = base(Opcode::kMrcWriteMiddle);
  p.mrceth = Mrceth{513, Mrceth::kRetransmit};
  p.mdeth = Mdeth{9, 4096};
  p.reth = Reth{0x7000, 0x1234, 8192};
  p.payload = payload;
  v.push_back(p);
  p = base(Opcode::kMrcWriteLastImm);
  p.mrceth = Mrceth{2, 0};
  p.mdeth = Mdeth{10, 1024};
  p.reth = Reth{0x7000, 0x1234, 1025};
  p.immediate = 99;
  p.payload = std::span(payload).first(1);
  v.push_back(p);
  p = base(Opcode::kMrcAck);
  p.mrceth = Mrceth{7, Mrceth::kEcnEcho};
  p.aeth = Aeth{AethCode::kAck, 3};
  p.credit_limit = 64;
  p.sack = Sack{0x10, 0x4F, 0x8000000000000001ULL};
  v.push_back(p);
  p = base(Opcode::kMrcProbe);
  p.mrceth = Mrceth{255, 0};
  p.probe = Probe{42, 123456789012ULL};
  v.push_back(p);
  p.bth.opcode = Opcode::kMrcProbeReply;
  v.push_back(p);
  return v;
}

std::vector<uint8_t> EncodeToVector(const Packet& p) {
  std::vector<uint8_t> out(EncodedSize(p));
  EXPECT_EQ(Encode(p, out), out.size());
  return out;
}

TEST(WireTest, RoundTripsEveryLayout) {
  std::vector<uint8_t> payload(1024);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i);
  for (const Packet& p : SamplePackets(payload)) {
    SCOPED_TRACE(LayoutOf(p.bth.opcode)->name);
    const auto bytes = EncodeToVector(p);
    EXPECT_EQ(bytes.size() % 4, 0u);
    ParseError err;
    auto d = Decode(bytes, &err);
    ASSERT_TRUE(d) << ToString(err);
    EXPECT_EQ(d->bth.opcode, p.bth.opcode);
    EXPECT_EQ(d->bth.dest_qp, p.bth.dest_qp);
    EXPECT_EQ(d->bth.psn, p.bth.psn);
    EXPECT_EQ(d->bth.ack_request, p.bth.ack_request);
    EXPECT_EQ(d->mrceth.has_value(), p.mrceth.has_value());
    if (p.mrceth) {
      EXPECT_EQ(d->mrceth->ev, p.mrceth->ev);
      EXPECT_EQ(d->mrceth->flags, p.mrceth->flags);
    }
    if (p.mdeth) {
      EXPECT_EQ(d->mdeth->msg_seq, p.mdeth->msg_seq);
      EXPECT_EQ(d->mdeth->offset, p.mdeth->offset);
    }
    EXPECT_EQ(d->reth.has_value(), p.reth.has_value());
    if (p.reth) {
      EXPECT_EQ(d->reth->va, p.reth->va);
      EXPECT_EQ(d->reth->rkey, p.reth->rkey);
      EXPECT_EQ(d->reth->length, p.reth->length);
    }
    EXPECT_EQ(d->immediate, p.immediate);
    if (p.aeth) {
      EXPECT_EQ(d->aeth->code, p.aeth->code);
      EXPECT_EQ(d->aeth->msn, p.aeth->msn);
    }
    EXPECT_EQ(d->credit_limit, p.credit_limit);
    if (p.sack) {
      EXPECT_EQ(d->sack->base_psn, p.sack->base_psn);
      EXPECT_EQ(d->sack->echo_psn, p.sack->echo_psn);
      EXPECT_EQ(d->sack->bitmap, p.sack->bitmap);
    }
    if (p.probe) {
      EXPECT_EQ(d->probe->probe_id, p.probe->probe_id);
      EXPECT_EQ(d->probe->sent_at_ns, p.probe->sent_at_ns);
    }
    ASSERT_EQ(d->payload.size(), p.payload.size());
    EXPECT_TRUE(std::equal(p.payload.begin(), p.payload.end(), d->payload.begin()));
  }
}

TEST(WireTest, RejectsEveryTruncation) {
  std::vector<uint8_t> payload(64, 0x5A);
  for (const Packet& p : SamplePackets(payload)) {
    const auto bytes = EncodeToVector(p);
    for (size_t n = 0; n < bytes.size(); ++n) {
      std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);  // own allocation: ASan sees overreads
      EXPECT_FALSE(Decode(cut)) << LayoutOf(p.bth.opcode)->name << " truncated to " << n;
    }
  }
}

TEST(WireTest, PeeksTheDecodedQpAndEvAndNothingPastTheInput) {
  std::vector<uint8_t> payload(64, 0x5A);
  for (const Packet& p : SamplePackets(payload)) {
    const auto bytes = EncodeToVector(p);
    const auto decoded = Decode(bytes);
    ASSERT_TRUE(decoded);
    EXPECT_EQ(PeekDestQp(bytes), decoded->bth.dest_qp) << LayoutOf(p.bth.opcode)->name;
    EXPECT_EQ(PeekEv(bytes), decoded->mrceth ? std::optional<uint16_t>(decoded->mrceth->ev) : std::nullopt)
        << LayoutOf(p.bth.opcode)->name;
    EXPECT_EQ(PeekRkey(bytes), decoded->reth ? std::optional<uint32_t>(decoded->reth->rkey) : std::nullopt)
        << LayoutOf(p.bth.opcode)->name;
    for (size_t n = 0; n < kBthBytes + kMrcethBytes; ++n) {
      std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));  // ASan sees overreads
      EXPECT_EQ(PeekDestQp(cut).has_value(), n >= kBthBytes);
      EXPECT_FALSE(PeekEv(cut));
      EXPECT_FALSE(PeekRkey(cut));
    }
  }
}

TEST(WireTest, RejectsEverySingleBitFlip) {
  std::vector<uint8_t> payload(16, 1);
  for (const Packet& p : SamplePackets(payload)) {
    const auto bytes = EncodeToVector(p);
    for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
      if (bit / 8 == 4) continue;  // resv8a is masked out of the ICRC by design
      auto bad = bytes;
      bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      EXPECT_FALSE(Decode(bad)) << LayoutOf(p.bth.opcode)->name << " bit " << bit;
    }
  }
}

// Re-seals a corrupted packet with a valid ICRC, to reach the checks behind it.
std::vector<uint8_t> Reseal(std::vector<uint8_t> b) {
  const uint32_t icrc = ComputeIcrc(std::span(b).first(b.size() - 4));
  for (int i = 0; i < 4; ++i) b[b.size() - 4 + i] = static_cast<uint8_t>(icrc >> (8 * i));
  return b;
}

TEST(WireTest, RejectsStructuralErrorsBehindAValidIcrc) {
  std::vector<uint8_t> payload(8, 3);
  const auto packets = SamplePackets(payload);
  ParseError err;
  auto data = EncodeToVector(packets[0]);
  auto bad = data;
  bad[0] = 0x55;  // opcode nobody speaks
  EXPECT_FALSE(Decode(Reseal(bad), &err));
  EXPECT_EQ(err, ParseError::kUnknownOpcode);
  bad = data;
  bad[1] |= 0x03;  // transport version
  EXPECT_FALSE(Decode(Reseal(bad), &err));
  EXPECT_EQ(err, ParseError::kBadTransportVersion);
  auto ack = EncodeToVector(packets[7]);
  bad = ack;
  bad[15] = 9;  // MRCETH version
  EXPECT_FALSE(Decode(Reseal(bad), &err));
  EXPECT_EQ(err, ParseError::kBadExtensionVersion);
  bad = ack;
  bad[16] = 0xE0;  // AETH reserved syndrome
  EXPECT_FALSE(Decode(Reseal(bad), &err));
  EXPECT_EQ(err, ParseError::kBadAeth);
  // Extra bytes on a header-only opcode.
  bad = ack;
  bad.insert(bad.end() - 4, {0, 0, 0, 0});
  EXPECT_FALSE(Decode(Reseal(bad), &err));
  EXPECT_EQ(err, ParseError::kUnexpectedPayload);
  // Pad count larger than the payload.
  auto last = EncodeToVector(packets[6]);  // 1 byte payload + 3 pad
  ASSERT_TRUE(Decode(last));
  bad = last;
  bad.erase(bad.end() - 8, bad.end() - 4);  // drop the 4 payload+pad bytes
  bad[1] |= 0x30;
  EXPECT_FALSE(Decode(Reseal(bad), &err));
  EXPECT_EQ(err, ParseError::kBadPad);
}

TEST(WireTest, EncodeRefusesMissingHeadersAndSmallBuffers) {
  Packet p;
  p.bth.opcode = Opcode::kMrcWriteOnly;  // needs MRCETH, MDETH, RETH
  std::vector<uint8_t> out(256);
  EXPECT_EQ(Encode(p, out), 0u);
  p.mrceth = Mrceth{};
  p.mdeth = Mdeth{};
  p.reth = Reth{};
  EXPECT_GT(Encode(p, out), 0u);
  std::vector<uint8_t> tiny(EncodedSize(p) - 1);
  EXPECT_EQ(Encode(p, tiny), 0u);
}

TEST(IcrcTest, ZerosWithoutReadingThemMatchTheDefinition) {
  const std::vector<uint8_t> zeros(70000, 0);
  for (uint32_t state : {0u, 1u, 0xFFFFFFFFu, 0x12345678u, 0x80000000u})
    for (size_t count : {0, 1, 2, 3, 7, 8, 63, 64, 1000, 2048, 4096, 4099, 65536, 70000})
      ASSERT_EQ(Crc32Zeros(state, count), Crc32Bitwise(state, std::span(zeros).first(count)))
          << "state " << state << " count " << count;
}

TEST(IcrcTest, CoversTheOnesAndTheMaskedBthAndEverythingAfter) {
  std::vector<uint8_t> pkt(300);
  for (size_t i = 0; i < pkt.size(); ++i) pkt[i] = static_cast<uint8_t>(i * 29 + 3);
  for (size_t length : {12, 13, 40, 63, 64, 65, 100, 300}) {
    std::vector<uint8_t> covered(8, 0xFF);
    covered.insert(covered.end(), pkt.begin(), pkt.begin() + length);
    covered[8 + 4] = 0xFF;  // resv8a
    const auto whole = std::span<const uint8_t>(pkt).first(length);
    EXPECT_EQ(ComputeIcrc(whole), ~Crc32Bitwise(0xFFFFFFFFu, covered)) << "length " << length;
    // Held as a head, zeros and a tail: the zeros in the middle of the same bytes.
    std::vector<uint8_t> with_zeros(covered.begin(), covered.begin() + 8 + length / 2);
    with_zeros.insert(with_zeros.end(), 77, 0);
    with_zeros.insert(with_zeros.end(), covered.begin() + 8 + length / 2, covered.end());
    if (length / 2 >= 12) {
      EXPECT_EQ(ComputeIcrc(whole.first(length / 2), 77, whole.subspan(length / 2)),
                ~Crc32Bitwise(0xFFFFFFFFu, with_zeros)) << "length " << length;
    }
  }
}

// A datagram held without its zero run, and where the run belongs in the whole datagram.
struct Elided {
  std::vector<uint8_t> stored;
  ZeroRun run;
};
Elided EncodeElided(const Packet& p) {
  Elided e{std::vector<uint8_t>(EncodedSize(p)), {}};
  const size_t length = Encode(p, e.stored, &e.run);
  EXPECT_EQ(length, EncodedSize(p));
  e.stored.resize(length - e.run.bytes);
  return e;
}
std::vector<uint8_t> Whole(const Elided& e) {
  std::vector<uint8_t> whole = e.stored;
  whole.insert(whole.begin() + e.run.at, e.run.bytes, 0);
  return whole;
}

TEST(WireTest, ZeroRunsAreLeftOutAndTakenBackByteForByte) {
  std::vector<uint8_t> bytes(64);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i + 1);
  // All zeros (a Write from a zero-filled region), zeros among bytes, odd sizes (pad), RC and MRC.
  for (Packet p : SamplePackets(bytes)) {
    if (!LayoutOf(p.bth.opcode)->payload) continue;
    for (auto [head, zeros, tail] : {std::array<size_t, 3>{0, 4096, 0}, {5, 3000, 11}, {0, 1, 0}, {3, 2, 0}}) {
      SCOPED_TRACE(std::string(LayoutOf(p.bth.opcode)->name) + " zeros " + std::to_string(zeros));
      std::vector<uint8_t> payload(bytes.begin(), bytes.begin() + head + tail);
      p.payload = payload;
      p.payload_zeros = {static_cast<uint32_t>(head), static_cast<uint32_t>(zeros)};
      const auto full = EncodeToVector(p);  // the zeros written
      const Elided e = EncodeElided(p);
      ASSERT_EQ(e.run.bytes, zeros);
      EXPECT_EQ(Whole(e), full) << "the same datagram, ICRC included";
      // Decoded from either form, the payload is the same bytes.
      std::vector<uint8_t> expected(head + zeros + tail, 0);
      std::copy_n(payload.begin(), head, expected.begin());
      std::copy_n(payload.begin() + head, tail, expected.end() - tail);
      for (auto decoded : {Decode(full), Decode(e.stored, nullptr, e.run)}) {
        ASSERT_TRUE(decoded);
        ASSERT_EQ(PayloadBytes(*decoded), expected.size());
        std::vector<uint8_t> placed(expected.size(), 0xEE);
        CopyPayload(*decoded, placed.data());
        EXPECT_EQ(placed, expected);
        EXPECT_EQ(decoded->bth.psn, p.bth.psn);
      }
    }
  }
  // Without `elided`, Encode writes the zeros; a packet without zeros elides nothing.
  Packet ack = SamplePackets(bytes)[7];
  ZeroRun run{1, 1};
  std::vector<uint8_t> out(EncodedSize(ack));
  EXPECT_EQ(Encode(ack, out, &run), out.size());
  EXPECT_EQ(run.bytes, 0u);
}

TEST(WireTest, RejectsAZeroRunOutsideThePayloadOrOfTheWrongLength) {
  std::vector<uint8_t> none;
  Packet p = SamplePackets(none)[5];  // MRC_WRITE_MIDDLE
  p.payload_zeros = {0, 1024};
  const Elided e = EncodeElided(p);
  ASSERT_TRUE(Decode(e.stored, nullptr, e.run));
  ParseError err;
  EXPECT_FALSE(Decode(e.stored, &err, {e.run.at - 1, e.run.bytes}));  // would start in the headers
  EXPECT_EQ(err, ParseError::kBadZeroRun);
  EXPECT_FALSE(Decode(e.stored, &err, {static_cast<uint32_t>(e.stored.size() - 3), e.run.bytes}));  // in the ICRC
  EXPECT_EQ(err, ParseError::kBadZeroRun);
  EXPECT_FALSE(Decode(e.stored, &err, {e.run.at, e.run.bytes + 4}));  // more zeros than were sent
  EXPECT_EQ(err, ParseError::kBadIcrc);
  EXPECT_FALSE(Decode(e.stored, &err));  // none
  EXPECT_EQ(err, ParseError::kBadIcrc);
  // Zeros on a header-only opcode.
  Packet ack = SamplePackets(none)[7];
  std::vector<uint8_t> out(EncodedSize(ack));
  ASSERT_GT(Encode(ack, out), 0u);
  EXPECT_FALSE(Decode(out, &err, {static_cast<uint32_t>(out.size() - 4), 4}));
  EXPECT_EQ(err, ParseError::kBadIcrc);
  ack.payload_zeros = {0, 4};
  EXPECT_EQ(Encode(ack, out), 0u) << "no payload on an ACK, zeros neither";
}

TEST(WireTest, PsnUnwrapIsNearestAcrossWrap) {
  const uint64_t ref = (uint64_t{1} << 32) + 0xFFFFF0;
  EXPECT_EQ(UnwrapPsn(0xFFFFF0, ref), ref);
  EXPECT_EQ(UnwrapPsn(0x000005, ref), ref + 0x15);
  EXPECT_EQ(UnwrapPsn(0xFFFFE0, ref), ref - 0x10);
  EXPECT_EQ(ToWirePsn(ref + 0x15), 0x000005u);
}

// tshark's InfiniBand dissector must decode opcode, destination QP and PSN of both modes.
TEST(WireTest, TsharkDecodesBthOfOurPackets) {
  if (std::system("command -v tshark >/dev/null 2>&1") != 0) GTEST_SKIP() << "tshark not installed";
  const std::string path = "/tmp/mrc_wire_test_" + std::to_string(getpid()) + ".pcap";
  std::vector<uint8_t> payload(100, 0x42);
  const auto packets = SamplePackets(payload);
  {
    PcapWriter pcap(path);
    ASSERT_TRUE(pcap.ok());
    Ipv6Address a{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    Ipv6Address b = a;
    b[15] = 2;
    int i = 0;
    for (Packet p : packets) {
      p.bth.dest_qp = 0x100 + i;
      p.bth.psn = 0x10000 * i + 7;
      pcap.WriteUdp(Timestamp::FromNanoseconds(i * 1000), a, 49152 + i, b, kRoceV2UdpPort,
                    EncodeToVector(p));
      ++i;
    }
  }
  const std::string cmd = "tshark -r " + path +
                          " -d udp.port==4791,infiniband -T fields -E separator=, "
                          "-e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn "
                          "2>/dev/null";
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, f)) out += buf;
    pclose(f);
  }
  std::remove(path.c_str());
  std::istringstream lines(out);
  std::string line;
  int i = 0;
  for (const Packet& p : packets) {
    ASSERT_TRUE(std::getline(lines, line)) << "tshark output ended at packet " << i << ":\n" << out;
    char want[64];  // tshark prints the QPN as 0x%06x
    std::snprintf(want, sizeof want, "%d,0x%06x,%d", static_cast<int>(p.bth.opcode), 0x100 + i,
                  0x10000 * i + 7);
    EXPECT_EQ(line, want) << LayoutOf(p.bth.opcode)->name;
    ++i;
  }
}

}  // namespace
}  // namespace mrclab::mrc
