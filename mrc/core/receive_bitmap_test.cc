#include "mrc/core/receive_bitmap.h"

#include <gtest/gtest.h>

#include <set>

#include "mrc/core/message_assembler.h"
#include "mrc/core/rng.h"

namespace mrclab::mrc {
namespace {

TEST(ReceiveBitmapTest, AdvancesOverContiguousPrefix) {
  ReceiveBitmap rx(1000, 64);
  EXPECT_EQ(rx.Mark(1002), ReceiveBitmap::Result::kNew);
  EXPECT_EQ(rx.cumulative(), 1000u);
  EXPECT_EQ(rx.Mark(1002), ReceiveBitmap::Result::kDuplicate);
  EXPECT_EQ(rx.Sack(1000), 0b100u);
  EXPECT_EQ(rx.Mark(1000), ReceiveBitmap::Result::kNew);
  EXPECT_EQ(rx.cumulative(), 1001u);
  EXPECT_EQ(rx.Mark(1001), ReceiveBitmap::Result::kNew);
  EXPECT_EQ(rx.cumulative(), 1003u);
  EXPECT_EQ(rx.Mark(999), ReceiveBitmap::Result::kDuplicate);
  EXPECT_EQ(rx.Mark(1003 + 64), ReceiveBitmap::Result::kOutOfWindow);
  EXPECT_EQ(rx.Mark(1003 + 63), ReceiveBitmap::Result::kNew);
  EXPECT_TRUE(rx.Received(1003 + 63));
  EXPECT_FALSE(rx.Received(1003 + 62));
}

TEST(ReceiveBitmapTest, RandomOrderCompletesAndSlotsAreReused) {
  ReceiveBitmap rx(5, 128);
  Rng rng(3);
  for (uint64_t block = 0; block < 20; ++block) {
    std::vector<uint64_t> psns;
    for (uint64_t i = 0; i < 100; ++i) psns.push_back(5 + block * 100 + i);
    for (size_t i = psns.size(); i > 1; --i) std::swap(psns[i - 1], psns[rng.Below(i)]);
    for (uint64_t p : psns) ASSERT_EQ(rx.Mark(p), ReceiveBitmap::Result::kNew);
    ASSERT_EQ(rx.cumulative(), 5 + (block + 1) * 100);
  }
}

// Sack reads words; it must say what Received says of each of its 64 PSNs, wherever the base
// lies (below the cumulative point, across the ring's wrap, past the window) and for every size.
TEST(ReceiveBitmapTest, SackIsReceivedOfEachPsn) {
  Rng rng(11);
  for (size_t window : {64u, 128u, 1024u}) {
    ReceiveBitmap rx(1000, window);
    for (int round = 0; round < 3000; ++round) {
      const uint64_t next = rx.cumulative();
      rx.Mark(next + rng.Below(rx.window()));  // arrivals spread over the window
      if (rng.Below(4) == 0) rx.Mark(next);     // and the cumulative point moves on
      const uint64_t low = next > 80 ? next - 80 : 0;
      const uint64_t base = low + rng.Below(80 + rx.window() + 80);
      uint64_t want = 0;
      for (int i = 0; i < 64; ++i)
        if (rx.Received(base + i)) want |= uint64_t{1} << i;
      ASSERT_EQ(rx.Sack(base), want) << "window " << window << " round " << round << " base " << base
                                     << " cumulative " << rx.cumulative();
    }
  }
}

// Arrivals spread over a large window, in bursts that run far ahead of the cumulative point and
// then fill in: the ring grows while bits are set, and what Mark and Received say must be what
// a set of the arrived PSNs says.
TEST(ReceiveBitmapTest, AGrowingRingKeepsWhatArrived) {
  Rng rng(5);
  ReceiveBitmap rx(70, 8192);
  EXPECT_EQ(rx.ring_packets(), 64u);  // a window's worth is not allocated up front
  std::set<uint64_t> arrived;
  uint64_t cumulative = 70;
  for (int round = 0; round < 20000; ++round) {
    const uint64_t reach = round % 2000 < 100 ? 9000 : 48;  // now and then a burst far ahead
    const uint64_t psn = cumulative + rng.Below(reach) - (rng.Below(8) == 0 ? 20 : 0);
    const bool within = psn - cumulative < 8192 || psn < cumulative;
    const auto want = psn < cumulative || arrived.count(psn) ? ReceiveBitmap::Result::kDuplicate
                      : within                            ? ReceiveBitmap::Result::kNew
                                                          : ReceiveBitmap::Result::kOutOfWindow;
    ASSERT_EQ(rx.Mark(psn), want) << "round " << round << " psn " << psn;
    if (want == ReceiveBitmap::Result::kNew) arrived.insert(psn);
    while (arrived.count(cumulative)) arrived.erase(cumulative++);
    ASSERT_EQ(rx.cumulative(), cumulative);
    for (int i = 0; i < 8; ++i) {
      const uint64_t p = cumulative + rng.Below(8192);
      ASSERT_EQ(rx.Received(p), arrived.count(p) == 1) << "round " << round << " psn " << p;
    }
  }
  EXPECT_GT(rx.ring_packets(), 64u);
  EXPECT_LE(rx.ring_packets(), 8192u);
}

// Which arrivals no ACK has reported: an arrival past the cumulative point is unreported until
// a report covers it (64 PSNs from a base, or the echo); the cumulative point reports what it
// passes. Checked against a set, through growth of the ring and wraps round it.
TEST(ReceiveBitmapTest, UnreportedArrivalsAreThoseNoReportCovered) {
  Rng rng(17);
  ReceiveBitmap rx(300, 1024);
  std::set<uint64_t> arrived, unreported;
  uint64_t cumulative = 300;
  for (int round = 0; round < 30000; ++round) {
    const uint64_t reach = round % 3000 < 200 ? 1000 : 100;
    const uint64_t psn = rng.Below(3) == 0 ? cumulative : cumulative + rng.Below(reach);
    if (rx.Mark(psn) == ReceiveBitmap::Result::kNew) {
      arrived.insert(psn);
      if (psn != cumulative) unreported.insert(psn);
    }
    while (arrived.count(cumulative)) {
      arrived.erase(cumulative);
      unreported.erase(cumulative++);
    }
    ASSERT_EQ(rx.cumulative(), cumulative);
    if (rng.Below(4) == 0) {
      const uint64_t base = cumulative - 10 + rng.Below(reach + 10);
      const uint64_t echo = cumulative - 10 + rng.Below(reach + 10);
      rx.MarkReported(base, echo);
      unreported.erase(unreported.lower_bound(base), unreported.lower_bound(base + 64));
      unreported.erase(echo);
    }
    ASSERT_EQ(rx.HasUnreported(), !unreported.empty()) << "round " << round;
    if (!unreported.empty()) ASSERT_EQ(rx.FirstUnreported(), *unreported.begin()) << "round " << round;
  }
  EXPECT_GT(rx.ring_packets(), 64u);
}

TEST(MessageAssemblerTest, CompletesInOrderWhenAllBytesPlaced) {
  MessageAssembler m;
  EXPECT_EQ(m.Add(1, 10, 10, 77u), MessageAssembler::Result::kOk);  // message 1 done first
  EXPECT_FALSE(m.PopCompleted());
  EXPECT_EQ(m.Add(0, 20, 5, std::nullopt), MessageAssembler::Result::kOk);
  EXPECT_FALSE(m.PopCompleted());
  EXPECT_EQ(m.Add(0, 20, 15, std::nullopt), MessageAssembler::Result::kOk);
  auto c = m.PopCompleted();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->msg_seq, 0u);
  EXPECT_FALSE(c->immediate);
  c = m.PopCompleted();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->immediate, 77u);
  EXPECT_EQ(m.next(), 2u);
}

TEST(MessageAssemblerTest, RejectsInconsistentAndOutOfRange) {
  MessageAssembler m(16);
  EXPECT_EQ(m.Add(0, 10, 8, std::nullopt), MessageAssembler::Result::kOk);
  EXPECT_EQ(m.Add(0, 10, 8, std::nullopt), MessageAssembler::Result::kInconsistent);
  EXPECT_EQ(m.Add(0, 11, 1, std::nullopt), MessageAssembler::Result::kInconsistent);
  EXPECT_EQ(m.Add(16, 1, 1, std::nullopt), MessageAssembler::Result::kOutOfRange);
  EXPECT_EQ(m.Add(0xFFFFFFFF, 1, 1, std::nullopt), MessageAssembler::Result::kOutOfRange);
  EXPECT_EQ(m.Add(0, 0, 0, 5u), MessageAssembler::Result::kInconsistent);
}

TEST(MessageAssemblerTest, ZeroLengthMessageCompletesOnArrival) {
  MessageAssembler m;
  EXPECT_EQ(m.Add(0, 0, 0, 9u), MessageAssembler::Result::kOk);
  auto c = m.PopCompleted();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->length, 0u);
  EXPECT_EQ(c->immediate, 9u);
}

}  // namespace
}  // namespace mrclab::mrc
