// The resolved plan as JSON (ToJson, SummaryJson) and as the text of its compact dump written
// piece by piece (DumpJson), for plans too large to hold as one JSON document.
#include "emulator/resolved_lab.h"

#include <nlohmann/json.hpp>

#include "emulator/usid_plan.h"

namespace mrclab::emulator {
namespace {

using nlohmann::json;

std::string PrefixText(const std::array<uint16_t, 8>& groups, int length) {
  return FormatIpv6(groups) + "/" + std::to_string(length);
}

json NodeJson(const ResolvedLab& lab, const ResolvedNode& n) {
  json jn;
  jn["name"] = n.name;
  jn["netns"] = n.netns;
  jn["index"] = n.index;
  if (n.kind == NodeKind::kSwitch) {
    jn["kind"] = "switch";
    jn["role"] = n.role == SwitchRole::kSpine ? "spine" : "leaf";
    jn["plane"] = n.plane;
    jn["asn"] = n.asn;
    jn["router_id"] = n.router_id;
    jn["usid"] = UsidHex(n.usid);
    jn["locator"] = UsidLocator(n.usid);
  } else {
    jn["kind"] = "host";
    json ports = json::array();
    for (const ResolvedNode::Port& p : n.ports) {
      ports.push_back({{"plane", p.plane},
                       {"interface", p.interface},
                       {"usid", UsidHex(p.usid)},
                       {"address", p.address},
                       {"usid_address", UsidAddress(p.usid)}});
    }
    jn["ports"] = ports;
  }
  json ifs = json::array();
  for (const ResolvedInterface& i : n.interfaces) {
    ifs.push_back({{"name", i.name},
                   {"link", i.link},
                   {"fabric", lab.IsFabric(i)},
                   {"plane", i.plane},
                   {"address", i.address},
                   {"peer_node", i.peer_node},
                   {"peer_interface", i.peer_interface},
                   {"peer_address", i.peer_address}});
  }
  jn["interfaces"] = ifs;
  json routes = json::array();
  for (const Route& r : n.routes) {
    json hops = json::array();
    for (const NextHop& h : r.next_hops) hops.push_back({{"address", h.address}, {"interface", h.interface}});
    routes.push_back({{"prefix", r.prefix}, {"next_hops", hops}});
  }
  jn["routes"] = routes;
  if (!n.sysctls.empty()) {
    json sysctls = json::object();
    for (const ResolvedNode::Sysctl& s : n.sysctls) sysctls[s.key] = s.value;
    jn["sysctls"] = sysctls;
  }
  if (n.vm) jn["runtime"] = {{"vm", {{"memory_mib", n.vm->memory_mib}, {"cpus", n.vm->cpus}}}};
  if (n.image) jn["image"] = {{n.image->is_archive ? "archive" : "image", n.image->reference}};
  if (n.frr_config) jn["frr_config"] = {{n.frr_config->is_template ? "template" : "file", n.frr_config->path}};
  return jn;
}

json LinkJson(const ResolvedLink& l) {
  return {{"index", l.index},
          {"plane", l.plane},
          {"fabric", l.fabric},
          {"subnet", l.subnet},
          {"a", {{"node", l.a.node}, {"interface", l.a.interface}, {"address", l.a_address}}},
          {"b", {{"node", l.b.node}, {"interface", l.b.interface}, {"address", l.b_address}}}};
}

json PathJson(const UsidPath& p) {
  return {{"plane", p.plane},   {"src_host", p.src_host}, {"leaf_a", p.leaf_a},          {"spine", p.spine},
          {"leaf_b", p.leaf_b}, {"dst_host", p.dst_host}, {"destination", p.destination}};
}

// The lists that SummaryJson leaves out, by key.
constexpr const char* kNodes = "nodes";
constexpr const char* kLinks = "links";
constexpr const char* kPaths = "spine_proof_paths";

}  // namespace

nlohmann::json ResolvedLab::SummaryJson() const {
  json j;
  j["name"] = name;
  j["source"] = source;
  j["routing"] = routing == Routing::kStatic ? "static" : "bgp";
  j["link_rate_bps"] = link_rate_bps ? json(*link_rate_bps) : json(nullptr);
  j["link_delay_ns"] = link_delay_ns ? json(*link_delay_ns) : json(nullptr);
  j["mtu"] = mtu;
  j["bfd_interval_ms"] = routing == Routing::kBgp ? json(bfd_interval_ns / 1000000) : json(nullptr);
  j["plane_count"] = planes;
  j["host_usids"] = host_usids_leaf_local ? "leaf-local" : "global";
  j["expected_bgp_sessions"] = ExpectedBgpSessions();
  json plane_list = json::array();
  for (int p = 0; p < planes; ++p) {
    json spines = json::array(), leaves = json::array(), hosts = json::array();
    for (const ResolvedNode& n : nodes) {
      if (n.kind == NodeKind::kSwitch && n.plane == p) (n.role == SwitchRole::kSpine ? spines : leaves).push_back(n.name);
      for (const ResolvedNode::Port& port : n.ports)
        if (port.plane == p) hosts.push_back(n.name);
    }
    plane_list.push_back({{"plane", p},
                          {"prefix", PrefixText({0xfd00, static_cast<uint16_t>(p)}, 32)},
                          {"usid_prefix", PrefixText({0xfcbb, 0, static_cast<uint16_t>((p + 1) << 12)}, 36)},
                          {"spines", spines},
                          {"leaves", leaves},
                          {"hosts", hosts}});
  }
  j["planes"] = plane_list;
  return j;
}

nlohmann::json ResolvedLab::ToJson() const {
  json j = SummaryJson();
  json& node_list = j[kNodes] = json::array();
  for (const ResolvedNode& n : nodes) node_list.push_back(NodeJson(*this, n));
  json& link_list = j[kLinks] = json::array();
  for (const ResolvedLink& l : links) link_list.push_back(LinkJson(l));
  json& paths = j[kPaths] = json::array();
  for (const UsidPath& p : SpineProofPaths()) paths.push_back(PathJson(p));
  return j;
}

void ResolvedLab::DumpJson(const std::function<void(std::string_view)>& write) const {
  // The summary with the three lists as placeholders: its items come in the order dump() writes
  // them (an object's keys sorted), each list is written one element at a time in its place.
  json j = SummaryJson();
  j[kNodes] = nullptr;
  j[kLinks] = nullptr;
  j[kPaths] = nullptr;
  auto list = [&write](const auto& items, const auto& to_json) {
    write("[");
    bool first = true;
    for (const auto& item : items) {
      if (!first) write(",");
      first = false;
      write(to_json(item).dump());
    }
    write("]");
  };
  write("{");
  bool first = true;
  for (const auto& [key, value] : j.items()) {
    if (!first) write(",");
    first = false;
    write(json(key).dump());
    write(":");
    if (key == kNodes)
      list(nodes, [this](const ResolvedNode& n) { return NodeJson(*this, n); });
    else if (key == kLinks)
      list(links, LinkJson);
    else if (key == kPaths)
      list(SpineProofPaths(), PathJson);
    else
      write(value.dump());
  }
  write("}");
}

}  // namespace mrclab::emulator
