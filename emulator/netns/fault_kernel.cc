#include "emulator/netns/fault_kernel.h"

#include <map>
#include <stdexcept>
#include <vector>

#include "emulator/netns/lab_state.h"
#include "emulator/netns/namespaces.h"
#include "emulator/netns/netlink.h"
#include "emulator/netns/processes.h"
#include "emulator/netns/vm_qmp.h"

namespace mrclab::emulator::netns {
namespace {

std::string Trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// Runs nft inside a namespace (`ip netns exec`); returns its exit status, output in *output.
int Nft(const std::string& netns, const std::string& script, std::string* output) {
  return RunAndWait({"ip", "netns", "exec", netns, "nft", script}, output);
}

}  // namespace

namespace {

// A host's port index (its NIC in a VM) of interface `itf`.
int PortOf(const ResolvedNode& host, const std::string& itf) {
  for (size_t i = 0; i < host.ports.size(); ++i)
    if (host.ports[i].interface == itf) return static_cast<int>(i);
  throw std::runtime_error("no port " + itf);
}

}  // namespace

void SetLinksUp(const ResolvedLab& lab, const std::set<int>& links, bool up) {
  std::map<std::string, std::set<std::string>> ends;  // node -> interfaces
  for (int index : links) {
    const ResolvedLink& link = lab.links.at(index);
    ends[link.a.node].insert(link.a.interface);
    ends[link.b.node].insert(link.b.interface);
  }
  for (const auto& [name, interfaces] : ends) {
    const ResolvedNode* node = lab.FindNode(name);
    try {
      if (node->vm) {  // its end is the guest's NIC: its carrier, through qemu (vm_qmp.h)
        for (const std::string& itf : interfaces) QmpSetLink(LabPaths(lab.name).NodeDir(name), PortOf(*node, itf), up);
        continue;
      }
      Fd ns = OpenNetns(node->netns);
      RtnlSocket rtnl(ns.get());
      for (const std::string& itf : interfaces) rtnl.QueueLinkUp(itf, up);
      rtnl.Flush();
      if (!up || node->kind != NodeKind::kHost) continue;
      const std::map<std::string, int> index = rtnl.LinkIndexes();
      int queued = 0;
      for (const Route& route : node->routes) {
        std::vector<std::pair<std::string, int>> hops;
        bool affected = false;
        for (const NextHop& hop : route.next_hops) {
          affected = affected || interfaces.count(hop.interface);
          auto it = index.find(hop.interface);
          if (it == index.end()) throw std::runtime_error("interface " + hop.interface + " is gone");
          hops.emplace_back(hop.address, it->second);
        }
        if (!affected) continue;
        rtnl.QueueRoute(route.prefix, hops);
        ++queued;
      }
      if (queued) rtnl.Flush();
    } catch (const std::exception& e) {
      throw std::runtime_error(name + ": " + e.what());
    }
  }
}

std::set<std::string> AdminDownInterfaces(const std::string& netns, const std::set<std::string>& interfaces) {
  Fd ns = OpenNetns(netns);
  const std::map<std::string, LinkCounters> links = RtnlSocket(ns.get()).LinkStats();
  std::set<std::string> down;
  for (const std::string& itf : interfaces) {
    auto it = links.find(itf);
    if (it == links.end() || !it->second.admin_up) down.insert(itf);
  }
  return down;
}

void AddDrop(const std::string& netns, const std::string& table, const std::string& ifname, DropHook hook,
             int drop_per_10000) {
  const std::string hook_name = hook == DropHook::kIngress ? "ingress" : "egress";
  const std::string chain = "netdev " + table + " " + hook_name;
  std::string script = "add table netdev " + table + "; add chain " + chain + " { type filter hook " + hook_name +
                       " device \"" + ifname + "\" priority 0; }; " + "add rule " + chain + " ";
  if (drop_per_10000 < 10000) script += "numgen random mod 10000 < " + std::to_string(drop_per_10000) + " ";
  script += "counter drop";
  std::string output;
  if (Nft(netns, script, &output) != 0)
    throw std::runtime_error(netns + ":" + ifname + ": nft: " + Trim(output));
}

void DeleteNftTable(const std::string& netns, const std::string& table) {
  std::string output;
  if (Nft(netns, "delete table netdev " + table, &output) == 0) return;
  if (output.find("No such file or directory") != std::string::npos) return;
  throw std::runtime_error(netns + ": nft delete table netdev " + table + ": " + Trim(output));
}

}  // namespace mrclab::emulator::netns
