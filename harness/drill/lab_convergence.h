// "The fabric is back to where it was": the BGP routes of every switch (prefix and set of next
// hops, as the kernel has them) compared with a snapshot taken when the lab was known good and
// its routes had stopped changing (netns_backend.cc).
// Drills wait for it before each transport, so that every transport starts on the same,
// converged fabric even when the previous one's faults were reverted a moment ago (a link is
// up before its session is Established, and the session before its routes are installed).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "emulator/resolved_lab.h"

namespace mrclab::harness {

// switch -> { "prefix via ADDR dev IF[, via ...]" } (next hops sorted; nhid ids ignored)
using RoutingSnapshot = std::map<std::string, std::set<std::string>>;

RoutingSnapshot SnapshotBgpRoutes(const emulator::ResolvedLab& lab);

// Switches whose routes differ from `baseline` (empty: converged).
std::set<std::string> DifferingSwitches(const RoutingSnapshot& baseline, const RoutingSnapshot& now);

// True when `now` has every prefix of `baseline` with at least as many next hops, and differs:
// the baseline was taken before BGP had finished (a deploy is verified once sessions are up and
// every host pair is reachable, which can be before every ECMP path is installed, and a spine
// may still hold a transient path through another leaf), and `now` is the more complete fabric
// to compare with from then on. A fabric with a link or switch still down has fewer next hops.
bool Completes(const RoutingSnapshot& baseline, const RoutingSnapshot& now);

// What differs, for the record of a lab that did not converge: "p0-spine0: missing ROUTE" /
// "p0-spine0: extra ROUTE", at most `limit` lines.
std::vector<std::string> RouteDifferences(const RoutingSnapshot& baseline, const RoutingSnapshot& now, size_t limit);

}  // namespace mrclab::harness
