#include "harness/drill/lab_convergence.h"

#include <gtest/gtest.h>

namespace mrclab::harness {
namespace {

TEST(LabConvergence, DifferencesNameTheSwitchAndTheRoute) {
  const RoutingSnapshot baseline = {{"p0-spine0", {"fcbb:0:1201::/48 via fe80::1 dev leaf0", "fd00:0:1::/64 via fe80::1 dev leaf0"}},
                                    {"p0-leaf1", {"fcbb:0:1201::/48 via fe80::2 dev spine0 via fe80::3 dev spine1"}}};
  RoutingSnapshot now = baseline;
  EXPECT_TRUE(DifferingSwitches(baseline, now).empty());
  EXPECT_TRUE(RouteDifferences(baseline, now, 10).empty());
  now["p0-spine0"].erase("fd00:0:1::/64 via fe80::1 dev leaf0");
  now["p0-leaf1"] = {"fcbb:0:1201::/48 via fe80::3 dev spine1"};
  EXPECT_EQ(DifferingSwitches(baseline, now), (std::set<std::string>{"p0-leaf1", "p0-spine0"}));
  EXPECT_EQ(RouteDifferences(baseline, now, 10),
            (std::vector<std::string>{"p0-leaf1: missing fcbb:0:1201::/48 via fe80::2 dev spine0 via fe80::3 dev spine1",
                                      "p0-leaf1: extra fcbb:0:1201::/48 via fe80::3 dev spine1",
                                      "p0-spine0: missing fd00:0:1::/64 via fe80::1 dev leaf0"}));
  EXPECT_EQ(RouteDifferences(baseline, now, 1).size(), 1u);
}

TEST(LabConvergence, AFabricWithMorePathsCompletesAnEarlyBaseline) {
  const RoutingSnapshot early = {{"p0-leaf1", {"fcbb:0:1201::/48 via fe80::3 dev spine1"}},
                                 {"p0-spine0", {"fd00:0:1::/64 via fe80::1 dev leaf0"}}};
  RoutingSnapshot later = early;
  EXPECT_FALSE(Completes(early, later));  // nothing more
  later["p0-leaf1"] = {"fcbb:0:1201::/48 via fe80::2 dev spine0 via fe80::3 dev spine1",
                       "fcbb:0:1202::/48 via fe80::2 dev spine0"};
  EXPECT_TRUE(Completes(early, later));   // one more next hop, one more prefix
  EXPECT_FALSE(Completes(later, early));  // fewer is a difference, not a completion
  // A transient path replaced by the direct one (same width) while other routes widen: complete.
  RoutingSnapshot moved = later;
  moved["p0-spine0"] = {"fd00:0:1::/64 via fe80::9 dev leaf1"};
  EXPECT_TRUE(Completes(early, moved));
  // A prefix gone, or a route narrower than before, is a difference.
  RoutingSnapshot gone = later;
  gone["p0-spine0"] = {};
  EXPECT_FALSE(Completes(early, gone));
}

}  // namespace
}  // namespace mrclab::harness
