#include "harness/drill/lab_convergence.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "emulator/netns/processes.h"

namespace mrclab::harness {
namespace {

// Parses `ip -6 route show proto bgp`: a route line, optionally followed by indented
// "nexthop via ... dev ..." lines (ECMP).
std::set<std::string> ParseRoutes(const std::string& text) {
  std::set<std::string> routes;
  std::string prefix;
  std::vector<std::string> hops;
  auto flush = [&] {
    if (prefix.empty()) return;
    std::sort(hops.begin(), hops.end());
    std::string line = prefix;
    for (const auto& h : hops) line += " " + h;
    routes.insert(line);
    prefix.clear();
    hops.clear();
  };
  auto hop_of = [](std::istringstream& words) {
    std::string w, via, dev;
    while (words >> w) {
      if (w == "via") words >> via;
      else if (w == "dev") words >> dev;
    }
    return via.empty() && dev.empty() ? std::string() : "via " + via + " dev " + dev;
  };
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::istringstream words(line);
    if (line[0] == ' ' || line[0] == '\t') {
      if (std::string h = hop_of(words); !h.empty()) hops.push_back(h);
      continue;
    }
    flush();
    words >> prefix;
    if (std::string h = hop_of(words); !h.empty()) hops.push_back(h);
  }
  flush();
  return routes;
}

// A switch's routes as prefix -> number of next hops (ParseRoutes writes each as "via ADDR dev IF").
std::map<std::string, size_t> HopCounts(const std::set<std::string>& routes) {
  std::map<std::string, size_t> out;
  for (const std::string& line : routes) {
    std::istringstream words(line);
    std::string prefix, w;
    words >> prefix;
    size_t& hops = out[prefix];
    while (words >> w) hops += w == "via";
  }
  return out;
}

}  // namespace

RoutingSnapshot SnapshotBgpRoutes(const emulator::ResolvedLab& lab) {
  RoutingSnapshot snap;
  for (const auto* sw : lab.Switches()) {
    std::string out;
    emulator::netns::RunAndWait({"ip", "-n", sw->netns, "-6", "route", "show", "proto", "bgp"}, &out);
    snap[sw->name] = ParseRoutes(out);
  }
  return snap;
}

std::set<std::string> DifferingSwitches(const RoutingSnapshot& baseline, const RoutingSnapshot& now) {
  std::set<std::string> out;
  for (const auto& [name, routes] : baseline) {
    auto it = now.find(name);
    if (it == now.end() || it->second != routes) out.insert(name);
  }
  return out;
}

bool Completes(const RoutingSnapshot& baseline, const RoutingSnapshot& now) {
  bool more = false;
  for (const auto& [name, routes] : baseline) {
    auto it = now.find(name);
    if (it == now.end()) return false;
    if (it->second == routes) continue;
    const auto base = HopCounts(routes), current = HopCounts(it->second);
    for (const auto& [prefix, hops] : base) {
      auto found = current.find(prefix);
      if (found == current.end() || found->second < hops) return false;
    }
    more = true;
  }
  return more;
}

std::vector<std::string> RouteDifferences(const RoutingSnapshot& baseline, const RoutingSnapshot& now, size_t limit) {
  std::vector<std::string> out;
  const std::set<std::string> none;
  for (const auto& [name, routes] : baseline) {
    auto it = now.find(name);
    const std::set<std::string>& current = it == now.end() ? none : it->second;
    for (const auto& r : routes)
      if (!current.count(r) && out.size() < limit) out.push_back(name + ": missing " + r);
    for (const auto& r : current)
      if (!routes.count(r) && out.size() < limit) out.push_back(name + ": extra " + r);
  }
  return out;
}

}  // namespace mrclab::harness
