#include "mrc/core/ring_queue.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace mrclab::mrc {
namespace {

std::vector<std::string> Contents(const RingQueue<std::string>& q) {
  std::vector<std::string> out;
  for (const std::string& s : q) out.push_back(s);
  return out;
}

// Random pushes, pops, resizes and clears (wrap-around, growth while wrapped, the shrink of an
// emptied large ring) must leave the ring holding what std::deque holds, in the same order.
TEST(RingQueue, MatchesStdDequeUnderRandomOperations) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    RingQueue<std::string> ring;
    std::deque<std::string> reference;
    std::mt19937 rng(seed);
    for (int op = 0; op < 20000; ++op) {
      const uint32_t r = rng() % 100;
      // Phases of growth and of draining, so the ring both wraps and empties.
      const bool growing = (op / 500) % 2 == 0;
      if (r < (growing ? 60u : 30u)) {
        const std::string v = std::to_string(rng());
        ring.push_back(v);
        reference.push_back(v);
      } else if (r < 97 && !reference.empty()) {
        ASSERT_EQ(ring.front(), reference.front());
        ring.pop_front();
        reference.pop_front();
      } else if (r < 99) {
        const size_t n = reference.size() + rng() % 5;
        ring.resize(n);
        reference.resize(n);
      } else {
        ring.clear();
        reference.clear();
      }
      ASSERT_EQ(ring.size(), reference.size());
      ASSERT_EQ(ring.empty(), reference.empty());
      if (!reference.empty()) {
        ASSERT_EQ(ring.back(), reference.back());
        const size_t i = rng() % reference.size();
        ASSERT_EQ(ring[i], reference[i]) << "element " << i << " at op " << op;
      }
    }
    EXPECT_EQ(Contents(ring), std::vector<std::string>(reference.begin(), reference.end()));
  }
}

TEST(RingQueue, AllocatesNothingUntilUsedAndFreesALargeArrayWhenEmptied) {
  RingQueue<int> q;
  EXPECT_EQ(q.capacity(), 0u);
  q.push_back(1);
  EXPECT_EQ(q.capacity(), RingQueue<int>::kFirstSlots);
  q.pop_front();
  EXPECT_EQ(q.capacity(), RingQueue<int>::kFirstSlots);  // a small array is kept for reuse
  for (int i = 0; i < 1000; ++i) q.push_back(i);
  EXPECT_EQ(q.capacity(), 1024u);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(q.front(), i);
    q.pop_front();
  }
  EXPECT_EQ(q.capacity(), 0u);  // a burst's peak is not held by an idle queue
}

// A QP holds seven rings on the lines every datagram reads: their headers stay small.
static_assert(sizeof(RingQueue<int>) == 24);
static_assert(sizeof(RingQueue<std::string>) == 24);

TEST(RingQueue, AMovedFromQueueIsEmpty) {
  RingQueue<int> a;
  for (int i = 0; i < 5; ++i) a.push_back(i);
  RingQueue<int> b(std::move(a));
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): the contract under test
  a.push_back(7);
  EXPECT_EQ(a.front(), 7);
  a = std::move(b);
  EXPECT_EQ(a.size(), 5u);
  EXPECT_EQ(a.back(), 4);
  EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move)
}

TEST(RingQueue, PopAndClearReleaseWhatTheSlotHeld) {
  auto held = std::make_shared<int>(7);
  RingQueue<std::shared_ptr<int>> q;
  q.push_back(held);
  q.push_back(held);
  EXPECT_EQ(held.use_count(), 3);
  q.pop_front();
  EXPECT_EQ(held.use_count(), 2);  // the popped slot no longer holds it
  q.push_back(held);
  q.clear();
  EXPECT_EQ(held.use_count(), 1);
}

}  // namespace
}  // namespace mrclab::mrc
