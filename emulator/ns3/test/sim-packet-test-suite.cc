// SimPacket: addresses to and from text, wire size, payloads without their zero runs.
#include <memory>
#include <stdexcept>
#include <vector>

#include "emulator/ns3/model/sim_packet.h"
#include "emulator/ns3/model/zero_run.h"
#include "ns3/test.h"

namespace mrclab::emulator::sim {
namespace {

class AddressTextTestCase : public ns3::TestCase {
 public:
  AddressTextTestCase() : ns3::TestCase("IPv6 text parses to bytes and formats back (RFC 5952)") {}

 private:
  void DoRun() override {
    const Ipv6Address container = ParseIpv6Address("fcbb:0:1201:1101:1202:1303::");
    const Ipv6Address expected = {0xfc, 0xbb, 0, 0, 0x12, 0x01, 0x11, 0x01,
                                  0x12, 0x02, 0x13, 0x03, 0,    0,    0,    0};
    NS_TEST_ASSERT_MSG_EQ((container == expected), true, "container bytes");
    NS_TEST_ASSERT_MSG_EQ(FormatIpv6Address(container), "fcbb:0:1201:1101:1202:1303::",
                          "container text");
    NS_TEST_ASSERT_MSG_EQ(FormatIpv6Address(ParseIpv6Address("FD00:0000:0012::0002")),
                          "fd00:0:12::2", "canonical form");
    NS_TEST_ASSERT_MSG_EQ(FormatIpv6Address(Ipv6Address{}), "::", "all zero");
    for (const char* bad : {"fd00::12::2", "fcbb:0:1201", "10.0.0.1", "", "fd00::/64"}) {
      bool threw = false;
      try {
        ParseIpv6Address(bad);
      } catch (const std::invalid_argument&) {
        threw = true;
      }
      NS_TEST_ASSERT_MSG_EQ(threw, true, "'" << bad << "' is refused");
    }
  }
};

class WireBytesTestCase : public ns3::TestCase {
 public:
  WireBytesTestCase() : ns3::TestCase("WireBytes adds IPv6, UDP and Ethernet overhead") {}

 private:
  void DoRun() override {
    SimPacket p;
    p.payload_bytes = 1000;
    NS_TEST_ASSERT_MSG_EQ(p.WireBytes(), 1066u, "1000 + 40 + 8 + 18");
    NS_TEST_ASSERT_MSG_EQ(p.dst_port, kRoceV2Port, "RoCEv2 port by default");
    NS_TEST_ASSERT_MSG_EQ(p.ecn_capable, true, "ECN-capable by default");
    NS_TEST_ASSERT_MSG_EQ(p.ecn_ce, false, "not marked by default");
  }
};

class ZeroRunTestCase : public ns3::TestCase {
 public:
  ZeroRunTestCase()
      : ns3::TestCase("a datagram travels without its longest zero run and comes back byte for byte; "
                      "short runs travel as bytes") {}

 private:
  // Sets a payload from `datagram`, checks the stored size, and that WholePayload restores it.
  void RoundTrip(const std::vector<uint8_t>& datagram, size_t stored_bytes, const char* what) {
    PayloadPool& pool = *pool_;
    SimPacket p;
    SetPayload(p, datagram, pool);
    NS_TEST_ASSERT_MSG_EQ(p.payload_bytes, datagram.size(), what << ": payload_bytes is the whole size");
    NS_TEST_ASSERT_MSG_EQ(p.payload->size(), stored_bytes, what << ": stored bytes");
    NS_TEST_ASSERT_MSG_EQ(p.payload->size() + p.zero_run_bytes, datagram.size(), what << ": sizes add up");
    std::vector<uint8_t> scratch;
    const std::span<const uint8_t> whole = WholePayload(p, scratch);
    const bool same = std::vector<uint8_t>(whole.begin(), whole.end()) == datagram;
    NS_TEST_ASSERT_MSG_EQ(same, true, what << ": byte for byte");
  }

  void DoRun() override {
    pool_ = std::make_shared<PayloadPool>();
    // Headers, 4096 zeros, a 4-byte checksum: 60 + 4 bytes are stored.
    std::vector<uint8_t> datagram(60 + 4096 + 4, 0);
    for (size_t i = 0; i < 60; ++i) datagram[i] = static_cast<uint8_t>(i + 1);
    for (size_t i = 0; i < 4; ++i) datagram[60 + 4096 + i] = 0xa0;
    datagram[10] = 0;  // a short run inside the headers is not the longest
    const ZeroRun run = LongestZeroRun(datagram);
    NS_TEST_ASSERT_MSG_EQ(run.at, 60u, "run start");
    NS_TEST_ASSERT_MSG_EQ(run.bytes, 4096u, "run length");
    RoundTrip(datagram, 64, "zeros between headers and checksum");

    // Odd offsets and lengths (word-wise scanning must not skip or overrun a byte).
    for (size_t start : {0, 1, 7, 9, 13}) {
      for (size_t len : {64, 65, 71, 200}) {
        std::vector<uint8_t> d(start + len + 3, 0x55);
        std::fill_n(d.begin() + static_cast<std::ptrdiff_t>(start), len, 0);
        const ZeroRun r = LongestZeroRun(d);
        NS_TEST_ASSERT_MSG_EQ(r.at, start, "start " << start << " len " << len);
        NS_TEST_ASSERT_MSG_EQ(r.bytes, len, "start " << start << " len " << len);
        RoundTrip(d, start + 3, "odd run");
      }
    }
    // One byte that is not zero anywhere in a long run (either half of a 64-byte block, which
    // the AVX2 scan tests at once) splits it.
    for (size_t k = 0; k < 600; k += 7) {
      std::vector<uint8_t> d(8 + 600, 0);
      std::fill_n(d.begin(), 8, 0x11);
      d[8 + k] = 0x80;
      const ZeroRun r = LongestZeroRun(d);
      const size_t before = k, after = 600 - k - 1;
      NS_TEST_ASSERT_MSG_EQ(r.bytes, std::max(before, after), "a byte at " << k << " splits the run");
      const size_t at = before >= after ? 8 : 8 + k + 1;
      NS_TEST_ASSERT_MSG_EQ(r.at, at, "a byte at " << k << ": where the run starts");
    }
    // A run at the very end, and a datagram of nothing but zeros.
    std::vector<uint8_t> tail(100, 0);
    tail[0] = 9;
    RoundTrip(tail, 1, "run at the end");
    RoundTrip(std::vector<uint8_t>(300, 0), 0, "all zeros");
    // Real payload: no long run, stored whole.
    std::vector<uint8_t> real(1000);
    for (size_t i = 0; i < real.size(); ++i) real[i] = static_cast<uint8_t>(i * 7 + 1);
    real[500] = real[501] = 0;
    NS_TEST_ASSERT_MSG_EQ(LongestZeroRun(real).bytes, 2u, "a 2-byte run");
    RoundTrip(real, 1000, "short run stays");
    NS_TEST_ASSERT_MSG_EQ(LongestZeroRun(std::vector<uint8_t>(50, 1)).bytes, 0u, "no zero byte");
    // Buffers return to the pool when the last packet holding them is gone.
    const bool recycled = pool_->FreeBuffers() > 0;
    NS_TEST_ASSERT_MSG_EQ(recycled, true, "buffers recycled");
  }

  std::shared_ptr<PayloadPool> pool_;
};

class SimPacketTestSuite : public ns3::TestSuite {
 public:
  SimPacketTestSuite() : ns3::TestSuite("mrclab-sim-packet", UNIT) {
    AddTestCase(new AddressTextTestCase, QUICK);
    AddTestCase(new WireBytesTestCase, QUICK);
    AddTestCase(new ZeroRunTestCase, QUICK);
  }
};

SimPacketTestSuite g_sim_packet_test_suite;

}  // namespace
}  // namespace mrclab::emulator::sim
