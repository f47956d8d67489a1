// SimPacket: addresses to and from text, wire size, pooled payload buffers.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include "emulator/ns3/model/payload_pool.h"
#include "emulator/ns3/model/sim_packet.h"
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

class PayloadPoolTestCase : public ns3::TestCase {
 public:
  PayloadPoolTestCase()
      : ns3::TestCase("a payload holds its bytes; its buffer returns to the pool with its last packet and is reused, or "
                       "outlives a pool that went first") {}

 private:
  void DoRun() override {
    auto pool = std::make_shared<PayloadPool>();
    const std::vector<uint8_t> bytes = {1, 2, 3, 4, 5}, other = {6, 7};
    auto first = pool->Copy(bytes);
    NS_TEST_ASSERT_MSG_EQ(std::ranges::equal(*first, bytes), true, "its bytes");
    const auto* buffer = first.get();
    auto shared = first;
    first.reset();
    NS_TEST_ASSERT_MSG_EQ(pool->FreeBuffers(), 0u, "still held by a packet");
    shared.reset();
    NS_TEST_ASSERT_MSG_EQ(pool->FreeBuffers(), 1u, "back in the pool");
    auto second = pool->Copy(other);
    NS_TEST_ASSERT_MSG_EQ((second.get() == buffer), true, "the freed buffer is reused");
    NS_TEST_ASSERT_MSG_EQ(std::ranges::equal(*second, other), true, "with the new bytes only");
    PayloadPool pool2;
    // A pool that goes first leaves its held buffers to their last holders.
    Payload kept = pool->Copy(bytes), copy = kept;
    pool.reset();
    NS_TEST_ASSERT_MSG_EQ(std::ranges::equal(*copy, bytes), true, "a held buffer outlives its pool");
    kept.reset();
    NS_TEST_ASSERT_MSG_EQ(std::ranges::equal(*copy, bytes), true, "and its other holder still reads it");
    const std::vector<uint8_t> large(Payload::kInlineBytes + 1, 7);
    const Payload own = Payload::Own(large);
    NS_TEST_ASSERT_MSG_EQ(std::ranges::equal(*Payload(own), large), true, "a buffer of no pool, past the inline bytes");
    // A reused buffer takes bytes of any size, inline or not.
    Payload big = pool2.Copy(large);
    const void* buffer2 = big.get();
    big.reset();
    Payload small = pool2.Copy(other);
    NS_TEST_ASSERT_MSG_EQ((small.get() == buffer2) && std::ranges::equal(*small, other), true, "large, then small");
    small.reset();
    big = pool2.Copy(large);
    NS_TEST_ASSERT_MSG_EQ((big.get() == buffer2) && std::ranges::equal(*big, large), true, "and large again");
  }
};

class SimPacketTestSuite : public ns3::TestSuite {
 public:
  SimPacketTestSuite() : ns3::TestSuite("mrclab-sim-packet", UNIT) {
    AddTestCase(new AddressTextTestCase, QUICK);
    AddTestCase(new WireBytesTestCase, QUICK);
    AddTestCase(new PayloadPoolTestCase, QUICK);
  }
};

SimPacketTestSuite g_sim_packet_test_suite;

}  // namespace
}  // namespace mrclab::emulator::sim
