// Destroy: the inverse of Deploy, driven by the lab's journal (see lab_state.h).
#include <filesystem>
#include <fstream>
#include <set>

#include "emulator/errors.h"
#include "emulator/netns/container_switch.h"
#include "emulator/netns/deploy.h"
#include "emulator/netns/drill_lock.h"
#include "emulator/netns/frr_daemons.h"
#include "emulator/netns/host_sysctls.h"
#include "emulator/netns/lab_state.h"
#include "emulator/netns/namespaces.h"
#include "emulator/netns/processes.h"

namespace mrclab::emulator::netns {
namespace {

namespace fs = std::filesystem;

// Daemons write their own pid files; they cover a deployer killed between fork() and its
// journal line.
std::vector<OwnedProcess> PidFileProcesses(const LabPaths& paths, const std::string& lab_name) {
  std::vector<OwnedProcess> out;
  std::error_code ec;
  for (const auto& node_dir : fs::directory_iterator(paths.root + "/nodes", ec)) {
    for (const auto& file : fs::directory_iterator(node_dir.path(), ec)) {
      if (file.path().extension() != ".pid") continue;
      std::ifstream in(file.path());
      pid_t pid = 0;
      if (in >> pid)
        out.push_back({pid, file.path().stem(),
                       NetnsPath(lab_name + "-" + node_dir.path().filename().string())});
    }
  }
  return out;
}

// A process no journal line names, as destroy stops it: by PID and its current command name.
OwnedProcess Unjournaled(pid_t pid) {
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return {pid, name, ""};
}

// Processes inside the lab's network namespaces that no journal line, pid file or command line
// names: a child the deployer had forked, and put in a namespace, but not yet exec'd when it was
// SIGKILLed (the program it becomes would otherwise outlive destroy's scans).
std::vector<OwnedProcess> ProcessesInNamespaces(const std::vector<JournalEntry>& journal) {
  std::set<unsigned long> inodes;
  for (const JournalEntry& e : journal)
    if (e.kind == "netns")
      if (unsigned long inode = NamespaceInode(NetnsPath(e.netns))) inodes.insert(inode);
  std::vector<OwnedProcess> out;
  for (pid_t pid : ProcessesInNetns(inodes)) out.push_back(Unjournaled(pid));
  return out;
}

}  // namespace

DestroyReport Destroy(const std::string& lab_name) {
  const auto start = std::chrono::steady_clock::now();
  LabPaths paths(lab_name);
  if (!fs::exists(paths.root)) throw InputError("lab '" + lab_name + "' is not deployed");
  DestroyReport report;
  const std::vector<JournalEntry> journal = Journal::Read(paths.journal);

  // Container switches first: removing one ends its daemons with it.
  report.containers = RemoveSwitchContainers(lab_name, journal, report.problems);

  std::vector<OwnedProcess> processes;
  std::set<pid_t> seen;
  for (const JournalEntry& e : journal)
    if (e.kind == "process" && seen.insert(e.pid).second)
      processes.push_back({e.pid, e.what, NetnsPath(e.netns)});
  for (const OwnedProcess& p : PidFileProcesses(paths, lab_name))
    if (seen.insert(p.pid).second) processes.push_back(p);
  for (pid_t pid : ProcessesMentioning(paths.root + "/nodes/"))
    if (seen.insert(pid).second) processes.push_back(Unjournaled(pid));
  std::vector<OwnedProcess> alive;
  for (const OwnedProcess& p : processes)
    if (IsOurs(p)) alive.push_back(p);
  report.processes = static_cast<int>(alive.size());
  report.killed = StopProcesses(alive, std::chrono::milliseconds(3000));
  // Until none is left in the lab's namespaces (one that was between fork and exec shows up there).
  std::vector<OwnedProcess> left;
  for (int round = 0; round < 5 && !(left = ProcessesInNamespaces(journal)).empty(); ++round) {
    report.processes += static_cast<int>(left.size());
    report.killed += StopProcesses(left, std::chrono::milliseconds(1000));
    alive.insert(alive.end(), left.begin(), left.end());
  }
  RemoveFrrTempDirs(alive);
  RemoveFrrTempDirsOfExited(processes);

  // Namespaces last: deleting one removes its veths, qdiscs and nftables tables with it.
  for (const JournalEntry& e : journal) {
    if (e.kind != "netns") continue;
    const std::string node = e.netns.substr(lab_name.size() + 1);
    std::string why;
    if (DeleteNodeNamespaces(e.netns, paths.UtsPath(node), &why))
      ++report.namespaces;
    else
      report.problems.push_back(why);
  }
  std::error_code ec;
  fs::remove_all(paths.root, ec);
  if (ec) report.problems.push_back("remove " + paths.root + ": " + ec.message());
  DrillLock::RemoveIfStale(lab_name);  // a killed drill's
  RestoreHostLimitsIfNoLab();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace mrclab::emulator::netns
