#include "emulator/netns/frr_config.h"

#include <sstream>

namespace mrclab::emulator::netns {
namespace {

std::string Header(const ResolvedNode& node, const std::string& log_dir,
                   const std::string& daemon) {
  std::ostringstream out;
  out << "frr defaults datacenter\n"
      << "hostname " << node.name << "\n"
      << "log file " << log_dir << "/" << daemon << ".log informational\n"
      << "!\n";
  return out.str();
}

// daemon -> its configuration after the header.
std::map<std::string, std::string> Bodies(const ResolvedLab& lab, const ResolvedNode& node) {
  std::map<std::string, std::string> files;
  for (const char* daemon : kFrrDaemons) files[daemon] = "";

  std::ostringstream statics;
  for (const Route& route : node.routes)
    for (const NextHop& hop : route.next_hops)
      statics << "ipv6 route " << route.prefix << " " << hop.address << " " << hop.interface << "\n";
  files["staticd"] += statics.str();
  // Routes as plain multipath routes, not kernel nexthop objects: with nexthop objects, FRR 8.4
  // leaves an ECMP route on the surviving next hop after a link flaps (its group is not
  // updated when the link's session comes back), so a fabric never heals fully.
  files["zebra"] += "no zebra nexthop kernel enable\n";

  if (lab.routing == Routing::kBgp) {
    std::ostringstream bgp;
    bgp << "router bgp " << node.asn << "\n"
        << " bgp router-id " << node.router_id << "\n"
        << " no bgp default ipv4-unicast\n"
        << " no bgp ebgp-requires-policy\n"
        << " no bgp network import-check\n"
        << " bgp bestpath as-path multipath-relax\n"
        << " neighbor fabric peer-group\n"
        << " neighbor fabric remote-as external\n"
        << " neighbor fabric bfd\n"
        << " neighbor fabric bfd profile fabric\n";
    for (const ResolvedInterface& itf : node.interfaces)
      if (lab.IsFabric(itf)) bgp << " neighbor " << itf.name << " interface peer-group fabric\n";
    bgp << " address-family ipv6 unicast\n"
        << "  neighbor fabric activate\n"
        << "  redistribute connected\n"
        << "  redistribute static\n"
        << "  network fcbb:0:" << UsidHex(node.usid) << "::/48\n"
        << "  maximum-paths 64\n"
        << " exit-address-family\n";
    files["bgpd"] += bgp.str();
    const uint64_t bfd_ms = lab.bfd_interval_ns / 1000000;
    files["bfdd"] += "bfd\n profile fabric\n  transmit-interval " + std::to_string(bfd_ms) +
                     "\n  receive-interval " + std::to_string(bfd_ms) + "\n  detect-multiplier 3\n exit\nexit\n";
  }
  return files;
}

}  // namespace

std::map<std::string, std::string> FrrConfigs(const ResolvedLab& lab, const ResolvedNode& node,
                                              const std::string& log_dir) {
  std::map<std::string, std::string> files = Bodies(lab, node);
  for (auto& [daemon, text] : files) text = Header(node, log_dir, daemon) + text;
  return files;
}

std::string GeneratedFrrConfig(const ResolvedLab& lab, const ResolvedNode& node) {
  const std::map<std::string, std::string> bodies = Bodies(lab, node);
  std::string text = "frr defaults datacenter\nhostname " + node.name + "\n!\n";
  for (const char* daemon : kFrrDaemons)
    if (!bodies.at(daemon).empty()) text += bodies.at(daemon) + "!\n";
  return text;
}

std::map<std::string, std::string> StartupFrrConfigs(const ResolvedNode& node, const std::string& log_dir,
                                                     const std::vector<std::string>& daemons) {
  std::map<std::string, std::string> files;
  for (const std::string& daemon : daemons) files[daemon] = Header(node, log_dir, daemon);
  return files;
}

}  // namespace mrclab::emulator::netns
