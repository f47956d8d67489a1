#include "emulator/ns3/model/fabric_routes.h"

#include <algorithm>
#include <deque>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>

namespace mrclab::emulator::sim {

namespace {

constexpr int kUnreachable = -1;

struct Adjacency {
  int peer;            // plane-local index of the neighbour
  uint16_t peer_port;  // the neighbour's egress port toward this switch
};

// The ECMP groups of one switch's FIB, each stored once.
class GroupInterner {
 public:
  explicit GroupInterner(Fib* fib) : fib_(fib) {}
  uint32_t Intern(std::vector<uint16_t> members) {
    std::sort(members.begin(), members.end());
    auto [it, inserted] = ids_.try_emplace(members, static_cast<uint32_t>(fib_->groups.size()));
    if (inserted) fib_->groups.push_back(std::move(members));
    return it->second;
  }

 private:
  Fib* fib_;
  std::map<std::vector<uint16_t>, uint32_t> ids_;
};

FibEntry Forward(uint32_t group, int hops = 0) { return {Behaviour::kForward, group, static_cast<uint8_t>(hops)}; }

void Validate(const RouteTopology& topology) {
  const int switches = static_cast<int>(topology.switches.size());
  for (size_t l = 0; l < topology.links.size(); ++l) {
    const RouteTopology::Link& link = topology.links[l];
    const std::string where = "link " + std::to_string(l) + ": ";
    if (l > UINT32_MAX) throw std::invalid_argument(where + "more links than the plan addresses");
    if (link.a_switch < 0 && link.b_switch < 0) {
      throw std::invalid_argument(where + "joins two hosts");
    }
    for (auto [sw, port] : {std::pair{link.a_switch, link.a_port}, {link.b_switch, link.b_port}}) {
      if (sw < 0) continue;
      if (sw >= switches) throw std::invalid_argument(where + "names an unknown switch");
      if (port < 0 || port > UINT16_MAX) throw std::invalid_argument(where + "bad port index");
      if (topology.switches[sw].plane != link.plane) {
        throw std::invalid_argument(where + "joins two planes");
      }
    }
  }
}

// Computes the FIBs of the switches of one plane into `fibs`.
class PlaneRoutes {
 public:
  PlaneRoutes(const RouteTopology& topology, RouteMode mode, int plane, std::vector<Fib>& fibs, LinkOwners& owners)
      : topology_(topology), mode_(mode), plane_(plane), fibs_(fibs), owners_(owners) {
    for (size_t s = 0; s < topology.switches.size(); ++s) {
      if (topology.switches[s].plane != plane) continue;
      local_.emplace(static_cast<int>(s), static_cast<int>(members_.size()));
      members_.push_back(static_cast<int>(s));
      interners_.emplace_back(&fibs[s]);
    }
    n_ = static_cast<int>(members_.size());
    adjacency_.resize(n_);
    size_t host_links = 0;
    for (const RouteTopology::Link& link : topology.links) {
      if (link.plane != plane) continue;
      if (link.a_switch < 0 || link.b_switch < 0) {
        if (!link.host_usid_leaf_local) ++host_links;  // a locator every switch of the plane routes
        continue;
      }
      if (!link.up || !link.carries_routes) continue;
      int a = local_.at(link.a_switch), b = local_.at(link.b_switch);
      adjacency_[a].push_back({b, static_cast<uint16_t>(link.b_port)});
      adjacency_[b].push_back({a, static_cast<uint16_t>(link.a_port)});
    }
    for (int s : members_) fibs[s].by_usid.reserve(n_ + host_links);
    distance_.assign(static_cast<size_t>(n_) * n_, kUnreachable);
    group_.assign(static_cast<size_t>(n_) * n_, 0);
  }

  void Compute() {
    for (int origin = 0; origin < n_; ++origin) Search(origin);
    FillLocators();
    for (size_t l = 0; l < topology_.links.size(); ++l) {
      const RouteTopology::Link& link = topology_.links[l];
      if (link.plane != plane_) continue;
      if (link.a_switch < 0 || link.b_switch < 0) {
        FillHostLink(static_cast<uint32_t>(l), link);
      } else {
        FillFabricLink(static_cast<uint32_t>(l), link);
      }
    }
  }

 private:
  int& Distance(int origin, int s) { return distance_[static_cast<size_t>(origin) * n_ + s]; }
  uint32_t& Group(int origin, int s) { return group_[static_cast<size_t>(origin) * n_ + s]; }
  uint32_t Asn(int s) const { return topology_.switches[members_[s]].asn; }
  Fib& FibOf(int s) { return fibs_[members_[s]]; }

  // Whether the path that `via` advertises (via, its parent, ..., the origin) crosses `asn`.
  bool AsnOnPath(uint32_t asn, int via, const std::vector<int>& parent) const {
    for (int v = via; v != kUnreachable; v = parent[v]) {
      if (Asn(v) == asn) return true;
    }
    return false;
  }

  // Breadth-first search from `origin`: the distance and the ECMP group of every switch.
  void Search(int origin) {
    std::vector<int> parent(n_, kUnreachable);
    std::vector<std::vector<uint16_t>> hops(n_);
    std::deque<int> queue{origin};
    Distance(origin, origin) = 0;
    while (!queue.empty()) {
      const int x = queue.front();
      queue.pop_front();
      const int next = Distance(origin, x) + 1;
      for (const Adjacency& adj : adjacency_[x]) {
        int& d = Distance(origin, adj.peer);
        if (d != kUnreachable && d != next) continue;
        if (mode_ == RouteMode::kBgp && AsnOnPath(Asn(adj.peer), x, parent)) continue;
        if (d == kUnreachable) {
          d = next;
          parent[adj.peer] = x;
          queue.push_back(adj.peer);
        }
        hops[adj.peer].push_back(adj.peer_port);
      }
    }
    for (int s = 0; s < n_; ++s) {
      if (Distance(origin, s) > 0) Group(origin, s) = interners_[s].Intern(std::move(hops[s]));
    }
  }

  void FillLocators() {
    for (int s = 0; s < n_; ++s) {
      for (int t = 0; t < n_; ++t) {
        const uint16_t usid = topology_.switches[members_[t]].usid;
        if (t == s) {
          FibOf(s).by_usid[usid] = {Behaviour::kUn, 0};
        } else if (Distance(t, s) > 0) {
          FibOf(s).by_usid[usid] = Forward(Group(t, s), Distance(t, s));
        }
      }
    }
  }

  // The leaf's connected entries; everyone else reaches the subnet through the leaf's locator
  // (LookupLinkAddress), while the link is up.
  void FillHostLink(uint32_t index, const RouteTopology::Link& link) {
    const bool switch_is_a = link.a_switch >= 0;
    const int leaf = local_.at(switch_is_a ? link.a_switch : link.b_switch);
    const uint16_t leaf_port = static_cast<uint16_t>(switch_is_a ? link.a_port : link.b_port);
    const uint64_t leaf_address = LinkAddressKey(plane_, index, switch_is_a ? 1 : 2);
    const uint64_t host_address = LinkAddressKey(plane_, index, switch_is_a ? 2 : 1);
    const FibEntry connected = Forward(interners_[leaf].Intern({leaf_port}), 1);
    Fib& leaf_fib = FibOf(leaf);
    leaf_fib.by_usid[link.host_usid] = connected;
    leaf_fib.by_link_address[host_address] = connected;
    leaf_fib.by_link_address[leaf_address] = {Behaviour::kLocal, 0};
    if (!link.up) return;
    owners_[index].usid[switch_is_a ? 0 : 1] = topology_.switches[members_[leaf]].usid;
    if (link.host_usid_leaf_local) return;
    for (int s = 0; s < n_; ++s) {
      if (s == leaf || Distance(leaf, s) <= 0) continue;
      FibOf(s).by_usid[link.host_usid] = Forward(Group(leaf, s), Distance(leaf, s));
    }
  }

  // The ends' connected entries; everyone else goes through the nearer end's locator
  // (LookupLinkAddress), or, when both ends are equally far, the union held here.
  void FillFabricLink(uint32_t index, const RouteTopology::Link& link) {
    const int a = local_.at(link.a_switch), b = local_.at(link.b_switch);
    const uint64_t a_address = LinkAddressKey(plane_, index, 1);
    const uint64_t b_address = LinkAddressKey(plane_, index, 2);
    FibOf(a).by_link_address[a_address] = {Behaviour::kLocal, 0};
    FibOf(a).by_link_address[b_address] = Forward(interners_[a].Intern({static_cast<uint16_t>(link.a_port)}), 1);
    FibOf(b).by_link_address[b_address] = {Behaviour::kLocal, 0};
    FibOf(b).by_link_address[a_address] = Forward(interners_[b].Intern({static_cast<uint16_t>(link.b_port)}), 1);
    if (!link.up) return;
    owners_[index].usid[0] = topology_.switches[members_[a]].usid;
    owners_[index].usid[1] = topology_.switches[members_[b]].usid;
    for (int s = 0; s < n_; ++s) {
      if (s == a || s == b) continue;
      const int da = Distance(a, s), db = Distance(b, s);
      if (da <= 0 || da != db) continue;
      const std::vector<uint16_t>& ga = FibOf(s).groups[Group(a, s)];
      const std::vector<uint16_t>& gb = FibOf(s).groups[Group(b, s)];
      std::vector<uint16_t> both;
      std::set_union(ga.begin(), ga.end(), gb.begin(), gb.end(), std::back_inserter(both));
      const FibEntry tie = Forward(interners_[s].Intern(std::move(both)), da);
      FibOf(s).by_link_address[a_address] = tie;
      FibOf(s).by_link_address[b_address] = tie;
    }
  }

  const RouteTopology& topology_;
  RouteMode mode_;
  int plane_;
  std::vector<Fib>& fibs_;
  LinkOwners& owners_;
  std::vector<int> members_;       // plane-local index -> switch index
  std::map<int, int> local_;       // switch index -> plane-local index
  std::vector<GroupInterner> interners_;
  int n_ = 0;
  std::vector<std::vector<Adjacency>> adjacency_;
  std::vector<int> distance_;      // [origin][switch]: hops, kUnreachable, 0 at the origin
  std::vector<uint32_t> group_;    // [origin][switch]: ECMP group toward origin, where > 0
};

}  // namespace

std::vector<Fib> ComputeFibs(const RouteTopology& topology, RouteMode mode) {
  Validate(topology);
  std::vector<Fib> fibs(topology.switches.size());
  auto owners = std::make_shared<LinkOwners>(topology.links.size());
  for (size_t l = 0; l < topology.links.size(); ++l) (*owners)[l].plane = static_cast<uint16_t>(topology.links[l].plane);
  std::vector<int> planes;
  for (const RouteTopology::Switch& s : topology.switches) planes.push_back(s.plane);
  std::sort(planes.begin(), planes.end());
  planes.erase(std::unique(planes.begin(), planes.end()), planes.end());
  for (int plane : planes) PlaneRoutes(topology, mode, plane, fibs, *owners).Compute();
  for (Fib& fib : fibs) fib.link_owners = owners;
  return fibs;
}

}  // namespace mrclab::emulator::sim
