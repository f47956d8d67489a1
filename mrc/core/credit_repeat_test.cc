// A responder repeats its credit advertisement (a credit-only ACK) until data shows that the
// requester has it. A host posts receives on all its QPs at once: their first repeats must not
// fall due together, or a fabric queue that dropped the first burst drops the same repeats again
// (they leave in the same order each time) and those QPs never learn their credit.
#include <gtest/gtest.h>

#include <array>
#include <set>
#include <vector>

#include "mrc/core/context.h"

namespace mrclab::mrc {
namespace {

TEST(CreditRepeatTest, AHostsCreditRepeatsAreSpreadOverOneToTwoRtos) {
  Context context;
  CompletionQueue& cq = context.CreateCq();
  QpConfig config;
  const Duration rto = config.rto.initial_rto;  // no RTT sample yet
  constexpr int kQps = 64;
  std::vector<Qp*> qps;
  for (int i = 0; i < kQps; ++i) {
    Qp& qp = context.CreateQp(config, cq, cq);
    qp.Connect(1000 + static_cast<uint32_t>(i), 0);
    ASSERT_EQ(qp.PostRecv(1), PostResult::kOk);
    qps.push_back(&qp);
  }
  const Timestamp t0 = Timestamp::FromNanoseconds(0);
  std::array<uint8_t, 4096> buffer;
  int advertised = 0;
  while (context.PollTransmit(t0, buffer)) ++advertised;
  EXPECT_EQ(advertised, kQps);  // one credit-only ACK per QP, at once
  std::set<int64_t> due;
  for (const Qp* qp : qps) {
    const Duration after = qp->NextTimeout() - t0;
    EXPECT_GE(after.nanoseconds(), rto.nanoseconds());
    EXPECT_LT(after.nanoseconds(), 2 * rto.nanoseconds());
    due.insert(after.nanoseconds());
  }
  EXPECT_GT(due.size(), kQps / 2u);  // not one instant for all of them
}

}  // namespace
}  // namespace mrclab::mrc
