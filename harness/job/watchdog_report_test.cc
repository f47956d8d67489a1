// The watchdog's summary (MakeWatchdogReport): which rank waits for whom, what the peer's QP to
// it has outstanding, and, when the peer has nothing outstanding (it is behind and waits
// itself), the rank further back whose messages do not move.
#include <gtest/gtest.h>

#include <vector>

#include "harness/job/workload.h"

namespace mrclab::harness {
namespace {

// A ring rank as Workload::DescribeUnfinished describes it: waiting for `peer`, with `qps`.
nlohmann::json Rank(int rank, int peer, nlohmann::json qps = nlohmann::json::array()) {
  return {{"rank", rank}, {"host", "host" + std::to_string(rank)}, {"computing", false}, {"sends_pending", 0},
          {"collective", "all_reduce"}, {"phase", rank}, {"phases", 14}, {"waiting_for", {peer}},
          {"qps_with_work", std::move(qps)}};
}

nlohmann::json Qp(int from, int to, uint64_t bytes_in_flight, uint32_t credits) {
  return {{"qp", "host" + std::to_string(from) + "/" + std::to_string(from) + "->host" + std::to_string(to) + "/" +
                     std::to_string(to)},
          {"state", "RTS"}, {"messages", 3}, {"bytes_in_flight", bytes_in_flight}, {"window", 65536},
          {"srtt_us", 10}, {"evs", {{"GOOD", 8}}}, {"sent", 0}, {"retransmissions", 0}, {"rto_fired", 0},
          {"acks_received", 0}, {"credits", credits}};
}

TEST(WatchdogReportTest, NamesThePeersQpWhenItHasWorkForTheWaiter) {
  const WatchdogReport r = MakeWatchdogReport("mrc", 1.0, 0, 0, {Rank(0, 3), Rank(3, 2, {Qp(3, 0, 4096, 5)})});
  EXPECT_EQ(r.summary,
            "; rank 0 waits in all_reduce phase 1/14 for rank 3, whose QP to it has 3 message(s) outstanding, "
            "4096 B in flight (window 65536 B), EVs {\"GOOD\":8}, 0 retransmissions, 0 RTOs");
  EXPECT_EQ(r.event["ranks_unfinished"], 2);
}

TEST(WatchdogReportTest, FollowsTheWaitBackToTheRankWhoseMessagesDoNotMove) {
  // 0 waits for 3, 3 for 2 (nothing outstanding either), 2 for 1, whose QP to 2 holds messages
  // it cannot start: no receive credit from rank 2.
  const WatchdogReport r = MakeWatchdogReport(
      "mrc", 1.0, 0, 0, {Rank(3, 2), Rank(0, 3), Rank(2, 1), Rank(1, 0, {Qp(1, 2, 0, 0)})});
  EXPECT_EQ(r.summary,
            "; rank 0 waits in all_reduce phase 1/14 for rank 3 (which has no message outstanding); its wait goes "
            "back to: rank 2 waits in all_reduce phase 3/14 for rank 1, whose QP to it has 3 message(s) "
            "outstanding, 0 B in flight (window 65536 B), EVs {\"GOOD\":8}, 0 retransmissions, 0 RTOs, none "
            "started: it has no receive credit from rank 2");
}

TEST(WatchdogReportTest, AWaitThatGoesRoundTheRingStops) {
  // Every rank waits for the one before and none has anything outstanding (a lost completion).
  const WatchdogReport r = MakeWatchdogReport("mrc", 1.0, 0, 0, {Rank(0, 2), Rank(1, 0), Rank(2, 1)});
  EXPECT_EQ(r.summary,
            "; rank 0 waits in all_reduce phase 1/14 for rank 2 (which has no message outstanding); that wait goes "
            "round back to rank 0: no rank on it has a message outstanding to the next");
}

TEST(WatchdogReportTest, APeerThatFinishedIsSaidToHaveFinished) {
  const WatchdogReport r = MakeWatchdogReport("mrc", 1.0, 0, 7, {Rank(0, 3)});
  EXPECT_EQ(r.summary,
            "; rank 0 waits in all_reduce phase 1/14 for rank 3 (which finished its step: all it sent was "
            "acknowledged)");
}

}  // namespace
}  // namespace mrclab::harness
