#include "emulator/netns/vm_hosts.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "emulator/errors.h"
#include "emulator/netns/vm_guest_agent.h"
#include "emulator/netns/vm_initramfs.h"

namespace mrclab::emulator::netns {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::vector<const ResolvedNode*> VmHosts(const ResolvedLab& lab) {
  std::vector<const ResolvedNode*> out;
  for (const ResolvedNode* h : lab.Hosts())
    if (h->vm) out.push_back(h);
  return out;
}

// Runs fn for every VM host at once; the first error is rethrown once all are done.
void ForEachVm(const std::vector<const ResolvedNode*>& vms, const std::function<void(const ResolvedNode&)>& fn) {
  std::vector<std::exception_ptr> errors(vms.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < vms.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        fn(*vms[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

GuestAgent AgentOf(const LabPaths& paths, const ResolvedNode& host) {
  return GuestAgent(paths.NodeDir(host.name));
}

// A word for sh: in single quotes, each ' as '\'' (a lab's sysctl values are the user's text).
std::string Quote(const std::string& s) {
  std::string quoted = "'";
  for (char c : s) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

bool HasVmHosts(const ResolvedLab& lab) { return !VmHosts(lab).empty(); }

GuestImage PrepareVmHosts(const ResolvedLab& lab, const std::function<void(const std::string&)>& stage) {
  if (access("/usr/bin/qemu-system-x86_64", X_OK) != 0 || access("/usr/share/qemu/qboot.rom", R_OK) != 0)
    throw InputError(lab.source + ": VM hosts need qemu (Debian packages qemu-system-x86 and qemu-system-data; run .ci/setup)");
  if (access("/dev/net/tun", R_OK | W_OK) != 0) throw InputError("VM hosts need /dev/net/tun (the tun module)");
  GuestImage image = BuildGuestImage({}, stage);
  VerifyGuestImage(image);
  return image;
}

std::string VmMac(const ResolvedNode& host, size_t port) {
  char mac[18];
  std::snprintf(mac, sizeof mac, "52:54:00:%02x:%02x:%02x", (host.index >> 8) & 0xff, host.index & 0xff,
                static_cast<unsigned>(port & 0xff));
  return mac;
}

VmTaps OpenVmTaps(const ResolvedLab& lab, const std::map<std::string, Fd>& ns_fd) {
  VmTaps taps;
  for (const ResolvedNode* host : VmHosts(lab)) {
    for (size_t p = 0; p < host->ports.size(); ++p) {
      const ResolvedInterface* itf = nullptr;
      for (const ResolvedInterface& i : host->interfaces)
        if (i.name == host->ports[p].interface) itf = &i;
      if (!itf) throw std::runtime_error(host->name + ": no interface " + host->ports[p].interface);
      Fd tap = OpenTap(ns_fd.at(itf->peer_node).get(), itf->peer_interface, lab.mtu);
      taps.nics[host->name].push_back({tap.get(), VmMac(*host, p)});
      taps.fds.push_back(std::move(tap));
    }
  }
  return taps;
}

void StartVmHosts(const ResolvedLab& lab, const LabPaths& paths, const GuestImage& image, const VmTaps& taps,
                  const std::map<std::string, Fd>& ns_fd, const std::map<std::string, Fd>& uts_fd, Journal& journal) {
  const std::string initrd = paths.root + "/vm-initrd.cpio";
  WriteInitramfs(image, initrd);
  for (const ResolvedNode* host : VmHosts(lab)) {
    const std::string dir = paths.NodeDir(host->name);
    fs::create_directories(dir);
    VmLaunch vm{host->name, host->vm->memory_mib, host->vm->cpus, dir, initrd, taps.nics.at(host->name)};
    const pid_t pid = StartVm(image, vm, ns_fd.at(host->name).get(), uts_fd.at(host->name).get());
    journal.RecordProcess(pid, host->netns, kQemuComm);
    std::ofstream(dir + "/qemu.pid") << pid << "\n";  // for inspect, as a daemon's pid file
  }
}

std::string VmHostScript(const ResolvedLab& lab, const ResolvedNode& host) {
  std::ostringstream s;
  s << "set -e\n";
  // NICs to the plan's names, by MAC (through temporary names: eth0 may be wanted as eth1).
  for (size_t p = 0; p < host.ports.size(); ++p)
    s << "for f in /sys/class/net/*/address; do [ \"$(cat $f)\" = " << VmMac(host, p)
      << " ] && ip link set dev \"$(basename $(dirname $f))\" name mrclabnic" << p << "; done\n";
  for (size_t p = 0; p < host.ports.size(); ++p)
    s << "ip link set dev mrclabnic" << p << " name " << host.ports[p].interface << "\n";
  for (const char* key : {"all", "default"})
    s << "sysctl -qw net.ipv6.conf." << key << ".accept_dad=0 net.ipv6.conf." << key
      << ".keep_addr_on_down=1 net.ipv6.conf." << key << ".accept_ra=0\n";
  s << "sysctl -qw net.ipv6.fib_multipath_hash_policy=1\n";
  for (const ResolvedNode::Sysctl& sc : host.sysctls) s << "sysctl -qw " << Quote(sc.key + "=" + sc.value) << "\n";
  s << "ip link set lo up\n";
  for (const ResolvedInterface& itf : host.interfaces) {
    s << "sysctl -qw net.ipv6.conf." << itf.name << ".accept_dad=0 net.ipv6.conf." << itf.name << ".accept_ra=0\n";
    s << "ip link set dev " << itf.name << " mtu " << lab.mtu << " up\n";
    s << "ip -6 addr add " << itf.address << " dev " << itf.name << " nodad\n";
  }
  for (const auto& port : host.ports)
    s << "ip -6 addr add fcbb:0:" << UsidHex(port.usid) << "::/128 dev " << port.interface << " nodad\n";
  for (const Route& route : host.routes) {
    s << "ip -6 route add " << route.prefix;
    if (route.next_hops.size() == 1) {
      s << " via " << route.next_hops[0].address << " dev " << route.next_hops[0].interface;
    } else {
      for (const NextHop& hop : route.next_hops) s << " nexthop via " << hop.address << " dev " << hop.interface;
    }
    s << "\n";
  }
  s << "modprobe rdma_rxe\n";
  for (const auto& port : host.ports)
    s << "rdma link add rxe_" << port.interface << " type rxe netdev " << port.interface << "\n";
  return s.str();
}

void ConfigureVmHosts(const ResolvedLab& lab, const LabPaths& paths, Clock::time_point deadline) {
  ForEachVm(VmHosts(lab), [&](const ResolvedNode& host) {
    const GuestAgent agent = AgentOf(paths, host);
    try {
      agent.WaitReady(deadline);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(host.name + ": " + e.what() + "; its console: " + paths.NodeDir(host.name) +
                               "/console.log");
    }
    const GuestResult r = agent.Exec({"sh", "-c", VmHostScript(lab, host)}, std::chrono::seconds(120));
    if (r.status != 0)
      throw std::runtime_error(host.name + ": configuring the VM failed (status " + std::to_string(r.status) +
                               "): " + r.err.substr(0, r.err.find('\n')));
  });
}

namespace {

// A check's script for one VM host: one line per check, "ok" or what is missing; `checks`
// counts them.
std::string VmCheckScript(const ResolvedLab& lab, const ResolvedNode& host, VmCheck what, int& checks) {
  std::ostringstream script;
  if (what == VmCheck::kReachability) {
    // Every other host, on every plane they share: one ping each (the reply proves both ways).
    for (const ResolvedNode* other : lab.Hosts()) {
      if (other == &host) continue;
      for (const auto& [mine, theirs] : SharedPorts(host, *other)) {
        ++checks;
        script << "ping -c1 -W1 -q " << theirs->address << " >/dev/null 2>&1 && echo ok || echo 'no " << host.name
               << "->" << other->name << " plane " << theirs->plane << "'\n";
      }
    }
  } else {
    // The RoCEv2 GID of each port's address.
    for (const auto& port : host.ports) {
      ++checks;
      script << "cat /sys/class/infiniband/rxe_" << port.interface
             << "/ports/1/gid_attrs/types/* 2>/dev/null | grep -q 'RoCE v2' && echo ok || echo 'no " << host.name
             << ":" << port.interface << " RoCEv2 GID'\n";
    }
  }
  return script.str();
}

}  // namespace

CheckStatus CheckVmHosts(const ResolvedLab& lab, const LabPaths& paths, VmCheck what) {
  const std::vector<const ResolvedNode*> vms = VmHosts(lab);
  std::map<const ResolvedNode*, CheckStatus> per_vm;  // every entry made before the threads start
  for (const ResolvedNode* vm : vms) per_vm[vm];
  ForEachVm(vms, [&](const ResolvedNode& host) {
    CheckStatus& st = per_vm.at(&host);
    const std::string script = VmCheckScript(lab, host, what, st.total);
    try {
      const GuestResult r = AgentOf(paths, host).Exec({"sh", "-c", script}, std::chrono::seconds(60));
      std::istringstream lines(r.out);
      for (std::string line; std::getline(lines, line);) {
        if (line == "ok")
          ++st.done;
        else if (st.missing.size() < 4)
          st.missing.push_back(line.substr(3));
      }
    } catch (const std::runtime_error& e) {
      st.missing.push_back(host.name + ": " + e.what());
    }
  });
  CheckStatus status;
  for (const auto& [vm, st] : per_vm) status += st;
  return status;
}

int VerifyVmRc(const ResolvedLab& lab, const LabPaths& paths, Clock::time_point deadline) {
  std::map<int, std::vector<std::pair<const ResolvedNode*, std::string>>> on_plane;  // plane -> (VM, address)
  for (const ResolvedNode* host : VmHosts(lab))
    for (const auto& port : host->ports) on_plane[port.plane].push_back({host, port.address});
  int proven = 0;
  for (const auto& [plane, vms] : on_plane) {
    if (vms.size() < 2) continue;
    const ResolvedNode* client = vms[0].first;
    const auto& [server, address] = vms[1];
    const std::string what = "RC (rping) " + client->name + " -> " + server->name + " on plane " +
                             std::to_string(plane) + " [" + address + "]";
    const auto left = [&] {
      return std::max(std::chrono::milliseconds(1000),
                      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    };
    GuestResult served;
    std::exception_ptr server_error;
    std::thread serve([&] {
      try {
        served = AgentOf(paths, *server).Exec({"rping", "-s", "-a", address, "-C", "3"}, left());
      } catch (...) {
        server_error = std::current_exception();
      }
    });
    GuestResult asked;
    do {  // until the server listens
      asked = AgentOf(paths, *client).Exec({"rping", "-c", "-a", address, "-C", "3"}, std::chrono::seconds(30));
    } while (asked.status != 0 && Clock::now() < deadline);
    if (asked.status != 0) AgentOf(paths, *server).Exec({"pkill", "-x", "rping"}, std::chrono::seconds(10));
    serve.join();
    if (server_error) std::rethrow_exception(server_error);
    if (asked.status != 0 || served.status != 0)
      throw std::runtime_error(what + " failed: " + (asked.status ? asked.err : served.err).substr(0, 200));
    ++proven;
  }
  return proven;
}

KernelRcRun RunKernelRc(const ResolvedLab& lab, const LabPaths& paths, const std::string& src, const std::string& dst,
                        uint64_t message_bytes, double seconds) {
  const ResolvedNode* a = lab.FindNode(src);
  const ResolvedNode* b = lab.FindNode(dst);
  for (const auto& [name, node] : {std::pair{src, a}, std::pair{dst, b}})
    if (!node || !node->vm) throw InputError(name + " is not a VM host of lab '" + lab.name + "'");
  const std::vector<SharedPort> shared = SharedPorts(*a, *b);
  if (shared.empty()) throw InputError(src + " and " + dst + " share no plane");
  KernelRcRun run;
  run.plane = shared.front().second->plane;
  run.address = shared.front().second->address;
  const auto budget = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)) + std::chrono::seconds(60);
  const std::vector<std::string> common = {"--size", std::to_string(message_bytes)};
  GuestResult served;
  std::exception_ptr server_error;
  std::thread serve([&] {
    try {
      std::vector<std::string> argv = {"/opt/mrclab-rdma", "server", run.address};
      argv.insert(argv.end(), common.begin(), common.end());
      served = AgentOf(paths, *b).Exec(argv, budget);
    } catch (...) {
      server_error = std::current_exception();
    }
  });
  GuestResult asked;
  try {
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (AgentOf(paths, *b).Exec({"rdma", "resource", "show", "cm_id"}, std::chrono::seconds(10)).out.find("LISTEN") ==
           std::string::npos) {
      if (server_error || Clock::now() > deadline) throw std::runtime_error(dst + ": mrclab-rdma server did not listen");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::vector<std::string> argv = {"/opt/mrclab-rdma", "client", run.address, "--seconds", std::to_string(seconds)};
    argv.insert(argv.end(), common.begin(), common.end());
    asked = AgentOf(paths, *a).Exec(argv, budget);
  } catch (...) {
    AgentOf(paths, *b).Exec({"pkill", "-x", "mrclab-rdma"}, std::chrono::seconds(10));
    serve.join();
    throw;
  }
  serve.join();
  if (server_error) std::rethrow_exception(server_error);
  run.client = nlohmann::json::parse(asked.out, nullptr, false);
  run.server = nlohmann::json::parse(served.out, nullptr, false);
  if (run.client.is_discarded() || !run.client.is_object())
    throw std::runtime_error(src + ": mrclab-rdma client failed (status " + std::to_string(asked.status) + "): " +
                             asked.out.substr(0, 200) + asked.err.substr(0, 200));
  if (run.server.is_discarded()) run.server = nullptr;
  return run;
}

}  // namespace mrclab::emulator::netns
