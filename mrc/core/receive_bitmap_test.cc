#include "mrc/core/receive_bitmap.h"

#include <gtest/gtest.h>

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
