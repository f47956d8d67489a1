// MRC transfers over the loop driver: ordering, reordering, targeted and random loss,
// Write-with-Immediate credits, PSN wrap, access errors. Every test checks bytes end to end.
#include <gtest/gtest.h>

#include "mrc/loop/loop_pair_testing.h"

namespace mrclab::mrc {
namespace {

using testing::LoopPair;
using testing::SmallConfig;

// Decodes a datagram the loop network is about to carry; used by loss masks.
std::optional<Packet> Peek(const DropContext& c) { return Decode(c.bytes); }
bool IsData(const Packet& p) { return p.mdeth.has_value() || p.bth.opcode <= Opcode::kRcWriteOnlyImm; }

TEST(LoopTransferTest, InOrderSingleEv) {
  LoopPair pair(SmallConfig(TransportMode::kMrc, 1));
  pair.PostWrites(20, 10000, false);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
  EXPECT_EQ(pair.qa().stats().retransmissions, 0u);
}

TEST(LoopTransferTest, ReorderedAcrossEvsWithDifferentDelays) {
  QpConfig config = SmallConfig(TransportMode::kMrc, 8);
  LoopPair pair(config);
  // EV i is i*3 us slower than EV 0: packets arrive heavily reordered.
  for (uint16_t ev = 0; ev < 8; ++ev)
    for (int h : {0, 1}) pair.net().Path(h, ev).delay = Duration::Microseconds(5 + 3 * ev);
  pair.PostWrites(30, 20000, true);
  pair.PostRecvs(30);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
  ASSERT_EQ(pair.recv_done().size(), 30u);
  for (size_t i = 0; i < 30; ++i) EXPECT_EQ(pair.recv_done()[i].immediate, i + 1);
  EXPECT_GT(pair.qb().stats().data_packets_received, 0u);
}

TEST(LoopTransferTest, ReorderedByShuffledDelaysPerPacket) {
  LoopPair pair(SmallConfig(TransportMode::kMrc, 4));
  // Every datagram of EV 1 takes 40 us longer; with per-EV FIFO this still reorders the spray.
  pair.net().Path(0, 1).delay = Duration::Microseconds(45);
  pair.PostWrites(10, 50000, false);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
}

struct LossCase {
  const char* name;
  std::function<bool(const Packet&, uint64_t data_index, uint64_t total)> drop;
};

class LoopLossTest : public ::testing::TestWithParam<int> {};

// Drops data packets (first transmissions only) selected by `which`.
void RunLossCase(const std::function<bool(uint64_t data_index, uint64_t total)>& which,
                 TransportMode mode, int evs) {
  constexpr int kMessages = 8;
  constexpr uint32_t kSize = 16 * 1024;
  const uint64_t total = kMessages * (kSize / 1024);
  LoopPair pair(SmallConfig(mode, evs));
  auto data_index = std::make_shared<uint64_t>(0);
  for (uint16_t ev = 0; ev < evs; ++ev)
    pair.net().Path(0, ev).drop = [=](const DropContext& c) {
      auto p = Peek(c);
      if (!p || !IsData(*p) || (p->mrceth && (p->mrceth->flags & Mrceth::kRetransmit))) return false;
      return which((*data_index)++, total);
    };
  pair.PostWrites(kMessages, kSize, true);
  pair.PostRecvs(kMessages);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
  EXPECT_EQ(pair.recv_done().size(), static_cast<size_t>(kMessages));
  EXPECT_GT(pair.qa().stats().retransmissions, 0u);
  EXPECT_EQ(pair.qa().stats().spurious_losses, 0u);  // real losses are never taken back
}

TEST(LoopTransferTest, LossOfFirstPacket) {
  RunLossCase([](uint64_t i, uint64_t) { return i == 0; }, TransportMode::kMrc, 8);
}
TEST(LoopTransferTest, LossOfLastPacket) {
  RunLossCase([](uint64_t i, uint64_t total) { return i == total - 1; }, TransportMode::kMrc, 8);
}
TEST(LoopTransferTest, LossOfEveryFifthPacket) {
  RunLossCase([](uint64_t i, uint64_t) { return i % 5 == 4; }, TransportMode::kMrc, 8);
}
TEST(LoopTransferTest, LossOfEverySecondPacketSingleEv) {
  RunLossCase([](uint64_t i, uint64_t) { return i % 2 == 1; }, TransportMode::kMrc, 1);
}

TEST(LoopTransferTest, LostAcksAreRecovered) {
  LoopPair pair(SmallConfig(TransportMode::kMrc, 4));
  for (uint16_t ev = 0; ev < 4; ++ev)
    pair.net().Path(1, ev).drop = [](const DropContext& c) { return c.index_from_host % 3 == 0; };
  pair.PostWrites(10, 30000, false);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
}

TEST(LoopTransferTest, RandomLossBothDirections) {
  LoopPair pair(SmallConfig(TransportMode::kMrc, 16), 4 << 20);
  PathSpec lossy;
  lossy.loss_rate = 0.03;
  pair.net().SetDefaultPath(lossy);
  pair.PostWrites(64, 64 * 1024, true);
  pair.PostRecvs(64);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
  EXPECT_EQ(pair.recv_done().size(), 64u);
  EXPECT_EQ(pair.qa().state(), QpState::kReadyToSend);
}

TEST(LoopTransferTest, RateLimitedPathsAndCongestionControl) {
  QpConfig config = SmallConfig(TransportMode::kMrc, 8);
  config.cc.initial_window = Bytes{1 << 20};
  LoopPair pair(config, 8 << 20);
  PathSpec path;
  path.rate = BitsPerSecond::Gbps(10);
  path.queue_limit = Bytes{64 * 1024};
  pair.net().SetDefaultPath(path);
  pair.net().SetHostEgressRate(0, BitsPerSecond::Gbps(25));
  pair.PostWrites(8, 1 << 20, false);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
  // 8 MiB at 25 Gb/s is ~2.7 ms; congestion control must keep it well below a drop storm.
  EXPECT_LT(pair.net().now().nanoseconds(), Duration::Milliseconds(20).nanoseconds());
  EXPECT_LT(pair.qa().congestion_window().count, uint64_t{1} << 20);
}

TEST(LoopTransferTest, WriteWithImmediateIsBoundedByPostedReceives) {
  LoopPair pair(SmallConfig(TransportMode::kMrc, 4));
  pair.PostWrites(10, 4096, true);
  pair.PostRecvs(3);
  pair.RunToCompletion(Duration::Milliseconds(5));
  EXPECT_EQ(pair.send_done().size(), 3u);
  EXPECT_EQ(pair.recv_done().size(), 3u);
  EXPECT_EQ(pair.qb().stats().access_errors, 0u);
  pair.PostRecvs(7);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
  EXPECT_EQ(pair.recv_done().size(), 10u);
}

TEST(LoopTransferTest, ZeroLengthWriteWithImmediate) {
  LoopPair pair(SmallConfig(TransportMode::kMrc, 2));
  pair.PostRecvs(1);
  pair.PostWrites(1, 0, true);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  ASSERT_EQ(pair.recv_done().size(), 1u);
  EXPECT_EQ(pair.recv_done()[0].byte_len, 0u);
  EXPECT_EQ(pair.recv_done()[0].immediate, 1u);
}

TEST(LoopTransferTest, PsnWrapsAround) {
  QpConfig config = SmallConfig(TransportMode::kMrc, 4);
  config.initial_psn = 0xFFFFF0;
  LoopPair pair(config);
  pair.PostWrites(4, 16 * 1024, false);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
}

TEST(LoopTransferTest, BadRkeyIsARemoteAccessError) {
  LoopPair pair(SmallConfig(TransportMode::kMrc, 2));
  WriteRequest wr;
  wr.wr_id = 1;
  wr.lkey = 1;  // the source region is the first registered on A
  wr.local_addr = reinterpret_cast<uint64_t>(pair.src().data());
  wr.length = 100;
  wr.remote_addr = reinterpret_cast<uint64_t>(pair.dst().data());
  wr.rkey = 0xBAD;
  ASSERT_EQ(pair.qa().PostWrite(wr), PostResult::kOk);
  ASSERT_TRUE(pair.RunUntil([&] { return !pair.send_done().empty(); }, Duration::Milliseconds(50)));
  EXPECT_EQ(pair.send_done()[0].status, WcStatus::kRemoteAccessError);
  EXPECT_EQ(pair.qa().state(), QpState::kError);
  EXPECT_EQ(pair.dst()[0], 0);
}

TEST(LoopTransferTest, DeterministicForASeed) {
  auto run = [] {
    LoopPair pair(SmallConfig(TransportMode::kMrc, 8));
    PathSpec lossy;
    lossy.loss_rate = 0.02;
    pair.net().SetDefaultPath(lossy);
    pair.PostWrites(16, 32 * 1024, false);
    EXPECT_TRUE(pair.RunToCompletion());
    return std::make_pair(pair.net().now().nanoseconds(), pair.qa().stats().retransmissions);
  };
  EXPECT_EQ(run(), run());
}

}  // namespace
}  // namespace mrclab::mrc
