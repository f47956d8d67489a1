#include "emulator/netns/frr_daemons.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "emulator/netns/frr_template.h"
#include "emulator/netns/interrupt.h"
#include "emulator/netns/namespaces.h"
#include "emulator/netns/podman.h"
#include "emulator/netns/router_solicitation.h"
#include "emulator/netns/vty_client.h"

namespace mrclab::emulator::netns {
namespace {

using Clock = std::chrono::steady_clock;

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

std::vector<std::string> DaemonsFor(const ResolvedLab& lab) {
  // Without BGP there is nothing for bgpd or bfdd to do (FRR 8.4's staticd has no BFD).
  if (lab.routing == Routing::kStatic) return {"zebra", "staticd"};
  return {"zebra", "bfdd", "staticd", "bgpd"};
}

std::vector<std::string> DaemonsOf(const ResolvedLab& lab, const LabPaths& paths, const ResolvedNode& sw) {
  std::ifstream in(paths.NodeDir(sw.name) + "/daemons");
  std::vector<std::string> daemons;
  for (std::string d; in >> d;) daemons.push_back(d);
  return daemons.empty() ? DaemonsFor(lab) : daemons;
}

void RecordDaemons(const LabPaths& paths, const ResolvedNode& sw, const std::vector<std::string>& daemons) {
  std::string text;
  for (const std::string& d : daemons) text += d + "\n";
  WriteFileWhole(paths.NodeDir(sw.name) + "/daemons", text);
}

std::vector<std::string> DaemonArgv(const std::string& daemon, const std::string& dir, const FrrTools& tools) {
  std::vector<std::string> argv = {tools.frr_dir + "/" + daemon,
                                   "-i", dir + "/" + daemon + ".pid",
                                   "-z", dir + "/zserv.api",
                                   "--vty_socket", dir,
                                   "-P", "0"};
  if (tools.in_container) {
    // Options every FRR version takes: FRR 10's mgmtd and staticd have no configuration file of
    // their own (vtysh enters it) and its bfdd no --bfdctl (the container has its own /var/run).
    argv.insert(argv.end(), {"--log", "file:" + dir + "/" + daemon + ".log", "--log-level", "info"});
    return argv;
  }
  argv.insert(argv.end(), {"-f", dir + "/" + daemon + ".conf"});
  if (daemon == "bfdd") argv.insert(argv.end(), {"--bfdctl", dir + "/bfdd.sock"});
  return argv;
}

std::vector<std::string> ContainerDaemonsCommand(const ResolvedLab& lab, const LabPaths& paths, const ResolvedNode& sw,
                                                 const std::vector<std::string>& daemons) {
  const std::string dir = paths.NodeDir(sw.name);
  const FrrTools tools = ToolsOf(lab.name, sw);
  auto quoted = [](const std::string& word) { return "'" + word + "'"; };  // lab paths hold no quote
  // Each in the background of a shell that then exits: podman's conmon reaps them.
  std::string script;
  for (const std::string& daemon : daemons) {
    for (const std::string& word : DaemonArgv(daemon, dir, tools)) script += quoted(word) + " ";
    script += "> " + quoted(dir + "/" + daemon + ".out") + " 2>&1 &\n";
  }
  return Podman({"exec", "--detach", ContainerName(lab.name, sw.name), "/bin/sh", "-c", script});
}

void StartDaemon(const ResolvedLab& lab, const LabPaths& paths, const ResolvedNode& sw, const std::string& daemon,
                 int netns_fd, int uts_fd, Journal& journal) {
  const std::string dir = paths.NodeDir(sw.name);
  if (sw.image) {
    std::string output;
    if (RunAndWait(ContainerDaemonsCommand(lab, paths, sw, {daemon}), &output) != 0)
      throw std::runtime_error("podman exec in " + ContainerName(lab.name, sw.name) + ": " +
                               output.substr(0, output.find('\n')));
    return;
  }
  pid_t pid = StartInNamespaces(DaemonArgv(daemon, dir, ToolsOf(lab.name, sw)), netns_fd, uts_fd,
                                dir + "/" + daemon + ".out");
  journal.RecordProcess(pid, sw.netns, daemon);
}

bool ZebraListening(const std::string& node_dir) { return SocketListening(node_dir + "/zserv.api"); }

bool VtyListening(const std::string& node_dir, const std::string& daemon) {
  return SocketListening(node_dir + "/" + daemon + ".vty");
}

bool SocketListening(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

std::vector<OwnedProcess> RunningDaemon(const LabPaths& paths, const ResolvedNode& sw,
                                        const std::string& daemon) {
  std::vector<pid_t> candidates;
  std::ifstream pid_file(paths.NodeDir(sw.name) + "/" + daemon + ".pid");
  pid_t pid = 0;
  if (pid_file >> pid) candidates.push_back(pid);
  for (const JournalEntry& e : Journal::Read(paths.journal))
    if (e.kind == "process" && e.netns == sw.netns && e.what == daemon) candidates.push_back(e.pid);
  std::vector<OwnedProcess> running;
  for (pid_t candidate : candidates) {
    OwnedProcess p{candidate, daemon, NetnsPath(sw.netns)};
    bool seen = false;
    for (const OwnedProcess& r : running) seen = seen || r.pid == candidate;
    if (!seen && IsOurs(p)) running.push_back(p);
  }
  return running;
}

void StopDaemons(const LabPaths& paths, const ResolvedNode& sw,
                 const std::vector<std::string>& daemons) {
  std::vector<OwnedProcess> processes;
  for (const std::string& daemon : daemons)
    for (OwnedProcess& p : RunningDaemon(paths, sw, daemon)) processes.push_back(std::move(p));
  if (processes.empty()) return;
  StopProcesses(processes, std::chrono::milliseconds(3000));
  RemoveFrrTempDirs(processes);
  for (const OwnedProcess& p : processes)
    if (IsOurs(p))
      throw std::runtime_error(sw.name + ": " + p.comm + " (pid " + std::to_string(p.pid) +
                               ") did not stop");
}

void RemoveFrrTempDirs(const std::vector<OwnedProcess>& stopped) {
  // Not WaitUntil: destroy runs this after a Ctrl-C too, and a directory left is not an error.
  // A removal is final only once no thread of its daemon runs: a daemon whose leader has exited
  // can still have threads finishing, which write there (and recreated directories removed
  // while they ran: seen on clean-clone CI runs).
  std::vector<std::pair<pid_t, std::string>> left;
  for (const OwnedProcess& p : stopped)
    left.emplace_back(p.pid, "/var/tmp/frr/" + p.comm + "." + std::to_string(p.pid));
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  auto pause = std::chrono::milliseconds(5);
  for (;;) {
    std::erase_if(left, [](const std::pair<pid_t, std::string>& entry) {
      const bool final = !AnyThreadRunning(entry.first);
      std::error_code ec;
      std::filesystem::remove_all(entry.second, ec);
      return final && !std::filesystem::exists(entry.second, ec);
    });
    if (left.empty() || Clock::now() >= deadline) return;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
}

void RemoveFrrTempDirsOfExited(const std::vector<OwnedProcess>& recorded) {
  for (const OwnedProcess& p : recorded) {
    std::error_code ec;
    if (p.pid <= 1 || p.comm.empty() || std::filesystem::exists("/proc/" + std::to_string(p.pid), ec)) continue;
    std::filesystem::remove_all("/var/tmp/frr/" + p.comm + "." + std::to_string(p.pid), ec);
  }
}

std::vector<std::string> StartMissingDaemons(const ResolvedLab& lab, const LabPaths& paths,
                                             const ResolvedNode& sw,
                                             const std::vector<std::string>& daemons,
                                             Clock::time_point deadline) {
  std::vector<std::string> missing;
  for (const std::string& daemon : DaemonsOf(lab, paths, sw))
    if (Contains(daemons, daemon) && RunningDaemon(paths, sw, daemon).empty())
      missing.push_back(daemon);
  if (missing.empty()) return missing;
  const std::string dir = paths.NodeDir(sw.name);
  Fd ns = OpenNetns(sw.netns);
  Fd uts = OpenPath(paths.UtsPath(sw.name));
  Journal journal(paths.journal);
  for (const std::string& daemon : missing) {
    if (daemon != "zebra" && Contains(missing, "zebra"))
      WaitUntil(deadline, [&] {
        // (A container's zebra writes its pid file a moment after podman exec returns.)
        if (!sw.image && RunningDaemon(paths, sw, "zebra").empty())
          throw std::runtime_error(sw.name + ": zebra exited right after its start; see " + dir +
                                   "/zebra.log and zebra.out");
        return ZebraListening(dir);
      }, [&] { return sw.name + ": zebra does not listen on " + dir + "/zserv.api"; });
    try {
      StartDaemon(lab, paths, sw, daemon, ns.get(), uts.get(), journal);
    } catch (const std::exception& e) {
      throw std::runtime_error(sw.name + ": cannot start " + daemon + ": " + e.what());
    }
  }
  if (std::filesystem::exists(dir + "/frr.conf")) {
    // They started with their defaults only: the switch's configuration goes in again.
    WaitUntil(deadline, [&] {
      return std::all_of(missing.begin(), missing.end(),
                         [&](const std::string& d) { return VtyListening(dir, d); });
    }, [&] { return sw.name + ": the restarted daemons do not listen on their vty sockets in " + dir; });
    try {
      EnterFrrConfig(ToolsOf(lab.name, sw), dir, missing);
    } catch (const std::exception& e) {
      throw std::runtime_error(sw.name + ": " + e.what());
    }
  }
  return missing;
}

namespace {

// The sessions of `sw` on `interfaces`: counted, and those not Established named.
struct SwitchSessions {
  CheckStatus status;
  std::vector<std::string> not_established;  // interfaces
};

SwitchSessions AskSwitchBgp(const LabPaths& paths, const ResolvedNode& sw,
                            const std::set<std::string>& interfaces) {
  std::map<std::string, std::string> states;
  try {
    states = BgpPeerStates(paths.NodeDir(sw.name) + "/bgpd.vty");
  } catch (const VtyError&) {
    // bgpd not listening (yet): all its sessions count as missing.
  }
  SwitchSessions out;
  for (const std::string& itf : interfaces) {
    ++out.status.total;
    auto it = states.find(itf);
    const std::string state = it == states.end() ? "no session" : it->second;
    if (state == "Established") {
      ++out.status.done;
      continue;
    }
    out.not_established.push_back(itf);
    if (out.status.missing.size() < 4) out.status.missing.push_back(sw.name + ":" + itf + " " + state);
  }
  return out;
}

// Why one session of `sw` is not up, as its bgpd and zebra see it: bgpd's last reset reason
// and whether zebra has heard a Router Advertisement from the peer (an unnumbered session
// waits for the peer's link-local address from one), e.g. "leaf0: Waiting for Peer IPv6 LLA;
// zebra received 0 RAs, knows no neighbour address".
std::string DiagnoseSession(const LabPaths& paths, const ResolvedNode& sw, const std::string& itf) {
  const std::string dir = paths.NodeDir(sw.name);
  std::string out = itf + ":";
  try {
    const auto doc = nlohmann::json::parse(VtyCommand(dir + "/bgpd.vty", "show bgp neighbors " + itf + " json").output,
                                           nullptr, false);
    if (!doc.is_discarded() && doc.contains(itf)) out += " " + doc[itf].value("lastResetDueTo", std::string("no reset"));
  } catch (const VtyError& e) {
    out += std::string(" bgpd: ") + e.what();
  }
  try {
    // "ND router advertisements sent: 119 rcvd: 125" ... "Neighbor address(s):"
    const std::string text = VtyCommand(dir + "/zebra.vty", "show interface " + itf).output;
    std::string received = "?";
    if (const size_t at = text.find("rcvd: "); at != std::string::npos) {
      const size_t digits = at + 6;
      received = text.substr(digits, text.find_first_not_of("0123456789", digits) - digits);
    }
    const bool knows = text.find("Neighbor address") != std::string::npos;
    out += "; zebra received " + received + " RAs, " + (knows ? "knows the neighbour" : "knows no neighbour address");
  } catch (const VtyError& e) {
    out += std::string("; zebra: ") + e.what();
  }
  return out;
}

}  // namespace

CheckStatus CheckSwitchBgp(const LabPaths& paths, const ResolvedNode& sw,
                           const std::set<std::string>& interfaces) {
  return AskSwitchBgp(paths, sw, interfaces).status;
}

void WaitForSwitchBgp(const LabPaths& paths, const ResolvedNode& sw,
                      const std::set<std::string>& interfaces, const std::vector<std::string>& watch,
                      Clock::time_point deadline) {
  // A session still down this long after the start gets its peer asked for a Router
  // Advertisement (see router_solicitation.h), and again at this interval.
  constexpr std::chrono::seconds kSolicitEvery{5};
  const auto start = Clock::now();
  auto next_solicit = start + kSolicitEvery;
  int solicitations = 0;
  SwitchSessions sessions;
  WaitUntil(deadline, [&] {
    for (const std::string& daemon : watch)
      if (RunningDaemon(paths, sw, daemon).empty())
        throw std::runtime_error(sw.name + ": " + daemon + " exited after its start; see " +
                                 paths.NodeDir(sw.name) + "/" + daemon + ".log");
    sessions = AskSwitchBgp(paths, sw, interfaces);
    if (sessions.status.ok()) return true;
    if (Clock::now() >= next_solicit) {
      solicitations += SendRouterSolicitations(sw.netns, sessions.not_established);
      next_solicit = Clock::now() + kSolicitEvery;
    }
    return false;
  }, [&] {
    const auto waited = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start);
    std::string why;
    for (size_t i = 0; i < sessions.not_established.size() && i < 2; ++i)
      why += (why.empty() ? "" : " | ") + DiagnoseSession(paths, sw, sessions.not_established[i]);
    return sessions.status.Summary(sw.name + ": BGP sessions Established after " + std::to_string(waited.count()) +
                                   " s:") +
           "; " + why + "; " + std::to_string(solicitations) + " router solicitation(s) sent";
  });
}

}  // namespace mrclab::emulator::netns
