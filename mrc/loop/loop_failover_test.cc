// MRC failover on the loop driver: a killed EV is detected, avoided and re-admitted after it
// heals; losing every EV ends in a QP error, not a hang; the controller API steers EVs.
#include <gtest/gtest.h>

#include "mrc/loop/loop_pair_testing.h"

namespace mrclab::mrc {
namespace {

using testing::LoopPair;
using testing::SmallConfig;

std::optional<EvStateChanged> FirstChange(const std::vector<Event>& events, uint16_t ev, EvState to) {
  for (const auto& e : events)
    if (auto* s = std::get_if<EvStateChanged>(&e); s && s->ev == ev && s->to == to) return *s;
  return std::nullopt;
}

PathSpec TenGigPath() {
  PathSpec p;
  p.delay = Duration::Microseconds(5);
  p.rate = BitsPerSecond::Gbps(10);
  return p;
}

class KilledEvTest : public ::testing::TestWithParam<int> {};

TEST_P(KilledEvTest, KilledEvIsDetectedAvoidedAndReadmitted) {
  const int evs = GetParam();
  const uint16_t victim = 3;
  LoopPair pair(SmallConfig(TransportMode::kMrc, evs), 16 << 20);
  pair.net().SetDefaultPath(TenGigPath());
  pair.net().SetHostEgressRate(0, BitsPerSecond::Gbps(40));
  pair.PostWrites(256, 64 * 1024, true);
  pair.PostRecvs(256);

  // Let the transfer reach steady state, then cut the victim EV (both directions).
  ASSERT_FALSE(pair.RunUntil([&] { return pair.send_done().size() >= 256; }, Duration::Microseconds(300)));
  const Timestamp cut = pair.net().now();
  const Duration srtt = pair.qa().srtt();
  const Timestamp heal = cut + Duration::Milliseconds(2);
  pair.net().KillEv(victim, cut, heal);

  ASSERT_TRUE(pair.RunUntil([&] { return FirstChange(pair.events_a(), victim, EvState::kAssumedBad).has_value(); },
                            Duration::Milliseconds(1)));
  const auto bad = *FirstChange(pair.events_a(), victim, EvState::kAssumedBad);
  const Duration detection = bad.at - cut;
  // Bounded: a handful of RTTs (SRTT measured under load, before the cut).
  EXPECT_LE(detection, srtt * 8) << "detected after " << detection.microseconds() << " us, srtt "
                                 << srtt.microseconds() << " us";
  ASSERT_EQ(pair.qa().state(), QpState::kReadyToSend);

  // While it is bad, data goes elsewhere: the victim only carries probes.
  const uint64_t victim_data_at_bad = pair.qa().ListEvs()[victim].counters.tx_data +
                                      pair.qa().ListEvs()[victim].counters.tx_retransmits;
  const uint64_t others_before = pair.qa().stats().data_packets_sent;
  ASSERT_FALSE(pair.RunUntil([] { return false; }, heal - pair.net().now() - Duration::Microseconds(10)));
  EXPECT_EQ(pair.qa().ListEvs()[victim].counters.tx_data + pair.qa().ListEvs()[victim].counters.tx_retransmits,
            victim_data_at_bad);
  EXPECT_GT(pair.qa().stats().data_packets_sent, others_before);
  EXPECT_EQ(pair.qa().ListEvs()[victim].state, EvState::kAssumedBad);
  EXPECT_GT(pair.qa().ListEvs()[victim].counters.tx_probes, 0u);

  // After the heal, probes succeed and the EV is GOOD again; everything is delivered intact.
  ASSERT_TRUE(pair.RunUntil([&] { return FirstChange(pair.events_a(), victim, EvState::kGood).has_value(); },
                            Duration::Milliseconds(5)));
  EXPECT_EQ(FirstChange(pair.events_a(), victim, EvState::kGood)->reason, EvReason::kProbesSucceeded);
  ASSERT_TRUE(pair.RunToCompletion());
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
  EXPECT_EQ(pair.recv_done().size(), 256u);
  // No other EV was condemned by the victim's failure.
  for (const auto& s : pair.qa().ListEvs()) EXPECT_EQ(s.state, EvState::kGood) << "ev " << s.id;
}

INSTANTIATE_TEST_SUITE_P(EvCounts, KilledEvTest, ::testing::Values(8, 64));

TEST(LoopFailoverTest, AllEvsKilledEndsInQpErrorNotAHang) {
  QpConfig config = SmallConfig(TransportMode::kMrc, 8);
  config.max_retransmissions = 6;
  LoopPair pair(config);
  pair.net().SetDefaultPath(TenGigPath());
  pair.PostWrites(32, 16 * 1024, false);
  ASSERT_FALSE(pair.RunUntil([&] { return pair.send_done().size() >= 32; }, Duration::Microseconds(40)));
  for (uint16_t ev = 0; ev < 8; ++ev) pair.net().KillEv(ev, pair.net().now());
  ASSERT_TRUE(pair.RunToCompletion(Duration::Seconds(5)));
  EXPECT_EQ(pair.qa().state(), QpState::kError);
  bool saw_error = false;
  for (const auto& c : pair.send_done())
    if (c.status == WcStatus::kRetryExceeded) saw_error = true;
  EXPECT_TRUE(saw_error);
  bool event = false;
  for (const auto& e : pair.events_a())
    if (auto* s = std::get_if<QpStateChanged>(&e); s && s->to == QpState::kError) event = true;
  EXPECT_TRUE(event);
  // Successful completions (before the cut) are a prefix, the failure follows, then flushes.
  size_t i = 0;
  while (i < pair.send_done().size() && pair.send_done()[i].status == WcStatus::kSuccess) ++i;
  ASSERT_LT(i, pair.send_done().size());
  EXPECT_EQ(pair.send_done()[i].status, WcStatus::kRetryExceeded);
  for (++i; i < pair.send_done().size(); ++i) EXPECT_EQ(pair.send_done()[i].status, WcStatus::kFlushed);
  // What completed successfully was delivered intact.
  for (const auto& c : pair.send_done()) {
    if (c.status != WcStatus::kSuccess) break;
    const size_t off = (c.wr_id - 1) * 16 * 1024;
    EXPECT_EQ(0, std::memcmp(pair.src().data() + off, pair.dst().data() + off, 16 * 1024));
  }
}

TEST(LoopFailoverTest, ControllerDenyProbeAndDisablePlane) {
  LoopPair pair(SmallConfig(TransportMode::kMrc, 8), 8 << 20);  // EVs alternate planes 0/1
  const Timestamp t0 = pair.net().now();
  EXPECT_TRUE(pair.qa().DenyEv(5, t0));
  const auto probe_id = pair.qa().ProbeEv(2);
  ASSERT_TRUE(probe_id);
  pair.PostWrites(40, 64 * 1024, false);
  std::optional<ProbeCompleted> probe;
  ASSERT_TRUE(pair.RunUntil([&] {
    for (const auto& e : pair.events_a())
      if (auto* p = std::get_if<ProbeCompleted>(&e)) probe = *p;
    return probe.has_value() && pair.send_done().size() >= 10;
  }, Duration::Milliseconds(10)));
  EXPECT_EQ(probe->probe_id, *probe_id);
  EXPECT_EQ(probe->ev, 2);
  ASSERT_TRUE(probe->rtt);
  EXPECT_GE(*probe->rtt, Duration::Microseconds(10));  // 5 us each way
  EXPECT_EQ(pair.qa().ListEvs()[5].counters.tx_data, 0u);

  EXPECT_EQ(pair.qa().DisablePlane(0, pair.net().now()), 4u);
  const auto before = pair.qa().ListEvs();
  ASSERT_TRUE(pair.RunToCompletion());
  const auto after = pair.qa().ListEvs();
  for (int ev = 0; ev < 8; ev += 2) {
    EXPECT_EQ(after[ev].state, EvState::kDenied);
    EXPECT_EQ(after[ev].counters.tx_data + after[ev].counters.tx_retransmits,
              before[ev].counters.tx_data + before[ev].counters.tx_retransmits);
  }
  EXPECT_GT(after[1].counters.tx_data, before[1].counters.tx_data);
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
  EXPECT_TRUE(pair.qa().AllowEv(5, pair.net().now()));
  EXPECT_EQ(pair.qa().EnablePlane(0, pair.net().now()), 4u);
}

// Every plane of both ends disabled mid-transfer (a host whose every NIC port a controller took
// out): nothing can be sent, so no deadline may stay due (the driver would fire it at the
// same instant for ever); the QP waits, and finishes its work once a plane is enabled again.
TEST(LoopFailoverTest, AllPlanesDisabledLeavesNoDeadlineDueAndResumes) {
  LoopPair pair(SmallConfig(TransportMode::kMrc, 8), 8 << 20);
  pair.net().SetDefaultPath(TenGigPath());
  pair.PostWrites(40, 64 * 1024, false);
  ASSERT_TRUE(pair.RunUntil([&] { return pair.send_done().size() >= 10; }, Duration::Milliseconds(10)));
  ASSERT_LT(pair.send_done().size(), 40u);
  for (int plane : {0, 1}) {
    pair.qa().DisablePlane(plane, pair.net().now());
    pair.qb().DisablePlane(plane, pair.net().now());
  }
  uint64_t rounds = 0;  // the loop driver's rounds: each advances time or delivers a packet
  EXPECT_FALSE(pair.RunUntil([&] { return ++rounds > 100'000; }, Duration::Milliseconds(50)));
  EXPECT_LE(rounds, 100'000u) << "a deadline stayed due while nothing could be sent";
  const Timestamp now = pair.net().now();
  EXPECT_GT(pair.a().NextTimeout(), now);
  EXPECT_GT(pair.b().NextTimeout(), now);
  pair.qa().EnablePlane(1, now);
  pair.qb().EnablePlane(1, now);
  ASSERT_TRUE(pair.RunToCompletion(Duration::Seconds(2)));
  pair.ExpectAllSucceeded();
  pair.ExpectBytesDelivered();
}

}  // namespace
}  // namespace mrclab::mrc
