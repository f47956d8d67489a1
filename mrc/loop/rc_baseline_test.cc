// RoCEv2 RC baseline mode: one ECMP-hashed path, go-back-N on NAK and timeout, QP error when
// the retry count runs out.
#include <gtest/gtest.h>

#include "mrc/core/ev_selector.h"
#include "mrc/loop/loop_pair_testing.h"

namespace mrclab::mrc {
namespace {

using testing::LoopPair;
using testing::SmallConfig;

PathSpec TenGigPath() {
  PathSpec p;
  p.rate = BitsPerSecond::Gbps(10);
  return p;
}

uint16_t RcEv(LoopPair& pair) {
  return static_cast<uint16_t>(EcmpHashIndex(pair.qa().qpn(), pair.qb().qpn(), 8));
}

TEST(RcBaselineTest, UsesOneHashedPathAndStandardOpcodes) {
  LoopPair pair(SmallConfig(TransportMode::kRc, 8));
  bool all_rc = true;
  pair.net().SetTap([&](int, uint16_t, Timestamp, std::span<const uint8_t> b) {
    auto p = Decode(b);
    all_rc = all_rc && p && static_cast<uint8_t>(p->bth.opcode) < 0xC0;
  });
  pair.PostWrites(10, 10000, true);
  pair.PostRecvs(10);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
  EXPECT_TRUE(all_rc);
  const uint16_t ev = RcEv(pair);
  for (const auto& s : pair.qa().ListEvs())
    EXPECT_EQ(s.counters.tx_data > 0, s.id == ev) << "ev " << s.id;
  EXPECT_EQ(pair.recv_done().size(), 10u);
}

TEST(RcBaselineTest, GoBackNOnLoss) {
  LoopPair pair(SmallConfig(TransportMode::kRc, 8));
  auto count = std::make_shared<int>(0);
  pair.net().Path(0, RcEv(pair)).drop = [count](const DropContext& c) {
    auto p = Decode(c.bytes);
    return p && !p->aeth && ++*count % 7 == 0 && *count < 200;
  };
  pair.PostWrites(16, 16 * 1024, false);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
  EXPECT_GT(pair.qa().stats().naks_received, 0u);
  EXPECT_GT(pair.qb().stats().naks_sent, 0u);
  // Go-back-N resends more than what was lost: everything after each hole.
  EXPECT_GT(pair.qa().stats().retransmissions, static_cast<uint64_t>(*count / 7));
}

TEST(RcBaselineTest, TailLossRecoversByTimeout) {
  LoopPair pair(SmallConfig(TransportMode::kRc, 8));
  auto dropped = std::make_shared<bool>(false);
  pair.net().Path(0, RcEv(pair)).drop = [dropped](const DropContext& c) {
    auto p = Decode(c.bytes);
    if (*dropped || !p || p->bth.opcode != Opcode::kRcWriteLast) return false;
    return *dropped = true;
  };
  pair.PostWrites(1, 8 * 1024, false);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
  EXPECT_EQ(pair.qa().stats().rto_fired, 1u);
}

TEST(RcBaselineTest, ShortOutageWithinRetryBudgetRecovers) {
  LoopPair pair(SmallConfig(TransportMode::kRc, 8));
  pair.net().SetDefaultPath(TenGigPath());
  pair.PostWrites(16, 16 * 1024, false);
  ASSERT_FALSE(pair.RunUntil([&] { return pair.send_done().size() >= 16; }, Duration::Microseconds(30)));
  pair.net().KillEv(RcEv(pair), pair.net().now(), pair.net().now() + Duration::Milliseconds(2));
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
  EXPECT_GE(pair.qa().stats().rto_fired, 3u);
  EXPECT_EQ(pair.qa().state(), QpState::kReadyToSend);
}

TEST(RcBaselineTest, RetryExhaustionIsAQpError) {
  QpConfig config = SmallConfig(TransportMode::kRc, 8);
  config.rc_retry_count = 3;
  LoopPair pair(config);
  pair.net().SetDefaultPath(TenGigPath());
  pair.PostWrites(8, 16 * 1024, false);
  ASSERT_FALSE(pair.RunUntil([&] { return pair.send_done().size() >= 8; }, Duration::Microseconds(30)));
  const Timestamp cut = pair.net().now();
  pair.net().KillEv(RcEv(pair), cut);  // the one path never heals; RC cannot route around it
  ASSERT_TRUE(pair.RunToCompletion(Duration::Seconds(1)));
  EXPECT_EQ(pair.qa().state(), QpState::kError);
  size_t i = 0;
  while (pair.send_done()[i].status == WcStatus::kSuccess) ++i;
  EXPECT_EQ(pair.send_done()[i].status, WcStatus::kRetryExceeded);
  // 1 original + 3 retries, each waiting one ACK timeout.
  EXPECT_EQ(pair.qa().stats().rto_fired, 4u);
  EXPECT_LE(pair.net().now() - cut, config.rc_ack_timeout * 5);
  // Other EVs were healthy the whole time: the baseline does not use them.
  for (const auto& s : pair.qa().ListEvs()) {
    if (s.id != RcEv(pair)) {
      EXPECT_EQ(s.counters.tx_data, 0u);
    }
  }
}

// A controller that denies RC's one path (ev_deny, or port_disable of its plane) stops it: RC
// has no other path to move to, so nothing leaves while the deny lasts (and no deadline stays
// due); allowed again, it finishes.
TEST(RcBaselineTest, DeniedPathStopsItUntilAllowed) {
  LoopPair pair(SmallConfig(TransportMode::kRc, 8));
  pair.net().SetDefaultPath(TenGigPath());
  pair.PostWrites(16, 16 * 1024, false);
  ASSERT_FALSE(pair.RunUntil([&] { return pair.send_done().size() >= 16; }, Duration::Microseconds(30)));
  const uint16_t ev = RcEv(pair);
  for (const auto& s : pair.qa().ListEvs()) EXPECT_EQ(pair.qa().SendsOn(s.id), s.id == ev) << "ev " << s.id;
  EXPECT_FALSE(pair.qa().SendsOn(8)) << "an EV it does not have";
  ASSERT_TRUE(pair.qa().DenyEv(ev, pair.net().now()));
  ASSERT_TRUE(pair.qb().DenyEv(ev, pair.net().now()));
  pair.RunUntil([] { return false; }, Duration::Milliseconds(1));  // what was on the wire lands
  const size_t done = pair.send_done().size();
  ASSERT_LT(done, 16u);
  const uint64_t sent = pair.qa().ListEvs()[ev].counters.tx_data + pair.qa().ListEvs()[ev].counters.tx_retransmits;
  uint64_t rounds = 0;
  EXPECT_FALSE(pair.RunUntil([&] { return ++rounds > 100'000; }, Duration::Milliseconds(20)));
  EXPECT_LE(rounds, 100'000u) << "a deadline stayed due while nothing could be sent";
  EXPECT_EQ(pair.send_done().size(), done);
  const auto evs = pair.qa().ListEvs();
  EXPECT_EQ(evs[ev].counters.tx_data + evs[ev].counters.tx_retransmits, sent);
  for (const auto& s : evs) EXPECT_EQ(s.counters.tx_data > 0, s.id == ev) << "ev " << s.id;
  ASSERT_TRUE(pair.qa().AllowEv(ev, pair.net().now()));
  ASSERT_TRUE(pair.qb().AllowEv(ev, pair.net().now()));
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
}

}  // namespace
}  // namespace mrclab::mrc
