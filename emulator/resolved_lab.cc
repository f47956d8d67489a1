#include "emulator/resolved_lab.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <tuple>

#include "emulator/usid_plan.h"

namespace mrclab::emulator {

namespace {

using Groups = std::array<uint16_t, 8>;

constexpr uint32_t kAsnBase = 4200000000u;

struct Prefix {
  Groups groups{};
  int length = 0;
  auto operator<=>(const Prefix&) const = default;
  std::string Text() const { return FormatIpv6(groups) + "/" + std::to_string(length); }
};

// fd00:<P>:<L mod 2^16>:<L div 2^16>::<host>: links past 65535 use the fourth group.
Groups LinkAddress(int plane, int link, uint16_t host) {
  return {0xfd00, static_cast<uint16_t>(plane), static_cast<uint16_t>(link & 0xffff),
          static_cast<uint16_t>(static_cast<uint32_t>(link) >> 16), 0, 0, 0, host};
}

Groups UsidGroups(uint16_t usid) { return {0xfcbb, 0, usid, 0, 0, 0, 0, 0}; }

struct NextHopKey {
  Groups address;
  std::string interface;
  auto operator<=>(const NextHopKey&) const = default;
};

// Routes of one node, keyed and ordered by prefix; next hops ordered by address then interface.
class RouteTable {
 public:
  void Add(const Prefix& prefix, const std::set<NextHopKey>& hops) {
    if (!hops.empty()) routes_[prefix].insert(hops.begin(), hops.end());
  }
  std::vector<Route> Take() const {
    std::vector<Route> out;
    for (const auto& [prefix, hops] : routes_) {
      Route r{prefix.Text(), {}};
      for (const NextHopKey& h : hops) r.next_hops.push_back({FormatIpv6(h.address), h.interface});
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  std::map<Prefix, std::set<NextHopKey>> routes_;
};

const char* RoleName(SwitchRole r) { return r == SwitchRole::kSpine ? "spine" : "leaf"; }

}  // namespace

std::string FormatIpv6(const Groups& g) {
  int best_start = -1, best_len = 0;
  for (int i = 0; i < 8;) {
    if (g[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > best_len) {
      best_start = i;
      best_len = j - i;
    }
    i = j;
  }
  if (best_len < 2) best_start = -1;
  std::string out;
  char buf[8];
  for (int i = 0; i < 8; ++i) {
    if (i == best_start) {
      out += "::";
      i += best_len - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ':';
    std::snprintf(buf, sizeof buf, "%x", g[i]);
    out += buf;
  }
  return out;
}

std::string UsidHex(uint16_t usid) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%x", usid);
  return buf;
}

std::string UsidAddress(uint16_t usid) { return FormatIpv6(UsidGroups(usid)); }

std::string UsidLocator(uint16_t usid) { return UsidAddress(usid) + "/48"; }

void ResolvedLab::IndexNodes() {
  node_index_.clear();
  node_index_.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) node_index_.emplace(nodes[i].name, i);
}

const ResolvedNode* ResolvedLab::FindNode(const std::string& name) const {
  auto it = node_index_.find(name);
  if (it != node_index_.end() && it->second < nodes.size() && nodes[it->second].name == name)
    return &nodes[it->second];
  for (const ResolvedNode& n : nodes) {  // a lab built or changed by hand
    if (n.name == name) return &n;
  }
  return nullptr;
}

std::vector<SharedPort> SharedPorts(const ResolvedNode& a, const ResolvedNode& b) {
  std::vector<SharedPort> out;
  for (const auto& pa : a.ports)
    for (const auto& pb : b.ports)
      if (pa.plane == pb.plane) out.emplace_back(&pa, &pb);
  return out;
}

const ResolvedNode* ResolvedLab::VmHostOn(const ResolvedLink& link) const {
  for (const std::string* name : {&link.a.node, &link.b.node})
    if (const ResolvedNode* n = FindNode(*name); n && n->vm) return n;
  return nullptr;
}

std::vector<const ResolvedNode*> ResolvedLab::Switches() const {
  std::vector<const ResolvedNode*> out;
  for (const ResolvedNode& n : nodes) {
    if (n.kind == NodeKind::kSwitch) out.push_back(&n);
  }
  return out;
}

std::vector<const ResolvedNode*> ResolvedLab::Hosts() const {
  std::vector<const ResolvedNode*> out;
  for (const ResolvedNode& n : nodes) {
    if (n.kind == NodeKind::kHost) out.push_back(&n);
  }
  return out;
}

int ResolvedLab::ExpectedBgpSessions() const {
  int fabric = 0;
  for (const ResolvedLink& l : links) fabric += l.fabric ? 1 : 0;
  return 2 * fabric;
}

UsidPath ResolvedLab::PathVia(const std::string& src_host, const std::string& leaf_a,
                              const std::string& spine, const std::string& leaf_b,
                              const std::string& dst_host) const {
  auto need = [&](const std::string& name, NodeKind kind, std::optional<SwitchRole> role) {
    const ResolvedNode* n = FindNode(name);
    if (n == nullptr) throw std::invalid_argument("unknown node '" + name + "'");
    if (n->kind != kind || (role && n->role != *role)) {
      std::string want = kind == NodeKind::kHost ? "host" : RoleName(*role);
      throw std::invalid_argument("'" + name + "' is not a " + want);
    }
    return n;
  };
  const ResolvedNode* src = need(src_host, NodeKind::kHost, std::nullopt);
  const ResolvedNode* la = need(leaf_a, NodeKind::kSwitch, SwitchRole::kLeaf);
  const ResolvedNode* sp = need(spine, NodeKind::kSwitch, SwitchRole::kSpine);
  const ResolvedNode* lb = need(leaf_b, NodeKind::kSwitch, SwitchRole::kLeaf);
  const ResolvedNode* dst = need(dst_host, NodeKind::kHost, std::nullopt);
  auto adjacent = [](const ResolvedNode* x, const ResolvedNode* y) {
    for (const ResolvedInterface& i : x->interfaces) {
      if (i.peer_node == y->name) return true;
    }
    return false;
  };
  const std::pair<const ResolvedNode*, const ResolvedNode*> hops[] = {
      {src, la}, {la, sp}, {sp, lb}, {lb, dst}};
  for (const auto& [x, y] : hops) {
    if (!adjacent(x, y)) {
      throw std::invalid_argument("'" + x->name + "' and '" + y->name + "' are not adjacent");
    }
  }
  if (la->plane != sp->plane || lb->plane != sp->plane) {
    throw std::invalid_argument("the path leaves plane " + std::to_string(sp->plane));
  }
  const ResolvedNode::Port* dst_port = nullptr;
  for (const ResolvedNode::Port& p : dst->ports) {
    if (p.plane == lb->plane) dst_port = &p;
  }
  if (dst_port == nullptr) {
    throw std::invalid_argument("'" + dst_host + "' has no port in plane " +
                                std::to_string(lb->plane));
  }
  UsidPath path;
  path.plane = sp->plane;
  path.src_host = src_host;
  path.leaf_a = leaf_a;
  path.spine = spine;
  path.leaf_b = leaf_b;
  path.dst_host = dst_host;
  path.destination = FormatIpv6({0xfcbb, 0, la->usid, sp->usid, lb->usid, dst_port->usid, 0, 0});
  return path;
}

std::vector<UsidPath> ResolvedLab::SpineProofPaths() const {
  // Hosts attached to a leaf, by host number (the node order of hosts).
  auto hosts_of = [&](const ResolvedNode* leaf) {
    std::vector<const ResolvedNode*> out;
    for (const ResolvedInterface& i : leaf->interfaces) {
      const ResolvedNode* peer = FindNode(i.peer_node);
      if (peer->kind == NodeKind::kHost) out.push_back(peer);
    }
    std::sort(out.begin(), out.end(), [](auto* x, auto* y) { return x->index < y->index; });
    return out;
  };
  std::vector<UsidPath> out;
  for (int p = 0; p < planes; ++p) {
    int spine_number = 0;
    for (const ResolvedNode& spine : nodes) {
      if (spine.kind != NodeKind::kSwitch || spine.role != SwitchRole::kSpine || spine.plane != p) {
        continue;
      }
      std::vector<const ResolvedNode*> leaves;
      std::set<std::string> seen;
      for (const ResolvedInterface& i : spine.interfaces) {
        const ResolvedNode* peer = FindNode(i.peer_node);
        if (peer->role == SwitchRole::kLeaf && !hosts_of(peer).empty() &&
            seen.insert(peer->name).second) {
          leaves.push_back(peer);
        }
      }
      std::sort(leaves.begin(), leaves.end(), [](auto* x, auto* y) { return x->index < y->index; });
      int s = spine_number++;
      if (leaves.empty()) continue;
      // Rotating the leaf pair with the spine number spreads the proofs over more links.
      const ResolvedNode* la = leaves[s % leaves.size()];
      const ResolvedNode* lb = leaves.size() >= 2 ? leaves[(s + 1) % leaves.size()] : la;
      auto ha = hosts_of(la);
      auto hb = hosts_of(lb);
      const ResolvedNode* src = ha[0];
      const ResolvedNode* dst = la != lb ? hb[0] : ha[ha.size() >= 2 ? 1 : 0];
      out.push_back(PathVia(src->name, la->name, spine.name, lb->name, dst->name));
    }
  }
  return out;
}

uint64_t DefaultBfdIntervalNs(size_t fabric_links) {
  constexpr uint64_t kStepMs = 100, kFrrDefaultMs = 300;
  const uint64_t needed_ms = (2 * 1000 * fabric_links + kMaxBfdPacketsPerSecond - 1) / kMaxBfdPacketsPerSecond;
  const uint64_t ms = std::max(kFrrDefaultMs, (needed_ms + kStepMs - 1) / kStepMs * kStepMs);
  return ms * 1000000;
}

namespace {

bool Matches(const NodeMatch& m, const ResolvedNode& n) {
  if (m.node && *m.node != n.name) return false;
  if (m.kind && *m.kind != n.kind) return false;
  if ((m.role || m.plane) && n.kind != NodeKind::kSwitch) return false;  // roles and planes are switches'
  if (m.role && *m.role != n.role) return false;
  return !m.plane || *m.plane == n.plane;
}

// The lab file's sysctls onto the nodes they match, in file order (a later one wins).
void AttachSysctls(const LabSpec& spec, ResolvedLab& lab) {
  for (const SysctlSpec& s : spec.sysctls) {
    bool any = false;
    for (ResolvedNode& n : lab.nodes) {
      if (!Matches(s.match, n)) continue;
      any = true;
      for (const auto& [key, value] : s.settings) n.sysctls.push_back({key, value, s.field + ".set." + key});
    }
    if (!any) throw LabError(spec.source, s.field + ".match", "matches no node of the lab");
  }
}

// The lab file's FRR configurations onto the switches they match (a later entry wins).
void AttachFrrConfigs(const LabSpec& spec, ResolvedLab& lab) {
  for (const FrrConfigSpec& c : spec.frr_configs) {
    bool any = false;
    for (ResolvedNode& n : lab.nodes) {
      if (n.kind != NodeKind::kSwitch || !Matches(c.match, n)) continue;
      any = true;
      n.frr_config = ResolvedNode::FrrConfig{c.path, c.field, c.is_template};
    }
    const std::string entry = c.field.substr(0, c.field.find('.'));
    if (!any) throw LabError(spec.source, entry + ".match", "matches no switch of the lab");
  }
}

// The lab file's router images onto the switches they match (a later entry wins).
void AttachImages(const LabSpec& spec, ResolvedLab& lab) {
  for (const ImageSpec& c : spec.images) {
    bool any = false;
    for (ResolvedNode& n : lab.nodes) {
      if (n.kind != NodeKind::kSwitch || !Matches(c.match, n)) continue;
      any = true;
      n.image = ResolvedNode::Image{c.reference, c.field, c.is_archive};
    }
    const std::string entry = c.field.substr(0, c.field.find('.'));
    if (!any) throw LabError(spec.source, entry + ".match", "matches no switch of the lab");
  }
}

// The lab file's runtimes onto the hosts they match (a later entry wins).
void AttachRuntimes(const LabSpec& spec, ResolvedLab& lab) {
  for (const RuntimeSpec& r : spec.runtimes) {
    bool any = false;
    for (ResolvedNode& n : lab.nodes) {
      if (n.kind != NodeKind::kHost || !Matches(r.match, n)) continue;
      any = true;
      n.vm = r.vm ? std::optional(ResolvedNode::Vm{r.memory_mib, r.cpus, r.field}) : std::nullopt;
    }
    if (!any) throw LabError(spec.source, r.field + ".match", "matches no host of the lab");
  }
}

}  // namespace

ResolvedLab Resolve(const LabSpec& spec, const ResolveOptions& options) {
  auto fail = [&](const std::string& field, const std::string& reason) {
    throw LabError(spec.source, field, reason);
  };
  const int n_nodes = static_cast<int>(spec.nodes.size());
  if (n_nodes == 0) fail("nodes", "the lab has no nodes");

  std::map<std::string, int> by_name;
  for (int i = 0; i < n_nodes; ++i) {
    if (!by_name.emplace(spec.nodes[i].name, i).second) {
      fail("nodes." + spec.nodes[i].name, "duplicate node name");
    }
  }

  // Endpoints of every link as spec node indices; the structural checks of the parser repeated
  // so that hand-built specs cannot produce a broken plan.
  std::vector<std::array<int, 2>> ends(spec.links.size());
  std::vector<bool> has_host_link(n_nodes, false);
  std::set<std::pair<std::string, std::string>> used;
  for (size_t l = 0; l < spec.links.size(); ++l) {
    const LinkSpec& link = spec.links[l];
    std::string path = "links[" + std::to_string(l) + "]";
    const EndpointSpec* e[2] = {&link.a, &link.b};
    for (int j = 0; j < 2; ++j) {
      std::string field = path + ".endpoints[" + std::to_string(j) + "]";
      auto it = by_name.find(e[j]->node);
      if (it == by_name.end()) fail(field, "unknown node '" + e[j]->node + "'");
      ends[l][j] = it->second;
      if (e[j]->interface.empty() || e[j]->interface.size() > 15) {
        fail(field, "interface name '" + e[j]->interface + "' must have 1 to 15 characters");
      }
      if (!used.insert({e[j]->node, e[j]->interface}).second) {
        fail(field, e[j]->node + ":" + e[j]->interface + " is used by two links");
      }
    }
    if (ends[l][0] == ends[l][1]) fail(path + ".endpoints", "a link from a node to itself");
    bool host_a = spec.nodes[ends[l][0]].kind == NodeKind::kHost;
    bool host_b = spec.nodes[ends[l][1]].kind == NodeKind::kHost;
    if (host_a && host_b) fail(path + ".endpoints", "host-to-host links are not supported");
    if (host_a) has_host_link[ends[l][1]] = true;
    if (host_b) has_host_link[ends[l][0]] = true;
  }
  if (spec.links.size() > 0x7fffffff) fail("links", "more than 2^31 links do not fit the plan");

  // Plane, role and index of every node, in spec order: generated nodes come first, so explicit
  // switches continue the indices of their (plane, role) and explicit hosts the host numbers.
  struct Placed {
    int plane = -1;
    SwitchRole role = SwitchRole::kLeaf;
    int index = 0;
  };
  std::vector<Placed> placed(n_nodes);
  std::map<std::pair<int, SwitchRole>, int> counters;
  int host_count = 0;
  int planes = spec.clos ? spec.clos->planes : 0;
  if (planes > kMaxPlanes) fail("clos.planes", "more than 15 planes do not fit the uSID plan");
  for (int i = 0; i < n_nodes; ++i) {
    const NodeSpec& n = spec.nodes[i];
    std::string field = "nodes." + n.name;
    if (n.kind == NodeKind::kHost) {
      placed[i].index = host_count++;
      continue;
    }
    int plane = n.plane.value_or(0);
    if (plane < 0 || plane >= kMaxPlanes) {
      fail(field + ".plane",
           "plane " + std::to_string(plane) + ": more than 15 planes do not fit the uSID plan");
    }
    SwitchRole role = n.role.value_or(has_host_link[i] ? SwitchRole::kLeaf : SwitchRole::kSpine);
    if (role == SwitchRole::kSpine && has_host_link[i]) {
      fail(field + ".role", "a spine cannot have host ports (a leaf is a switch with host ports)");
    }
    int index = counters[{plane, role}]++;
    if (index >= kMaxSwitchesPerRole) {
      fail(field, "more than " + std::to_string(kMaxSwitchesPerRole) + " " + RoleName(role) + "s in plane " +
                      std::to_string(plane) + " do not fit the uSID plan");
    }
    placed[i] = {plane, role, index};
    planes = std::max(planes, plane + 1);
  }
  for (int i = 0; i < n_nodes; ++i) {
    const Placed& p = placed[i];
    if (spec.nodes[i].kind == NodeKind::kSwitch && p.role == SwitchRole::kLeaf &&
        counters[{p.plane, SwitchRole::kSpine}] == 0) {
      fail("nodes." + spec.nodes[i].name,
           "plane " + std::to_string(p.plane) + " has leaves but no spines");
    }
  }

  ResolvedLab lab;
  lab.name = spec.name;
  lab.source = spec.source;
  lab.routing = spec.routing;
  lab.link_rate_bps = spec.link_rate_bps;
  lab.link_delay_ns = spec.link_delay_ns;
  lab.mtu = spec.mtu;
  lab.planes = planes;

  // Node order: switches by (plane, spines then leaves, index), then hosts by number.
  std::vector<int> order(n_nodes);
  for (int i = 0; i < n_nodes; ++i) order[i] = i;
  auto key = [&](int i) {
    bool host = spec.nodes[i].kind == NodeKind::kHost;
    return std::make_tuple(host ? 1 : 0, host ? 0 : placed[i].plane,
                           host ? 0 : static_cast<int>(placed[i].role), placed[i].index);
  };
  std::sort(order.begin(), order.end(), [&](int x, int y) { return key(x) < key(y); });
  std::vector<int> resolved_of(n_nodes);
  for (int r = 0; r < n_nodes; ++r) {
    int i = order[r];
    const NodeSpec& s = spec.nodes[i];
    resolved_of[i] = r;
    ResolvedNode n;
    n.name = s.name;
    n.kind = s.kind;
    n.index = placed[i].index;
    n.netns = spec.name + "-" + s.name;
    if (s.kind == NodeKind::kSwitch) {
      const Placed& p = placed[i];
      const int role = p.role == SwitchRole::kSpine ? 1 : 2;
      n.role = p.role;
      n.plane = p.plane;
      n.usid = SwitchUsid(p.plane, p.role, p.index);
      n.asn = kAsnBase + static_cast<uint32_t>(p.plane) * 100000u +
              (p.role == SwitchRole::kLeaf ? 10000u + static_cast<uint32_t>(p.index) : 0u);
      n.router_id = "10." + std::to_string(p.plane) + "." + std::to_string(role + 4 * (p.index >> 8)) + "." +
                    std::to_string(p.index & 0xff);
    }
    lab.nodes.push_back(std::move(n));
  }

  for (size_t l = 0; l < spec.links.size(); ++l) {
    const LinkSpec& s = spec.links[l];
    const ResolvedNode& na = lab.nodes[resolved_of[ends[l][0]]];
    const ResolvedNode& nb = lab.nodes[resolved_of[ends[l][1]]];
    ResolvedLink link;
    link.index = static_cast<int>(l);
    link.a = s.a;
    link.b = s.b;
    link.fabric = na.kind == NodeKind::kSwitch && nb.kind == NodeKind::kSwitch;
    if (link.fabric && na.plane != nb.plane) {
      fail("links[" + std::to_string(l) + "]", "planes never meet: " + na.name + " is in plane " +
                                                   std::to_string(na.plane) + ", " + nb.name +
                                                   " in plane " + std::to_string(nb.plane));
    }
    link.plane = na.kind == NodeKind::kSwitch ? na.plane : nb.plane;
    link.subnet = Prefix{LinkAddress(link.plane, link.index, 0), 64}.Text();
    link.a_address = FormatIpv6(LinkAddress(link.plane, link.index, 1));
    link.b_address = FormatIpv6(LinkAddress(link.plane, link.index, 2));
    lab.links.push_back(std::move(link));
  }

  size_t fabric_links = 0;
  for (const ResolvedLink& link : lab.links) fabric_links += link.fabric;
  lab.bfd_interval_ns = spec.bfd_interval_ns.value_or(DefaultBfdIntervalNs(fabric_links));

  // Interfaces in link order.
  for (const ResolvedLink& link : lab.links) {
    ResolvedNode& na = lab.nodes[resolved_of[ends[link.index][0]]];
    ResolvedNode& nb = lab.nodes[resolved_of[ends[link.index][1]]];
    na.interfaces.push_back({link.a.interface, link.index, link.plane, link.a_address + "/64",
                             link.b.node, link.b.interface, link.b_address});
    nb.interfaces.push_back({link.b.interface, link.index, link.plane, link.b_address + "/64",
                             link.a.node, link.a.interface, link.a_address});
  }

  // Host ports: one per plane. Their uSIDs are global in labs of up to 255 hosts, else
  // leaf-local: the port's position among its leaf's host links, in link order.
  lab.host_usids_leaf_local = host_count > kMaxGlobalHosts;
  std::vector<int> position_on_leaf(lab.links.size(), 0);
  if (lab.host_usids_leaf_local) {
    std::vector<int> host_ports_of(n_nodes, 0);  // by spec index of the leaf
    for (const ResolvedLink& link : lab.links) {
      if (link.fabric) continue;
      const int leaf = spec.nodes[ends[link.index][0]].kind == NodeKind::kSwitch ? ends[link.index][0]
                                                                                 : ends[link.index][1];
      position_on_leaf[link.index] = host_ports_of[leaf]++;
      if (position_on_leaf[link.index] >= kMaxHostPortsPerLeaf)
        fail("nodes." + spec.nodes[leaf].name, "more than " + std::to_string(kMaxHostPortsPerLeaf) +
                                                   " host ports do not fit the uSID plan");
    }
  }
  for (ResolvedNode& n : lab.nodes) {
    if (n.kind != NodeKind::kHost) continue;
    for (const ResolvedInterface& i : n.interfaces) {
      for (const ResolvedNode::Port& p : n.ports) {
        if (p.plane == i.plane) {
          fail("nodes." + n.name, "two ports in plane " + std::to_string(i.plane) + " (" +
                                      p.interface + " and " + i.name + ")");
        }
      }
      const uint16_t usid = lab.host_usids_leaf_local ? LeafLocalHostPortUsid(i.plane, position_on_leaf[i.link])
                                                      : GlobalHostPortUsid(i.plane, n.index);
      n.ports.push_back({i.plane, i.name, usid, i.address.substr(0, i.address.find('/'))});
    }
    if (n.ports.empty()) fail("nodes." + n.name, "a host without any port");
    std::sort(n.ports.begin(), n.ports.end(),
              [](const auto& x, const auto& y) { return x.plane < y.plane; });
  }
  AttachSysctls(spec, lab);
  AttachFrrConfigs(spec, lab);
  AttachImages(spec, lab);
  AttachRuntimes(spec, lab);

  if (!options.routes) {
    lab.IndexNodes();
    return lab;
  }
  auto node_index = [&](const std::string& name) { return resolved_of[by_name.at(name)]; };

  // Hosts: the plane prefix and the plane's uSIDs via the leaf, out of the port.
  for (ResolvedNode& n : lab.nodes) {
    if (n.kind != NodeKind::kHost) continue;
    RouteTable table;
    for (const ResolvedInterface& i : n.interfaces) {
      const ResolvedLink& link = lab.links[i.link];
      uint16_t leaf_part = link.a.node == n.name ? 2 : 1;
      std::set<NextHopKey> via{{LinkAddress(link.plane, link.index, leaf_part), i.name}};
      table.Add({{0xfd00, static_cast<uint16_t>(i.plane)}, 32}, via);
      table.Add({{0xfcbb, 0, static_cast<uint16_t>((i.plane + 1) << 12)}, 36}, via);
    }
    n.routes = table.Take();
  }

  // Switches, per plane: shortest paths over the plane's switch graph, with ECMP.
  struct Adjacent {
    int node;
    NextHopKey hop;
  };
  std::vector<std::vector<Adjacent>> fabric(lab.nodes.size());
  for (size_t r = 0; r < lab.nodes.size(); ++r) {
    for (const ResolvedInterface& i : lab.nodes[r].interfaces) {
      if (!lab.links[i.link].fabric) continue;
      const ResolvedLink& link = lab.links[i.link];
      uint16_t host = link.a.node == lab.nodes[r].name ? 2 : 1;
      fabric[r].push_back(
          {node_index(i.peer_node), {LinkAddress(link.plane, link.index, host), i.name}});
    }
  }
  std::map<int, std::vector<int>> distance_to;  // BFS from every switch, memoised
  auto distances = [&](int target) -> const std::vector<int>& {
    auto it = distance_to.find(target);
    if (it != distance_to.end()) return it->second;
    std::vector<int> d(lab.nodes.size(), -1);
    std::deque<int> queue{target};
    d[target] = 0;
    while (!queue.empty()) {
      int x = queue.front();
      queue.pop_front();
      for (const Adjacent& a : fabric[x]) {
        if (d[a.node] < 0) {
          d[a.node] = d[x] + 1;
          queue.push_back(a.node);
        }
      }
    }
    return distance_to.emplace(target, std::move(d)).first->second;
  };
  auto toward = [&](int from, int target) {
    std::set<NextHopKey> hops;
    const std::vector<int>& d = distances(target);
    if (d[from] <= 0) return hops;
    for (const Adjacent& a : fabric[from]) {
      if (d[a.node] == d[from] - 1) hops.insert(a.hop);
    }
    return hops;
  };

  // Switches: a leaf routes its host ports' uSIDs to them (both modes); in static mode every
  // switch also gets shortest paths to the switches, host links and (global) host uSIDs of its
  // plane. One pass over the links; the static routes are O(switches x links) by nature.
  const bool static_mode = spec.routing == Routing::kStatic;
  std::vector<std::vector<int>> plane_switches(planes);
  for (size_t s = 0; s < lab.nodes.size(); ++s)
    if (lab.nodes[s].kind == NodeKind::kSwitch) plane_switches[lab.nodes[s].plane].push_back(static_cast<int>(s));
  std::vector<RouteTable> tables(lab.nodes.size());
  if (static_mode) {
    for (const std::vector<int>& members : plane_switches)
      for (int s : members)
        for (int t : members)
          if (t != s) tables[s].Add({UsidGroups(lab.nodes[t].usid), 48}, toward(s, t));
  }
  for (const ResolvedLink& link : lab.links) {
    if (link.fabric) continue;
    const bool host_is_a = lab.nodes[node_index(link.a.node)].kind == NodeKind::kHost;
    const int leaf = node_index(host_is_a ? link.b.node : link.a.node);
    const ResolvedNode& host = lab.nodes[node_index(host_is_a ? link.a.node : link.b.node)];
    uint16_t port_usid = 0;
    for (const ResolvedNode::Port& p : host.ports)
      if (p.plane == link.plane) port_usid = p.usid;
    const Prefix usid_prefix{UsidGroups(port_usid), 48};
    const std::string& leaf_if = host_is_a ? link.b.interface : link.a.interface;
    tables[leaf].Add(usid_prefix, {{LinkAddress(link.plane, link.index, host_is_a ? 1 : 2), leaf_if}});
    if (!static_mode) continue;
    for (int s : plane_switches[link.plane]) {
      if (s == leaf) continue;
      const std::set<NextHopKey> hops = toward(s, leaf);
      tables[s].Add({LinkAddress(link.plane, link.index, 0), 64}, hops);
      if (!lab.host_usids_leaf_local) tables[s].Add(usid_prefix, hops);
    }
  }
  for (const std::vector<int>& members : plane_switches)
    for (int s : members) lab.nodes[s].routes = tables[s].Take();
  lab.IndexNodes();
  return lab;
}

}  // namespace mrclab::emulator
