// Asio driver end to end: creates its own namespaces (mrct-<pid>-a/b) joined by veths, runs
// RunPerf transfers across them and checks every byte. Needs root; skipped otherwise.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>

#include "mrc/asio/netns.h"
#include "mrc/asio/perf.h"
#include "mrc/asio/udp_offload.h"
#include "mrc/asio/veth_pair_testing.h"

namespace mrclab::mrc {
namespace {

using testing::CanCreateNamespaces;
using testing::VethNamespacePair;

class AsioPerfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CanCreateNamespaces()) GTEST_SKIP() << "needs root and iproute2";
    net_ = std::make_unique<VethNamespacePair>("mrct-", 2);
  }
  PerfConfig Config(TransportMode mode, int evs, EvMode ev_mode = EvMode::kUdp) {
    PerfConfig c;
    c.transport = mode;
    c.ev_mode = ev_mode;
    for (int p = 0; p < 2; ++p) {
      c.server_ports.push_back({net_->ns_b(), net_->address_b(p), p});
      c.client_ports.push_back({net_->ns_a(), net_->address_a(p), p});
    }
    for (int i = 0; i < evs; ++i) {
      const int plane = i % 2;
      c.evs.push_back({plane, net_->address_b(plane), static_cast<uint16_t>(50000 + i)});
      if (ev_mode == EvMode::kSrv6)
        c.reverse_evs.push_back({plane, net_->address_a(plane), 0});
    }
    c.message_bytes = 256 * 1024;
    c.total_bytes = 16 << 20;
    c.max_outstanding_messages = 8;
    c.timeout_seconds = 20;
    return c;
  }
  void ExpectVerified(const PerfResult& r, const PerfConfig& c) {
    ASSERT_TRUE(r.ok) << r.error << "\n" << r.ToJson().dump(2);
    EXPECT_EQ(r.bytes_verified, c.total_bytes);
    EXPECT_EQ(r.verify_failures, 0u);
    EXPECT_GT(r.goodput_gbps, 0.0);
  }
  std::unique_ptr<VethNamespacePair> net_;
};

TEST_F(AsioPerfTest, MrcUdpModeSpraysOverAllEvsAndPlanes) {
  const auto c = Config(TransportMode::kMrc, 8);
  const PerfResult r = RunPerf(c);
  ExpectVerified(r, c);
  ASSERT_EQ(r.evs.size(), 8u);
  for (const auto& e : r.evs) EXPECT_GT(e.tx_data, 0u) << "ev " << e.id;
  const auto j = r.ToJson();
  EXPECT_EQ(j["transport"], "mrc");
  EXPECT_EQ(j["evs"].size(), 8u);
}

TEST_F(AsioPerfTest, MrcSrv6ModeSendsPerEvDestinations) {
  // Without SRv6 routes in this pair the "container" is the peer address itself; this covers
  // the srv6 send path (shared port socket, per-message destination).
  const auto c = Config(TransportMode::kMrc, 4, EvMode::kSrv6);
  ExpectVerified(RunPerf(c), c);
}

TEST_F(AsioPerfTest, Srv6ModeSendsEachPacketToItsOwnEvsDestination) {
  // EVs of one plane share the port's socket; only their destinations differ. EV 1 leads to an
  // address where nothing listens: none of its packets may arrive at the server, while EV 0
  // carries the transfer.
  ASSERT_EQ(std::system(("ip -n " + net_->ns_b() + " addr add fd00:99:0::3/64 dev mrcv0b nodad").c_str()), 0);
  auto c = Config(TransportMode::kMrc, 0, EvMode::kSrv6);
  c.evs = {{0, net_->address_b(0), 0}, {0, "fd00:99:0::3", 0}};
  c.reverse_evs = {{0, net_->address_a(0), 0}, {0, net_->address_a(0), 0}};
  const PerfResult r = RunPerf(c);
  ExpectVerified(r, c);
  ASSERT_EQ(r.evs.size(), 2u);
  EXPECT_GT(r.evs[1].losses, 0u);
  EXPECT_EQ(r.evs[1].server_rx_packets, 0u) << r.ToJson()["evs"].dump();
  EXPECT_GT(r.evs[0].server_rx_packets, 0u);
}

TEST_F(AsioPerfTest, RcBaselineUsesOnePath) {
  const auto c = Config(TransportMode::kRc, 8);
  const PerfResult r = RunPerf(c);
  ExpectVerified(r, c);
  int used = 0;
  for (const auto& e : r.evs) used += e.tx_data > 0;
  EXPECT_EQ(used, 1);
}

TEST_F(AsioPerfTest, OneEvSendsGsoSuperPacketsThatTheLinkCutsIntoDatagrams) {
  const auto c = Config(TransportMode::kMrc, 1);
  const PerfResult r = RunPerf(c);
  ExpectVerified(r, c);
  EXPECT_GT(r.client_io.tx_gso_messages, 0u);
  EXPECT_GT(r.client_io.tx_datagrams, r.client_io.tx_syscalls);
  // Like a lab link, the veth carries single packets (gso_max_segs 1): nothing arrives coalesced.
  EXPECT_EQ(r.server_io.rx_gro_messages, 0u);
}

TEST_F(AsioPerfTest, GroDeliversSuperPacketsWholeWhereThePathKeepsThem) {
  // Loopback keeps GSO super-packets whole up to the receiving socket; both ends in namespace a.
  for (const char* a : {"fd00:98::1", "fd00:98::2"})
    ASSERT_EQ(std::system(("ip -n " + net_->ns_a() + " addr add " + a + "/128 dev lo nodad").c_str()), 0);
  auto c = Config(TransportMode::kMrc, 1);
  c.server_ports = {{net_->ns_a(), "fd00:98::2", 0}};
  c.client_ports = {{net_->ns_a(), "fd00:98::1", 0}};
  c.evs = {{0, "fd00:98::2", 50000}};
  c.mtu = 4096;
  const PerfResult r = RunPerf(c);
  ExpectVerified(r, c);
  EXPECT_GT(r.server_io.rx_gro_messages, 0u);
  EXPECT_GT(r.server_io.rx_datagrams, r.server_io.rx_syscalls);
}

TEST_F(AsioPerfTest, WithoutOffloadEveryMessageIsOneDatagram) {
  auto c = Config(TransportMode::kMrc, 1);
  c.segmentation_offload = false;
  const PerfResult r = RunPerf(c);
  ExpectVerified(r, c);
  EXPECT_EQ(r.client_io.tx_gso_messages, 0u);
  EXPECT_EQ(r.server_io.rx_gro_messages, 0u);
}

TEST_F(AsioPerfTest, SocketsLiveInTheirNamespace) {
  // The address of side b exists only in namespace b: binding it from namespace a fails.
  UdpSocketOptions o;
  o.netns = net_->ns_a();
  o.local_address = net_->address_b(0);
  EXPECT_THROW(OpenUdpSocket(o), NetnsError);
  o.netns = net_->ns_b();
  const int fd = OpenUdpSocket(o);
  EXPECT_GE(fd, 0);
  close(fd);
}

TEST_F(AsioPerfTest, SetupErrorsAreReportedNotThrown) {
  auto c = Config(TransportMode::kMrc, 2);
  c.server_ports[0].netns = "mrct-does-not-exist";
  const PerfResult r = RunPerf(c);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("mrct-does-not-exist"), std::string::npos) << r.error;
}

TEST(UdpGsoRuns, EqualPacketsShareARunOnlyTheLastMayBeShorter) {
  const std::vector<size_t> lengths = {100, 100, 100, 40, 100, 100, 200, 200};
  const auto runs = UdpGsoRuns(lengths);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].first, 0u);
  EXPECT_EQ(runs[0].count, 4u);  // 100 100 100 40
  EXPECT_EQ(runs[0].segment_bytes, 100u);
  EXPECT_EQ(runs[1].first, 4u);
  EXPECT_EQ(runs[1].count, 2u);  // a longer packet starts a new run
  EXPECT_EQ(runs[2].first, 6u);
  EXPECT_EQ(runs[2].count, 2u);
  EXPECT_EQ(runs[2].segment_bytes, 200u);
}

TEST(UdpGsoRuns, RunsStayWithinTheKernelsLimits) {
  const std::vector<size_t> big(20, 8236), small(150, 100);
  for (const auto& lengths : {big, small}) {
    size_t covered = 0;
    for (const GsoRun& r : UdpGsoRuns(lengths)) {
      EXPECT_EQ(r.first, covered);
      EXPECT_LE(r.count, kMaxGsoSegments);
      EXPECT_LE(r.count * r.segment_bytes, kMaxGsoBytes);
      covered += r.count;
    }
    EXPECT_EQ(covered, lengths.size());
  }
  EXPECT_EQ(UdpGsoRuns(big).front().count, 7u);  // 7 x 8236 bytes fit one IPv6 payload
  EXPECT_TRUE(UdpGsoRuns({}).empty());
}

}  // namespace
}  // namespace mrclab::mrc
