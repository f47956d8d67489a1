// The Context's QP scheduler against what asking every QP gives: round-robin order over the
// QPs that have something to send, and NextTimeout as the earliest of every QP's, throughout
// transfers on many QPs with loss (RTOs, loss detection, probes, delayed ACKs).
#include "mrc/core/qp_scheduler.h"

#include <gtest/gtest.h>

#include <vector>

#include "mrc/core/context.h"
#include "mrc/loop/loop_network.h"
#include "mrc/loop/loop_pair_testing.h"

namespace mrclab::mrc {
namespace {

// Two Contexts with `n` connected QP pairs, a source region on A and a destination on B.
struct ManyQps {
  explicit ManyQps(int n, uint64_t seed = 11) : a(ContextConfig{seed}), b(ContextConfig{seed + 1}), net(seed + 2) {
    CompletionQueue& a_cq = a.CreateCq();
    CompletionQueue& b_cq = b.CreateCq();
    a_send_cq = &a_cq;
    for (int i = 0; i < n; ++i) {
      Qp& qa = a.CreateQp(testing::SmallConfig(), a_cq, a_cq);
      Qp& qb = b.CreateQp(testing::SmallConfig(), b_cq, b_cq);
      qa.Connect(qb.qpn(), qb.config().initial_psn);
      qb.Connect(qa.qpn(), qa.config().initial_psn);
      on_a.push_back(&qa);
    }
    src_mr = a.RegisterMemory(src, kAccessLocal);
    dst_mr = b.RegisterMemory(dst, kAccessRemoteWrite);
    net.AddHost(&a);
    net.AddHost(&b);
  }
  void Write(int qp, uint32_t bytes) {
    WriteRequest wr;
    wr.wr_id = ++posted;
    wr.lkey = src_mr.lkey;
    wr.local_addr = src_mr.va;
    wr.length = bytes;
    wr.remote_addr = dst_mr.va;
    wr.rkey = dst_mr.rkey;
    ASSERT_EQ(on_a[qp]->PostWrite(wr), PostResult::kOk);
  }
  // The QP index on A that sent `t`.
  int Sender(const Transmit& t) const {
    for (size_t i = 0; i < on_a.size(); ++i)
      if (on_a[i]->qpn() == t.qpn) return static_cast<int>(i);
    return -1;
  }
  static Timestamp EarliestOfEvery(Context& c) {
    Timestamp t = Timestamp::Infinite();
    for (const Qp* qp : c.Qps()) t = Min(t, qp->NextTimeout());
    return t;
  }

  Context a, b;
  LoopNetwork net;
  std::vector<Qp*> on_a;
  CompletionQueue* a_send_cq;
  std::vector<uint8_t> src = std::vector<uint8_t>(64 * 1024, 7), dst = std::vector<uint8_t>(64 * 1024);
  MemoryRegion src_mr, dst_mr;
  uint64_t posted = 0;
};

TEST(QpScheduler, SendsRoundRobinFromTheCursorOnlyFromQpsWithWork) {
  ManyQps m(150);  // three words of ready bits
  std::vector<uint8_t> buffer(4096);
  const Timestamp now = Timestamp::FromNanoseconds(1000);
  EXPECT_FALSE(m.a.PollTransmit(now, buffer)) << "no QP has work";
  for (int qp : {77, 3, 120}) m.Write(qp, 1024);  // one packet each
  std::vector<int> senders;
  while (auto t = m.a.PollTransmit(now, buffer)) senders.push_back(m.Sender(*t));
  EXPECT_EQ(senders, (std::vector<int>{3, 77, 120}));
  // The cursor is past 120: the search goes on from there and wraps round to the start.
  for (int qp : {100, 10, 130}) m.Write(qp, 1024);
  senders.clear();
  while (auto t = m.a.PollTransmit(now, buffer)) senders.push_back(m.Sender(*t));
  EXPECT_EQ(senders, (std::vector<int>{130, 10, 100}));
  // Two packets each: the QPs take turns, from after the last one that sent (100).
  for (int qp : {6, 64, 130}) m.Write(qp, 2048);
  senders.clear();
  while (auto t = m.a.PollTransmit(now, buffer)) senders.push_back(m.Sender(*t));
  EXPECT_EQ(senders, (std::vector<int>{130, 6, 64, 130, 6, 64}));
}

TEST(QpScheduler, AQpWhoseDeadlineHasComeIsAskedBeforeItsTimeoutRuns) {
  // B gets the first packet of a message, which asks for no ACK: its ACK waits for the ACK
  // delay. A driver that polls at that deadline (a datagram came first at the same instant)
  // before it calls OnTimeout gets the ACK, as asking every QP gives.
  for (int qps : {3, 20}) {  // asked one by one, and kept
    ManyQps m(qps);
    std::vector<uint8_t> buffer(4096);
    Timestamp now = Timestamp::FromNanoseconds(1000);
    m.Write(1, 8 * 1024);
    auto first = m.a.PollTransmit(now, buffer);
    ASSERT_TRUE(first);
    m.b.OnDatagram(now, std::span(buffer.data(), first->length));
    EXPECT_FALSE(m.b.PollTransmit(now, buffer)) << "the ACK waits for its delay";
    const Timestamp deadline = m.b.NextTimeout();
    ASSERT_FALSE(deadline.IsInfinite());
    now = deadline;
    auto ack = m.b.PollTransmit(now, buffer);
    ASSERT_TRUE(ack) << qps << " QPs: the deadline has come, the ACK goes before OnTimeout is called";
    EXPECT_EQ(ack->qpn, m.b.Qps()[1]->qpn());
    EXPECT_EQ(m.b.Qps()[1]->stats().acks_sent, 1u);
  }
}

TEST(QpScheduler, NextTimeoutIsTheEarliestOfEveryQpThroughLossyTransfers) {
  ManyQps m(70);  // (kept: more than QpScheduler::kScanQps)
  PathSpec lossy;
  lossy.delay = Duration::Microseconds(3);
  lossy.rate = BitsPerSecond::Gbps(10);  // a packet each 0.8 us: many distinct instants
  lossy.loss_rate = 0.05;
  m.net.SetDefaultPath(lossy);
  Rng rng(5);
  for (int i = 0; i < 1000; ++i) m.Write(static_cast<int>(rng.Below(70)), 1024 * (1 + static_cast<uint32_t>(rng.Below(8))));
  uint64_t done = 0, checks = 0;
  const bool finished = m.net.RunUntil(
      [&] {
        EXPECT_EQ(m.a.NextTimeout(), ManyQps::EarliestOfEvery(m.a));
        EXPECT_EQ(m.b.NextTimeout(), ManyQps::EarliestOfEvery(m.b));
        ++checks;
        while (auto c = m.a_send_cq->Poll())
          if (c->status == WcStatus::kSuccess) ++done;
        return done == m.posted;
      },
      Timestamp::FromNanoseconds(0) + Duration::Seconds(5));
  EXPECT_TRUE(finished) << done << " of " << m.posted << " writes completed";
  EXPECT_GT(checks, 1000u);
  uint64_t retransmissions = 0;
  for (const Qp* qp : m.on_a) retransmissions += qp->stats().retransmissions;
  EXPECT_GT(retransmissions, 0u) << "the loss must have exercised the timers";
  EXPECT_EQ(m.a.NextTimeout(), ManyQps::EarliestOfEvery(m.a));
}

}  // namespace
}  // namespace mrclab::mrc
