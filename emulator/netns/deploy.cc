#include "emulator/netns/deploy.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include "emulator/host_machine.h"
#include "emulator/netns/container_switch.h"
#include "emulator/netns/frr_config.h"
#include "emulator/netns/frr_daemons.h"
#include "emulator/netns/frr_template.h"
#include "emulator/netns/host_sysctls.h"
#include "emulator/netns/interrupt.h"
#include "emulator/netns/kernel_srv6.h"
#include "emulator/netns/lab_state.h"
#include "emulator/netns/link_shaping.h"
#include "emulator/netns/namespaces.h"
#include "emulator/netns/netlink.h"
#include "emulator/netns/processes.h"
#include "emulator/netns/progress.h"
#include "emulator/netns/verify.h"
#include "emulator/netns/vm_hosts.h"
#include "emulator/netns/vty_client.h"

namespace mrclab::emulator::netns {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kMiB = 1024 * 1024;
constexpr const char* kSrv6Device = "sr0";
// Switches configured through vtysh at a time: vtysh mostly waits for each line's reply.
constexpr int kVtyshParallel = 4;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void SetSysctls(const ResolvedLab& lab, const ResolvedNode& node, int ns_fd) {
  const bool is_switch = node.kind == NodeKind::kSwitch;
  const std::vector<std::pair<std::string, std::string>> settings = {
      {"net/ipv6/conf/all/accept_dad", "0"},
      {"net/ipv6/conf/default/accept_dad", "0"},
      {"net/ipv6/conf/all/keep_addr_on_down", "1"},   // faults take links down and up again
      {"net/ipv6/conf/default/keep_addr_on_down", "1"},
      {"net/ipv6/conf/all/seg6_enabled", "1"},
      {"net/ipv6/conf/default/seg6_enabled", "1"},
      {"net/ipv6/conf/default/accept_ra", "0"},
      {"net/ipv6/conf/all/forwarding", is_switch ? "1" : "0"},
      {"net/ipv6/fib_multipath_hash_policy", "1"},    // ECMP on the L4 5-tuple
      {"net/ipv6/route/max_size", "1048576"},
  };
  for (const auto& [key, value] : settings) WriteSysctl(ns_fd, key, value);
  // The lab file's own, after mrclab's (they may override them); a value the kernel refuses
  // fails the deploy, which rolls back.
  for (const ResolvedNode::Sysctl& s : node.sysctls) {
    std::string path = s.key;
    std::replace(path.begin(), path.end(), '.', '/');
    try {
      WriteSysctl(ns_fd, path, s.value);
    } catch (const std::exception& e) {
      throw LabError(lab.source, s.field, "'" + s.value + "' cannot be set on " + node.name + ": " + e.what());
    }
  }
}

// Links, addresses, host routes and SRv6 behaviours of one node, in one netlink batch.
void ConfigureNode(const ResolvedNode& node, uint32_t mtu, int ns_fd) {
  RtnlSocket rtnl(ns_fd);
  // Input packets that match a seg6local route whose device is lo count as "no route"; the
  // behaviours hang off an ifb device that, unlike a fabric port, never goes down in a fault.
  if (node.kind == NodeKind::kSwitch) {
    rtnl.QueueIfb(kSrv6Device, mtu);
    rtnl.QueueLinkUp(kSrv6Device);
  }
  rtnl.QueueLinkUp("lo");
  for (const ResolvedInterface& itf : node.interfaces) rtnl.QueueLinkUp(itf.name);
  rtnl.Flush();
  const std::map<std::string, int> index = rtnl.LinkIndexes();
  auto ifindex = [&](const std::string& name) {
    auto it = index.find(name);
    if (it == index.end()) throw DeployError(node.name + ": interface " + name + " was not created");
    return it->second;
  };
  for (const ResolvedInterface& itf : node.interfaces) {
    auto slash = itf.address.find('/');
    rtnl.QueueAddress(ifindex(itf.name), itf.address.substr(0, slash),
                      std::stoi(itf.address.substr(slash + 1)));
  }
  if (node.kind == NodeKind::kHost) {
    for (const auto& port : node.ports)
      rtnl.QueueAddress(ifindex(port.interface), "fcbb:0:" + UsidHex(port.usid) + "::", 128);
    for (const Route& route : node.routes) {
      std::vector<std::pair<std::string, int>> hops;
      for (const NextHop& hop : route.next_hops) hops.emplace_back(hop.address, ifindex(hop.interface));
      rtnl.QueueRoute(route.prefix, hops);
    }
  } else {
    rtnl.QueueUsidEnd("fcbb:0:" + UsidHex(node.usid) + "::/48", ifindex(kSrv6Device), 32, 16);
  }
  rtnl.Flush();
}

// link_rate: a token bucket on every interface of every link, both ends, so each direction of
// a link runs at the configured rate (the rule: link_shaping.h). One `tc -batch` per node.
void ShapeLinks(const ResolvedLab& lab, const ResolvedNode& node, const std::string& dir) {
  if (!lab.link_rate_bps || node.interfaces.empty()) return;
  const uint64_t rate = *lab.link_rate_bps;
  std::string batch;
  for (const ResolvedInterface& itf : node.interfaces) {
    for (const std::string& arg : TbfArgs(itf.name, rate)) batch += arg + " ";
    batch.back() = '\n';
  }
  const std::string path = dir + "/" + node.name + ".tc";
  std::ofstream(path) << batch;
  std::string output;
  if (RunAndWait({"tc", "-n", node.netns, "-batch", path}, &output) != 0)
    throw DeployError(node.name + ": shaping links to " + std::to_string(rate) + " bit/s failed: " +
                      output);
  std::filesystem::remove(path);
}

void WriteFile(const std::string& path, const std::string& text, uid_t uid, gid_t gid) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) throw DeployError("cannot write " + path);
  chown(path.c_str(), uid, gid);
}

// Polls `check` until it reports ok or the deadline passes; reports progress on the way.
CheckStatus PollUntil(Progress& progress, const std::string& what, Clock::time_point deadline,
                      const std::function<CheckStatus()>& check) {
  CheckStatus status;
  auto pause = std::chrono::milliseconds(20);
  for (;;) {
    ThrowIfInterrupted();
    for (auto [pid, st] : ReapChildren())
      throw DeployError("a routing daemon (pid " + std::to_string(pid) +
                        ") exited during deploy; see its log under the lab's nodes/ directory");
    status = check();
    progress.Update(status.Summary(what));
    if (status.ok()) return status;
    if (Clock::now() >= deadline)
      throw DeployError("not ready before the deadline: " + status.Summary(what));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
  }
}

// What FRR each switch runs, as each daemon reports it ("show version": "FRRouting 10.3 (...)"),
// and where from: {NODE: {runs: namespace|container, image, image_id, daemons: {zebra: "10.3"}}}.
nlohmann::json SwitchSoftware(const ResolvedLab& lab, const LabPaths& paths, const SwitchImages& images,
                              const std::map<std::string, std::vector<std::string>>& daemons_of) {
  nlohmann::json out = nlohmann::json::object();
  for (const ResolvedNode* sw : lab.Switches()) {
    nlohmann::json versions = nlohmann::json::object();
    for (const std::string& daemon : daemons_of.at(sw->name)) {
      std::string version = "?";
      try {
        std::istringstream words(VtyCommand(paths.NodeDir(sw->name) + "/" + daemon + ".vty", "show version").output);
        std::string product;
        words >> product >> version;
      } catch (const VtyError&) {
      }
      versions[daemon] = version;
    }
    nlohmann::json entry = {{"runs", sw->image ? "container" : "namespace"}, {"daemons", versions}};
    if (sw->image) {
      const std::string& reference = images.reference.at(sw->name);
      entry["image"] = reference;
      entry["image_id"] = images.image.at(reference).id;
    }
    out[sw->name] = entry;
  }
  return out;
}

}  // namespace

nlohmann::json DeployReport::ToJson() const {
  return {{"seconds",
           {{"namespaces", namespaces_s},
            {"links", links_s},
            {"daemons", daemons_s},
            {"convergence", convergence_s},
            {"verification", verification_s},
            {"total", total_s}}},
          {"verified",
           {{"bgp_sessions_established", bgp_sessions},
            {"host_pairs_reachable", host_pairs},
            {"spine_paths_proven", spine_paths}}}};
}

MemoryEstimate EstimateMemory(const ResolvedLab& lab) {
  MemoryEstimate e;
  // Measured on Debian FRR 8.4 (README): 13.3 MiB RSS per daemon, plus namespace overhead.
  const uint64_t per_daemon = 14 * kMiB;
  e.needed = lab.Switches().size() * DaemonsFor(lab).size() * per_daemon +
             lab.nodes.size() * 1 * kMiB + lab.links.size() * kMiB / 4;
  // Each next hop of a static route: staticd's and zebra's copies and the kernel's (measured on
  // FRR 8.4: a leaf's 2,056 took 11.4 MiB in staticd and 3.7 MiB in zebra). They grow as
  // switches x links: labs/clos8-1k.yaml has 4.4 M, 34 GiB.
  for (const ResolvedNode* sw : lab.Switches())
    for (const Route& route : sw->routes) e.static_next_hops += route.next_hops.size();
  e.needed += e.static_next_hops * 8 * 1024;
  // A VM host: its memory (TCG touches all of it) and qemu's own (vm_qemu.h).
  const uint64_t vm_overhead_mib = VmOverheadMib(VmAccel());
  for (const ResolvedNode* host : lab.Hosts())
    if (host->vm) e.needed += (host->vm->memory_mib + vm_overhead_mib) * kMiB;
  e.available = MemAvailableBytes();
  return e;
}

// Everything refused here is refused before anything is made: input errors (exit 2).
void Preflight(const ResolvedLab& lab) {
  if (geteuid() != 0)
    throw InputError("mrclab deploy needs root (it creates network namespaces); run it with sudo");
  // A switch from a router image has its image's FRR; the others run this machine's.
  const std::vector<const ResolvedNode*> switches = lab.Switches();
  if (std::any_of(switches.begin(), switches.end(), [](const ResolvedNode* sw) { return !sw->image; }))
    for (const std::string& daemon : DaemonsFor(lab))
      if (access((FrrDir() + "/" + daemon).c_str(), X_OK) != 0)
        throw InputError("FRRouting is not installed (no " + FrrDir() + "/" + daemon +
                          "); install the Debian package frr, or run .ci/setup");
  if (!getpwnam("frr")) throw InputError("FRRouting's user 'frr' does not exist; reinstall frr");
  LabPaths paths(lab.name);
  if (fs::exists(paths.root))
    throw InputError("lab '" + lab.name + "' is already deployed (" + paths.root +
                      "); run: mrclab destroy " + lab.name);
  for (const ResolvedNode& node : lab.nodes)
    if (NetnsExists(node.netns))
      throw InputError("network namespace '" + node.netns +
                        "' already exists and is not part of a deployed lab; remove it or rename the lab");
  RefuseIfNotEmulatable(lab);
}

void RefuseIfKernelCannotForwardSrv6() {
  if (const std::optional<std::string> missing = KernelSrv6Missing())
    throw InputError("this kernel cannot forward SRv6 uSIDs, so no lab can be emulated on it (" + *missing +
                      "; it needs CONFIG_IPV6_SEG6_LWTUNNEL); simulate the lab instead: "
                      "mrclab drill SCENARIO --backend ns3");
}

void RefuseIfNotEmulatable(const ResolvedLab& lab) {
  if (lab.link_delay_ns)
    throw InputError(lab.source + ": link_delay: an emulated lab's links have the kernel's veth latency; the delay "
                      "is simulation only (mrclab drill SCENARIO --backend ns3), or remove link_delay");
  MemoryEstimate mem = EstimateMemory(lab);
  const uint64_t reserve = 1024 * kMiB;
  if (mem.available < mem.needed + reserve)
    throw InputError(lab.source + ": lab '" + lab.name + "' is too large for this machine: needs ~" +
                      std::to_string(mem.needed / kMiB) + " MiB, " +
                      std::to_string(mem.available / kMiB) + " MiB available (" +
                      std::to_string(lab.Switches().size()) + " switches" +
                      (mem.static_next_hops ? ", " + std::to_string(mem.static_next_hops) + " static route next hops" : "") +
                      "); simulate it instead: "
                      "mrclab drill SCENARIO --backend ns3");
}

ResolvedLab ResolveForEmulation(const LabSpec& spec) {
  RefuseIfNotEmulatable(Resolve(spec, {.routes = false}));
  return Resolve(spec);
}

DeployReport Deploy(const ResolvedLab& lab, const DeployOptions& options) {
  Preflight(lab);
  // Router images ready, and the lab file's own FRR configurations rendered and checked by the
  // FRR that will run them, before anything is made.
  const SwitchImages images = PrepareRouterImages(lab);
  std::map<std::string, std::string> own_configs = UserFrrConfigs(lab, images.reference);
  // What each switch runs. These get their configuration through vtysh (the generated one
  // unless the lab file gives its own): a switch from an image, as its daemons may need mgmtd;
  // every switch of a static lab, as FRR 8.4's staticd reads its own file one transaction per
  // line (a leaf's 2,056 routes: 40 s of CPU, growing with their square) where vtysh -f enters
  // them in one (1 s).
  std::map<std::string, std::vector<std::string>> daemons_of;
  for (const ResolvedNode* sw : lab.Switches()) {
    daemons_of[sw->name] = sw->image ? ImageDaemons(lab, images.frr.at(images.reference.at(sw->name))) : DaemonsFor(lab);
    if ((sw->image || lab.routing == Routing::kStatic) && !own_configs.count(sw->name))
      own_configs[sw->name] = GeneratedFrrConfig(lab, *sw);
  }
  RefuseIfKernelCannotForwardSrv6();
  const auto start = Clock::now();
  Progress progress(options.progress);
  // VM hosts: the guest image built on first use and checked, before anything is made.
  std::optional<GuestImage> guest;
  if (HasVmHosts(lab)) {
    progress.Stage("guest image");
    guest = PrepareVmHosts(lab, [&](const std::string& stage) { progress.Update(stage); });
    progress.Done(guest->suite + ", kernel " + guest->kernel + ", sha256 checked");
  }
  DeployReport report;
  LabPaths paths(lab.name);
  const passwd* frr = getpwnam("frr");
  const uid_t frr_uid = frr->pw_uid;
  const gid_t frr_gid = frr->pw_gid;

  fs::create_directories(StateRoot());
  if (mkdir(paths.root.c_str(), 0755) != 0)
    throw DeployError("cannot create " + paths.root + ": " + std::strerror(errno));
  try {
    fs::create_directories(paths.root + "/uts");
    fs::create_directories(paths.root + "/nodes");
    nlohmann::json doc = {{"state", "deploying"}, {"pid", getpid()}, {"source", lab.source},
                          {"files_dir", LabFilesDir(lab.source)},
                          {"plan", lab.ToJson()},
                          {"created", std::time(nullptr)}};
    WriteLabJson(lab.name, doc);
    SaveLabText(lab.name, options.lab_text);
    Journal journal(paths.journal);
    RaiseHostLimitsForLab(lab);

    // 1. Namespaces and their sysctls.
    progress.Stage("namespaces");
    auto t = Clock::now();
    std::map<std::string, Fd> ns_fd, uts_fd;
    for (const ResolvedNode& node : lab.nodes) {
      ThrowIfInterrupted();
      journal.RecordNetns(node.netns);
      CreateNodeNamespaces(node.netns, paths.UtsPath(node.name), node.name);
      ns_fd[node.name] = OpenNetns(node.netns);
      uts_fd[node.name] = OpenPath(paths.UtsPath(node.name));
      SetSysctls(lab, node, ns_fd[node.name].get());
      progress.Update(std::to_string(ns_fd.size()) + "/" + std::to_string(lab.nodes.size()));
    }
    report.namespaces_s = Since(t);
    progress.Done(std::to_string(lab.nodes.size()) + " nodes");

    // 2. Links (veth pairs straight into their namespaces), addresses, routes, uSIDs.
    progress.Stage("links");
    t = Clock::now();
    {
      RtnlSocket root;
      for (const ResolvedLink& link : lab.links)
        if (!lab.VmHostOn(link))  // a VM host's link is a tap (vm_hosts.h)
          root.QueueVeth(link.a.interface, ns_fd[link.a.node].get(), link.b.interface, ns_fd[link.b.node].get(),
                         lab.mtu,
                         "add veth " + link.a.node + ":" + link.a.interface + " <-> " + link.b.node + ":" +
                             link.b.interface);
      root.Flush();
    }
    // A VM host's links end on taps in its leaves (qemu gets them; they go when qemu does).
    VmTaps taps = OpenVmTaps(lab, ns_fd);
    for (const ResolvedNode& node : lab.nodes) {
      ThrowIfInterrupted();
      if (node.vm) continue;  // configured inside the VM, once it has booted
      ConfigureNode(node, lab.mtu, ns_fd[node.name].get());
      ShapeLinks(lab, node, paths.root);
    }
    if (guest) {
      StartVmHosts(lab, paths, *guest, taps, ns_fd, uts_fd, journal);
      taps.fds.clear();
    }
    report.links_s = Since(t);
    progress.Done(std::to_string(lab.links.size()) + " links" +
                  (lab.mtu != kDefaultLinkMtu ? ", mtu " + std::to_string(lab.mtu) : "") +
                  (lab.link_rate_bps ? ", shaped to " + std::to_string(*lab.link_rate_bps / 1000000) +
                                           " Mbit/s"
                                     : ""));

    // 3. Routing daemons: zebra everywhere first, the others once zebra's socket is there.
    //    A switch from a router image gets its container first.
    progress.Stage("daemons");
    t = Clock::now();
    // Starts what `which` says on every switch: a namespace switch's daemons one by one, a
    // container switch's with one podman exec, several switches at a time.
    auto start_daemons = [&](const std::function<std::vector<std::string>(const ResolvedNode&)>& which) {
      std::vector<std::vector<std::string>> execs;
      std::vector<std::string> in;
      for (const ResolvedNode* sw : lab.Switches()) {
        ThrowIfInterrupted();  // a big lab's daemons take minutes to start: Ctrl-C rolls back now
        const std::vector<std::string> daemons = which(*sw);
        if (sw->image) {
          execs.push_back(ContainerDaemonsCommand(lab, paths, *sw, daemons));
          in.push_back(sw->name);
          continue;
        }
        for (const std::string& daemon : daemons)
          StartDaemon(lab, paths, *sw, daemon, ns_fd[sw->name].get(), uts_fd[sw->name].get(), journal);
      }
      const std::vector<CommandResult> results = RunAllAndWait(execs, kPodmanParallel);
      for (size_t i = 0; i < results.size(); ++i)
        if (results[i].status != 0)
          throw DeployError(in[i] + ": podman exec: " + results[i].output.substr(0, results[i].output.find('\n')));
    };
    for (const ResolvedNode* sw : lab.Switches()) {
      ThrowIfInterrupted();
      const std::string dir = paths.NodeDir(sw->name);
      fs::create_directories(dir);
      chown(dir.c_str(), frr_uid, frr_gid);
      const std::vector<std::string>& daemons = daemons_of[sw->name];
      if (!sw->image)
        for (const auto& [daemon, text] : own_configs.count(sw->name) ? StartupFrrConfigs(*sw, dir, daemons)
                                                                       : FrrConfigs(lab, *sw, dir))
          WriteFile(dir + "/" + daemon + ".conf", text, frr_uid, frr_gid);
      if (sw->image) {
        // The image's frr user has its own uid: its daemons write their sockets and pid files here.
        fs::permissions(dir, fs::perms::all, fs::perm_options::replace);
        RecordDaemons(paths, *sw, daemons);
      }
    }
    ThrowIfInterrupted();
    StartSwitchContainers(lab, paths, images, journal);
    start_daemons([](const ResolvedNode&) { return std::vector<std::string>{"zebra"}; });
    auto deadline = Clock::now() + options.timeout;
    PollUntil(progress, "zebra", deadline, [&] {
      CheckStatus s;
      for (const ResolvedNode* sw : lab.Switches()) {
        ++s.total;
        if (fs::exists(paths.NodeDir(sw->name) + "/zserv.api"))
          ++s.done;
        else if (s.missing.size() < 4)
          s.missing.push_back(sw->name);
      }
      return s;
    });
    start_daemons([&](const ResolvedNode& sw) {
      std::vector<std::string> others;
      for (const std::string& daemon : daemons_of[sw.name])
        if (daemon != "zebra") others.push_back(daemon);
      return others;
    });
    if (!own_configs.empty()) {
      // Every daemon of those switches answering on its vty socket, then their configuration.
      PollUntil(progress, "daemons of switches configured through vtysh", deadline, [&] {
        CheckStatus s;
        for (const auto& [name, text] : own_configs) {
          ++s.total;
          const std::vector<std::string>& daemons = daemons_of[name];
          const bool up = std::all_of(daemons.begin(), daemons.end(), [&](const std::string& d) {
            return VtyListening(paths.NodeDir(name), d);
          });
          if (up) {
            ++s.done;
          } else if (s.missing.size() < 4) {
            s.missing.push_back(name);
          }
        }
        return s;
      });
      ApplyFrrConfigs(lab, paths, own_configs, daemons_of, kVtyshParallel, [&](size_t done) {
        progress.Update("configured through vtysh " + std::to_string(done) + "/" + std::to_string(own_configs.size()));
      });
      deadline = Clock::now() + options.timeout;  // --timeout counts from daemons that run their configuration
    }
    report.daemons_s = Since(t);
    size_t n_daemons = 0, n_own = 0;
    for (const ResolvedNode* sw : lab.Switches()) {
      n_daemons += daemons_of[sw->name].size();
      n_own += sw->frr_config ? 1 : 0;
    }
    progress.Done(std::to_string(n_daemons) + " FRR daemons on " + std::to_string(lab.Switches().size()) + " switches" +
                  (images.reference.empty() ? "" : ", " + std::to_string(images.reference.size()) + " in containers") +
                  (n_own ? ", " + std::to_string(n_own) + " with the lab's own configuration" : ""));

    // 4. Convergence and verification.
    LabVerifier verifier(lab, paths);
    t = Clock::now();
    if (lab.routing == Routing::kBgp) {
      progress.Stage("bgp");
      report.bgp_sessions = PollUntil(progress, "sessions Established", deadline,
                                      [&] { return verifier.CheckBgp(); }).done;
      progress.Done(std::to_string(report.bgp_sessions) + " sessions Established");
    }
    report.convergence_s = Since(t);
    t = Clock::now();
    if (guest) {
      progress.Stage("vm hosts");
      ConfigureVmHosts(lab, paths, deadline);
      progress.Done("addresses, routes and rxe devices in the guests");
    }
    progress.Stage("reachability");
    report.host_pairs = PollUntil(progress, "host pairs", deadline, [&] {
                          CheckStatus st = verifier.CheckReachability();
                          if (guest) st += CheckVmHosts(lab, paths, VmCheck::kReachability);
                          return st;
                        }).done;
    progress.Done(std::to_string(report.host_pairs) + " host pairs reachable on every plane");
    progress.Stage("srv6");
    report.spine_paths = PollUntil(progress, "spine paths", deadline,
                                   [&] { return verifier.CheckSpinePaths(); }).done;
    progress.Done(std::to_string(report.spine_paths) + " uSID paths proven through their spine");
    if (guest) {
      progress.Stage("rdma");
      const int gids = PollUntil(progress, "RoCEv2 GIDs", deadline,
                                 [&] { return CheckVmHosts(lab, paths, VmCheck::kRdma); }).done;
      const int planes = VerifyVmRc(lab, paths, deadline);
      progress.Done(std::to_string(gids) + " rxe ports with their RoCEv2 GID; RC (rping) between VM hosts on " +
                    std::to_string(planes) + " plane" + (planes == 1 ? "" : "s"));
    }
    report.verification_s = Since(t);
    report.total_s = Since(start);

    doc["state"] = "ready";
    doc["deploy"] = report.ToJson();
    doc["switch_software"] = SwitchSoftware(lab, paths, images, daemons_of);
    WriteLabJson(lab.name, doc);
    return report;
  } catch (const std::exception& e) {
    if (options.keep_failed) {
      progress.Stage("failed");
      progress.Done(std::string(e.what()) + "; lab kept for inspection: mrclab destroy " + lab.name);
      throw;
    }
    progress.Stage("rollback");
    progress.Done(std::string("deploy failed (") + e.what() + "); removing what was made");
    Destroy(lab.name);
    throw;
  }
}

}  // namespace mrclab::emulator::netns
